import Mesh
import Nostr
import SeededRandom

/// Runs the Burrow mesh vectors (`vectors/mesh/*.json`, `Docs/protocols/mesh.md` section 14) through `Mesh`.
/// The file's `file` member picks the runner; every entry of `cases` is one case, and an entry
/// that cannot be parsed counts as failed. Public counts: cpace 6, forwarding 10, fragments 8,
/// invite 2, packets 9, payloads 14, reject 41.
public enum MeshConformance {
    public static let format = "burrow-mesh-v1-vectors"

    public static func run(json: [UInt8]) -> ConformanceReport {
        var report = ConformanceReport()
        guard let root = try? JSONValue.parse(json), root["format"]?.stringValue == format,
              let file = root["file"]?.stringValue, let cases = root["cases"]?.arrayValue
        else {
            report.record("mesh file", .failure(CaseFailure("not a \(format) file")))
            return report
        }
        let body: (JSONValue) throws -> Void
        switch file {
        case "packets.json": body = packetCase
        case "fragments.json": body = fragmentCase
        case "reject.json": body = rejectCase
        case "payloads.json": body = payloadCase
        case "forwarding.json": body = forwardingCase
        case "cpace.json": body = cpaceCase
        case "invite.json": body = inviteCase
        default:
            report.record("mesh file", .failure(CaseFailure("unknown vector file \(file)")))
            return report
        }
        for (i, entry) in cases.enumerated() {
            let name = entry["name"]?.stringValue ?? "#\(i)"
            report.record("\(file) \(name)", Result { try body(entry) })
        }
        return report
    }

    // MARK: Field access

    static func string(_ entry: JSONValue?, _ key: String) throws -> String {
        guard let value = entry?[key]?.stringValue else { throw CaseFailure("field \(key) missing or not a string") }
        return value
    }

    static func hex(_ entry: JSONValue?, _ key: String, length: Int? = nil) throws -> [UInt8] {
        guard let bytes = try? Hex.decode(string(entry, key), length: length) else {
            throw CaseFailure("field \(key) is not hex of the expected length")
        }
        return bytes
    }

    static func hexValue(_ value: JSONValue?, _ what: String) throws -> [UInt8] {
        guard let s = value?.stringValue, let bytes = try? Hex.decode(s) else { throw CaseFailure("\(what) is not hex") }
        return bytes
    }

    static func integer(_ entry: JSONValue?, _ key: String) throws -> Int64 {
        guard let value = entry?[key]?.integerValue else { throw CaseFailure("field \(key) missing or not an integer") }
        return value
    }

    static func time(_ entry: JSONValue?, _ key: String) throws -> UInt64 {
        let value = try integer(entry, key)
        guard value >= 0 else { throw CaseFailure("field \(key) is negative") }
        return UInt64(value)
    }

    static func meshID(_ value: JSONValue?, _ what: String) throws -> MeshID {
        guard let id = MeshID(bytes: try hexValue(value, what)) else { throw CaseFailure("\(what) is not 8 bytes") }
        return id
    }

    static func optionalMeshID(_ entry: JSONValue, _ key: String) throws -> MeshID? {
        guard let value = entry[key], value != .null else { return nil }
        return try meshID(value, key)
    }

    static func packetType(_ entry: JSONValue, _ key: String = "type") throws -> PacketType {
        guard let raw = entry[key]?.integerValue, let byte = UInt8(exactly: raw), let type = PacketType(rawValue: byte) else {
            throw CaseFailure("field \(key) is not a packet type")
        }
        return type
    }

    static func expect(_ condition: Bool, _ what: @autoclosure () -> String) throws {
        guard condition else { throw CaseFailure(what()) }
    }

    // MARK: packets.json

    static func packetCase(_ entry: JSONValue) throws {
        let key = try MeshKey(seed: hex(entry, "mesh_seed", length: 32))
        try expect(key.publicKey == (try hex(entry, "mesh_key", length: 32)), "mesh key differs")
        try expect(key.id == (try meshID(entry["sender_id"], "sender_id")), "sender id differs")
        let type = try packetType(entry)
        // The vectors spell the spec's names with underscores (nostr_event for nostr-event).
        try expect(String(type.description.map { $0 == "-" ? "_" : $0 }) == (try string(entry, "type_name")), "type name differs")
        guard let ttl = UInt8(exactly: try integer(entry, "ttl")) else { throw CaseFailure("ttl out of range") }
        let packet = try Packet.sign(
            type: type, ttl: ttl, timestamp: time(entry, "timestamp"), recipient: optionalMeshID(entry, "recipient"),
            payload: hex(entry, "payload"), key: key
        )
        try expect(packet.signedBytes == (try hex(entry, "signed_bytes")), "signed bytes differ")
        try expect(packet.id.bytes == (try hex(entry, "packet_id", length: 32)), "packet id differs")
        let signature = try hex(entry, "signature", length: 64)
        let encoded = try hex(entry, "encoded")
        // A randomising Ed25519 signer would differ here and still verify; ours is RFC 8032's.
        try expect(packet.signature == signature, "signature differs")
        try expect(packet.encoded == encoded, "encoding differs")

        let decoded = try UnverifiedPacket.decode(encoded)
        try decoded.checkFreshness(now: time(entry, "now_ms"))
        let verified = try decoded.verified()
        try expect(verified.id == packet.id && verified.type == type && verified.ttl == ttl
                   && verified.recipient == packet.recipient && verified.payload == packet.payload
                   && verified.timestamp == packet.timestamp && verified.sender == key.id, "decoded fields differ")
    }

