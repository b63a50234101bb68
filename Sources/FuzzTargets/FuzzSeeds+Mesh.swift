import Mesh
import Nostr
import SeededRandom

extension FuzzSeeds {
    /// Signed packets of every type under a fixed mesh key, made by the code itself.
    static func meshPackets() throws -> [(name: String, packet: Packet)] {
        let now: UInt64 = 1_767_225_600_000
        let key = try MeshKey(seed: [UInt8](repeating: 0x11, count: 32))
        let peer = MeshID(0x0102_0304_0506_0708)
        var rng = SplitMix64(seed: 3)
        let nostr = Keys.generate(using: &rng)
        let event = try Event.sign(kind: 1059, content: "sealed", tags: [["p", nostr.publicKey.hex]], createdAt: 1_767_225_600,
                                   keys: nostr, rng: &rng)
        let beacon = try InviteBeacon.sign(
            inviteID: [UInt8](repeating: 7, count: 16), expiresAt: now + 300_000, attemptsLeft: 5, name: "Family",
            meshKey: key.publicKey, keys: nostr, auxRand: [UInt8](repeating: 0, count: 32)
        )
        let join = JoinMessage(inviteID: [UInt8](repeating: 7, count: 16), nonce: [UInt8](repeating: 9, count: 16),
                               body: .hello(yb: [UInt8](repeating: 0x22, count: 32)))
        let offer = SyncOffer(oldest: now - 1000, more: true,
                              entries: [SyncEntry(id: MeshID(42), type: .dm, recipient: peer), SyncEntry(id: MeshID(43), type: .nostrEvent, recipient: .broadcast)])
        let items: [(String, PacketType, MeshID?, [UInt8])] = [
            ("announce", .announce, nil, try Announce(nickname: "Grandma Jo", capabilities: [.relay, .store, .dm], neighbours: [peer]).encoded()),
            ("leave", .leave, nil, []),
            ("dm", .dm, peer, Array("a pigeon frame".utf8)),
            ("nostr-event", .nostrEvent, nil, event.jsonBytes),
            ("sync-request-offer", .syncRequest, peer, try SyncRequest.offer(since: now - 86_400_000, before: 0, max: 64).encoded()),
            ("sync-request-want", .syncRequest, peer, try SyncRequest.want([MeshID(42), MeshID(43)]).encoded()),
            ("sync-offer", .syncOffer, peer, try offer.encoded()),
            ("beacon", .inviteBeacon, nil, beacon.payload),
            ("join-hello", .joinHello, peer, join.payload),
        ]
        return try items.map { name, type, recipient, payload in
            (name, try Packet.sign(type: type, timestamp: now, recipient: recipient, payload: payload, key: key))
        }
    }

    static func meshPacket() throws -> [Seed] {
        try meshPackets().map { ($0.name, $0.packet.encoded) }
    }

    static func meshFragment() throws -> [Seed] {
        var seeds: [Seed] = []
        for (name, packet) in try meshPackets() where packet.encodedLength > 40 {
            for mtu in [20, 64, 185] where packet.encodedLength > mtu {
                let frames = FragmentFrame.frames(for: packet, mtu: mtu)
                seeds.append(("\(name)-mtu\(mtu)", MeshFragmentTarget.input(frames)))
                seeds.append(("\(name)-mtu\(mtu)-reversed", MeshFragmentTarget.input(frames.reversed())))
            }
        }
        return seeds
    }
}