    // MARK: fragments.json

    static func fragmentCase(_ entry: JSONValue) throws {
        let mtu = Int(try integer(entry, "mtu"))
        let bytes = try hex(entry, "packet")
        let packet = try UnverifiedPacket.decode(bytes).verified()
        try expect(packet.id.bytes == (try hex(entry, "packet_id", length: 32)), "packet id differs")
        guard let expected = entry["frames"]?.arrayValue else { throw CaseFailure("frames missing") }
        let frames = FragmentFrame.frames(for: packet, mtu: mtu)
        try expect(frames.count == Int(try integer(entry, "frame_count")), "frame count \(frames.count)")
        try expect(frames == (try expected.map { try hexValue($0, "frame") }), "frames differ")
        try expect(frames.allSatisfy { $0.count <= mtu }, "a frame exceeds the MTU")
        guard frames.count > 1 else {
            try expect(frames == [bytes], "a packet within the MTU is its own frame")
            return
        }
        // Any order reassembles: in order, reversed, and interleaved.
        let orders = [Array(frames.indices), Array(frames.indices.reversed()),
                      frames.indices.filter { $0 % 2 == 1 } + frames.indices.filter { $0 % 2 == 0 }]
        for order in orders {
            var reassembler = Reassembler()
            var completed: UnverifiedPacket?
            for (n, i) in order.enumerated() {
                let result = try reassembler.add(FragmentFrame.decode(frames[i]), now: 1_000)
                try expect((result == nil) == (n < order.count - 1), "completion at the wrong fragment")
                completed = result ?? completed
            }
            try expect(completed?.id == packet.id, "reassembled packet differs")
            try expect(reassembler.count == 0, "a completed assembly is still held")
        }
    }

    // MARK: reject.json

    static func rejectCase(_ entry: JSONValue) throws {
        let now = try time(entry, "now_ms")
        guard let frames = entry["frames"]?.arrayValue, let expect = entry["expect"] else { throw CaseFailure("frames or expect missing") }
        let expectedError = expect["error"]?.stringValue
        let at = expect["at"]?.integerValue.map(Int.init)
        var router = try freshReceiver(now: now)
        let link = LinkID(1)
        router.linkUp(link, mtu: MeshProtocol.maxFrame, now: now)
        for (i, value) in frames.enumerated() {
            var actions: [MeshAction] = []
            let refusal = router.receive(try hexValue(value, "frame \(i)"), on: link, now: now, actions: &actions)
            if let expectedError, i == at {
                try Self.expect(refusal?.rawValue == expectedError, "frame \(i): \(refusal?.rawValue ?? "accepted"), expected \(expectedError)")
                return
            }
            try Self.expect(refusal == nil, "frame \(i) refused with \(refusal?.rawValue ?? "")")
        }
        try Self.expect(expectedError == nil, "the expected refusal never came")
        if let delivered = expect["delivered"]?.integerValue {
            try Self.expect(router.counters.delivered == Int(delivered), "delivered \(router.counters.delivered), expected \(delivered)")
        }
    }

    /// A receiver with a fixed identity that sends nothing on its own.
    static func freshReceiver(now: UInt64) throws -> MeshRouter<SplitMix64> {
        var configuration = MeshConfiguration()
        configuration.announces = false
        let key = try MeshKey(seed: [UInt8](repeating: 0x42, count: 32))
        return MeshRouter(identity: MeshIdentity(key: key, now: now), configuration: configuration, now: now,
                          random: SplitMix64(seed: 1))
    }

    // MARK: payloads.json

    static func payloadCase(_ entry: JSONValue) throws {
        let payload = try hex(entry, "payload")
        let fields = entry["fields"]
        switch try string(entry, "kind") {
        case "announce":
            let nickname = fields?["nickname"]?.stringValue
            guard let caps = fields?["caps"]?.integerValue, let raw = UInt16(exactly: caps),
                  let list = fields?["neighbours"]?.arrayValue
            else { throw CaseFailure("announce fields missing") }
            let announce = Announce(nickname: nickname, capabilities: Capabilities(rawValue: raw),
                                    neighbours: try list.map { try meshID($0, "neighbour") })
            try expect(try Announce.decode(payload) == announce, "decoded announce differs")
            try expect(try announce.encoded() == knownTLVs(payload), "encoded announce differs")
        case "sync_request":
            guard let want = fields?["want"]?.arrayValue, let max = fields?["max"]?.integerValue, let maxByte = UInt8(exactly: max)
            else { throw CaseFailure("sync request fields missing") }
            let request: SyncRequest = want.isEmpty
                ? .offer(since: try time(fields, "since"), before: try time(fields, "before"), max: maxByte)
                : .want(try want.map { try meshID($0, "want") })
            try expect(try request.encoded() == payload, "encoded sync request differs")
            try expect(try SyncRequest.decode(payload) == request, "decoded sync request differs")
        case "sync_offer":
            guard let more = fields?["more"]?.boolValue, let list = fields?["entries"]?.arrayValue else {
                throw CaseFailure("sync offer fields missing")
            }
            let entries = try list.map { item in
                SyncEntry(id: try meshID(item["id"], "id"), type: try packetType(item), recipient: try meshID(item["recipient"], "recipient"))
            }
            let offer = SyncOffer(oldest: try time(fields, "oldest"), more: more, entries: entries)
            try expect(try offer.encoded() == payload, "encoded sync offer differs")
            try expect(try SyncOffer.decode(payload) == offer, "decoded sync offer differs")
        case "dm_tag":
            let tag = DMTag.tag(identityKey: try hex(fields, "identity_key", length: 32), timestamp: try time(fields, "timestamp"))
            try expect(tag.bytes == payload, "dm tag differs")
        case "mesh_id":
            try expect(MeshID(meshKey: try hex(fields, "mesh_key", length: 32)).bytes == payload, "mesh id differs")
        case let other:
            throw CaseFailure("unknown payload kind \(other)")
        }
    }

    /// An announce payload without its unknown TLVs (they are skipped, so not re-encoded).
    static func knownTLVs(_ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], i = 0
        while i + 1 < payload.count {
            let end = min(payload.count, i + 2 + Int(payload[i + 1]))
            if (1...3).contains(payload[i]) { out += payload[i..<end] }
            i = end
        }
        return out
    }

    // MARK: forwarding.json

    static func forwardingCase(_ entry: JSONValue) throws {
        let me = try meshID(entry["my_id"], "my_id")
        let type = try packetType(entry)
        guard let ttl = UInt8(exactly: try integer(entry, "ttl")), let list = entry["links"]?.arrayValue,
              let expected = entry["expect"]?.arrayValue?.compactMap(\.stringValue)
        else { throw CaseFailure("fields missing") }
        var names: [String: LinkID] = [:]
        var links: [FloodLink] = []
        for (i, item) in list.enumerated() {
            let name = try string(item, "link")
            let link = LinkID(UInt32(i))
            names[name] = link
            let peer = try optionalMeshID(item, "peer")
            var neighbours: [MeshID: [MeshID]] = [:]
            if let peer, let ids = item["neighbours"]?.arrayValue { neighbours[peer] = try ids.map { try meshID($0, "neighbour") } }
            links.append(FloodLink(link: link, peers: peer.map { [$0] } ?? [], neighbours: neighbours))
        }
        func link(_ name: String?) throws -> LinkID? {
            guard let name else { return nil }
            guard let link = names[name] else { throw CaseFailure("unknown link \(name)") }
            return link
        }
        let recipient = try optionalMeshID(entry, "recipient")
        let ingress = try link(entry["ingress"]?.stringValue)
        let duplicates = try (entry["duplicates_from"]?.arrayValue ?? []).compactMap { try link($0.stringValue) }
        let chosen = FloodingRule.decide(
            type: type, ttl: ttl, recipient: recipient, addressedToMe: recipient == me, links: links,
            ingress: ingress, duplicatesFrom: duplicates
        )
        let byLink = Dictionary(uniqueKeysWithValues: names.map { ($0.value, $0.key) })
        let got = chosen.compactMap { byLink[$0] }.sorted()
        try expect(got == expected.sorted(), "sent on \(got), expected \(expected)")
    }

    // MARK: cpace.json

    static func cpaceCase(_ entry: JSONValue) throws {
        if entry["generator"] != nil {
            let generator = CPace.generator(
                code: try string(entry, "code"), inviteID: try hex(entry, "invite_id", length: 16),
                nonce: try hex(entry, "nonce", length: 16), inviter: try meshID(entry["inviter_id"], "inviter_id"),
                joiner: try meshID(entry["joiner_id"], "joiner_id")
            )
            try expect(generator == (try hex(entry, "generator", length: 32)), "generator differs")
            return
        }
        let scalar = try CPace.Scalar(bytes: hex(entry, "scalar", length: 32))
        let share = try hex(entry, "peer_share")
        if entry["expect"]?.stringValue == "bad_point" {
            do {
                _ = try CPace.sharedPoint(scalar, peerShare: share)
                throw CaseFailure("share accepted, expected bad_point")
            } catch let error as MeshError {
                try expect(error == .badPoint, "refused with \(error), expected bad_point")
            }
        } else {
            try expect(try CPace.sharedPoint(scalar, peerShare: share) == (try hex(entry, "shared", length: 32)), "shared point differs")
        }
    }
}
