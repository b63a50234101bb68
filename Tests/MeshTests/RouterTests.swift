@testable import Mesh
import Nostr
import TestSupport
import XCTest

final class RouterTests: XCTestCase {
    typealias Router = MeshRouter<SplitMix64>
    let now = MeshFixture.now

    func frames(_ actions: [MeshAction]) -> [(link: LinkID, frame: [UInt8])] {
        actions.compactMap { if case .transmit(let link, let frame) = $0 { return (link, frame) } else { return nil } }
    }

    func deliveries(_ actions: [MeshAction]) -> [MeshDelivery] {
        actions.compactMap { if case .deliver(let d) = $0 { return d } else { return nil } }
    }

    func testDMToOwnTagIsDeliveredAndNotForwarded() throws {
        var router = MeshFixture.receiver()
        router.linkUp(LinkID(2), mtu: 185, now: now)
        let identityKey = [UInt8](repeating: 0x33, count: 32)
        router.dmIdentityKeys = [identityKey]
        let packet = try MeshFixture.dm(to: DMTag.tag(identityKey: identityKey, timestamp: now))
        let actions = router.receive(packet.encoded, on: LinkID(1), now: now)
        let delivered = deliveries(actions)
        XCTAssertEqual(delivered.count, 1)
        guard case .dm(let frame)? = delivered.first?.content else { return XCTFail("not a DM") }
        XCTAssertEqual(frame, Array("pigeon frame".utf8))
        XCTAssertTrue(frames(router.tick(now: now + 100)).isEmpty, "a DM to this node is not forwarded")
        XCTAssertEqual(router.store.count, 0, "a DM to this node is not stored for others")
    }

    func testForwardAfterJitterWithTTLMinusOneAndSameID() throws {
        var router = MeshFixture.receiver()
        router.linkUp(LinkID(2), mtu: 509, now: now)
        router.linkUp(LinkID(3), mtu: 40, now: now)
        let packet = try MeshFixture.dm()
        XCTAssertTrue(frames(router.receive(packet.encoded, on: LinkID(1), now: now)).isEmpty, "jitter first")
        XCTAssertTrue(frames(router.tick(now: now + 9)).isEmpty, "directed jitter is at least 10 ms")
        let out = frames(router.tick(now: now + 40))
        let onTwo = out.filter { $0.link == LinkID(2) }.map(\.frame)
        XCTAssertEqual(onTwo, [packet.encoded(ttl: 6)])
        let onThree = out.filter { $0.link == LinkID(3) }.map(\.frame)
        XCTAssertEqual(onThree.count, (packet.encodedLength + 24) / 25, "fragmented for the 40-byte link")
        XCTAssertTrue(onThree.allSatisfy { $0.count <= 40 })
        XCTAssertFalse(out.contains { $0.link == LinkID(1) }, "never back where it came from")
        // The forwarded packet keeps its id and signature.
        let forwarded = try UnverifiedPacket.decode(onTwo[0]).verified()
        XCTAssertEqual(forwarded.id, packet.id)
        XCTAssertEqual(forwarded.ttl, 6)
        // Stored with the TTL it is forwarded with.
        XCTAssertEqual(router.store.packet(id8: packet.id.id8)?.ttl, 6)
        XCTAssertEqual(router.counters.forwarded, 1)
    }

    func testDuplicateDuringJitterCoversThatNeighbour() throws {
        var router = MeshFixture.receiver()
        router.linkUp(LinkID(2), mtu: 509, now: now)
        let packet = try MeshFixture.dm()
        _ = router.receive(packet.encoded, on: LinkID(1), now: now)
        XCTAssertEqual(router.receive(packet.encoded(ttl: 6), on: LinkID(2), now: now + 1, actions: &sink), .duplicate)
        XCTAssertTrue(frames(router.tick(now: now + 100)).isEmpty, "both links already have it")
    }

    var sink: [MeshAction] = []

    func testLinkLocalAndTTLOneAreNeverForwarded() throws {
        var router = MeshFixture.receiver()
        router.linkUp(LinkID(2), mtu: 509, now: now)
        _ = router.receive(try MeshFixture.dm(ttl: 1).encoded, on: LinkID(1), now: now)
        let announce = try Packet.sign(type: .announce, timestamp: now, recipient: nil,
                                       payload: Announce(capabilities: [.relay, .dm], neighbours: []).encoded(), key: MeshFixture.key(5))
        _ = router.receive(announce.encoded, on: LinkID(1), now: now)
        XCTAssertTrue(frames(router.tick(now: now + 100)).isEmpty)
        XCTAssertEqual(router.store.count, 0, "a packet received with TTL 1 is not stored")
        XCTAssertEqual(router.linkStatus.first?.peers.first?.id, MeshFixture.key(5).id, "the announce named the link's peer")
    }

    func testAnnounceRateLimitAndLinkBudget() throws {
        var router = MeshFixture.receiver()
        let key = MeshFixture.key(5)
        let payload = try Announce(capabilities: [.dm], neighbours: []).encoded()
        let first = try Packet.sign(type: .announce, timestamp: now, recipient: nil, payload: payload, key: key)
        let second = try Packet.sign(type: .announce, timestamp: now + 999, recipient: nil, payload: payload, key: key)
        let third = try Packet.sign(type: .announce, timestamp: now + 1000, recipient: nil, payload: payload, key: key)
        XCTAssertNil(router.receive(first.encoded, on: LinkID(1), now: now, actions: &sink))
        XCTAssertEqual(router.receive(second.encoded, on: LinkID(1), now: now, actions: &sink), .rateLimited)
        XCTAssertNil(router.receive(third.encoded, on: LinkID(1), now: now, actions: &sink))

        // 200 frames of burst, then 100 per second.
        var fresh = MeshFixture.receiver()
        var refusals: [MeshError?] = []
        for _ in 0..<201 { refusals.append(fresh.receive([1], on: LinkID(1), now: now, actions: &sink)) }
        XCTAssertEqual(refusals.prefix(200).filter { $0 == .truncated }.count, 200)
        XCTAssertEqual(refusals.last, .rateLimited)
        XCTAssertEqual(fresh.receive([1], on: LinkID(1), now: now + 10, actions: &sink), .truncated, "one frame per 10 ms refills")
    }

    func testPerOriginatorForwardingBudget() throws {
        var router = MeshFixture.receiver()
        router.linkUp(LinkID(2), mtu: 509, now: now)
        let key = MeshFixture.key(8)
        var forwarded = 0, stored = 0
        for i in 0..<40 {
            let packet = try MeshFixture.dm(from: key, payload: Array("frame \(i)".utf8))
            _ = router.receive(packet.encoded, on: LinkID(1), now: now)
            forwarded += frames(router.tick(now: now + 100)).count
            stored = router.store.count
        }
        XCTAssertEqual(forwarded, 30, "burst 30, then nothing within the same instant")
        XCTAssertEqual(stored, 32, "all stored (32 per DM recipient), forwarded or not")
    }

    func testSeenCacheEvictsTheSoonestExpiring() {
        var cache = SeenCache(capacity: 3)
        func id(_ b: UInt8) -> PacketID { PacketID(digest: [UInt8](repeating: b, count: 32)) }
        cache.insert(id(1), expiresAt: now + 300, now: now)
        cache.insert(id(2), expiresAt: now + 100, now: now)
        cache.insert(id(3), expiresAt: now + 200, now: now)
        cache.insert(id(4), expiresAt: now + 400, now: now)
        XCTAssertEqual(cache.count, 3)
        XCTAssertFalse(cache.contains(id(2), now: now))
        XCTAssertTrue(cache.contains(id(1), now: now) && cache.contains(id(3), now: now) && cache.contains(id(4), now: now))
        XCTAssertTrue(cache.contains(id8: id(3).id8))
        XCTAssertFalse(cache.contains(id(3), now: now + 200), "expired at its timestamp plus its class's bound")
        cache.purge(now: now + 350)
        XCTAssertEqual(cache.count, 1)
        XCTAssertFalse(cache.contains(id8: id(3).id8))
    }

    /// Junk from many fresh keys, fragments that never complete and random bytes: every
    /// structure stays within its bound while time runs for a minute.
    func testMemoryBoundedUnderJunkFloods() throws {
        var configuration = MeshConfiguration()
        configuration.announces = false
        configuration.seenCapacity = 512
        var router = Router(identity: MeshIdentity(key: MeshFixture.key(0x42), now: now), configuration: configuration, now: now,
                            random: SplitMix64(seed: 5))
        for l in 1...4 { router.linkUp(LinkID(UInt32(l)), mtu: 185, now: now) }
        var rng = SplitMix64(seed: 77)
        var t = now
        for i in 0..<1500 {
            t += 10
            let link = LinkID(UInt32(1 + i % 4))
            switch i % 3 {
            case 0:
                // A valid DM from a brand-new key (ids cost nothing to mint).
                let key = MeshKey.generate(using: &rng)
                let packet = try MeshFixture.dm(from: key, to: MeshID(rng.next() | 1), at: t,
                                                payload: (0..<Int(rng.next() % 300 + 1)).map { _ in UInt8.random(in: 0...255, using: &rng) })
                _ = router.receive(packet.encoded, on: link, now: t)
            case 1:
                // A first fragment of a large packet that will never complete.
                let fragment = FragmentFrame(fragmentID: rng.next(), index: 0, total: 100, originalType: .nostrEvent,
                                             chunk: [UInt8](repeating: 0xAB, count: 170))
                _ = router.receive(fragment.encoded, on: link, now: t)
            default:
                _ = router.receive((0..<Int(rng.next() % 200)).map { _ in UInt8.random(in: 0...255, using: &rng) }, on: link, now: t)
            }
            _ = router.tick(now: t)
            let f = router.footprint
            XCTAssertLessThanOrEqual(f.seen, 512)
            XCTAssertLessThanOrEqual(f.pending, MeshConfiguration.maxPendingForwards)
            XCTAssertLessThanOrEqual(f.assemblies, 4 * 4)
            XCTAssertLessThanOrEqual(f.assemblyBytes, 4 * Reassembler.maxBufferedBytes)
            XCTAssertLessThanOrEqual(f.store, PacketStore.totalBytes)
            XCTAssertLessThanOrEqual(f.senders, MeshConfiguration.maxSenderRecords + 1)
            if f.seen > 512 || f.assemblies > 16 { break }
        }
        XCTAssertGreaterThan(router.counters.dropped["reassembly_too_large", default: 0] + router.counters.dropped["truncated", default: 0], 0)
        XCTAssertLessThanOrEqual(router.store.count, PacketStore.perRecipientPackets * 500)
    }

    func testStoreQuotasAndOfferOrder() throws {
        var store = PacketStore()
        let recipient = MeshID(99)
        for i in 0..<40 {
            store.insert(try MeshFixture.dm(to: recipient, at: now + UInt64(i), payload: [UInt8(i)]), now: now)
        }
        XCTAssertEqual(store.count, PacketStore.perRecipientPackets)
        let page = store.offer(since: 0, before: 0, max: 5)
        XCTAssertEqual(page.entries.map(\.timestamp), (35...39).reversed().map { now + UInt64($0) })
        XCTAssertTrue(page.more)
        XCTAssertEqual(store.offer(since: now, before: now + 8, max: 64).entries.count, 0, "the oldest 8 were dropped")
        XCTAssertEqual(store.offer(since: now, before: now + 9, max: 64).entries.count, 1)
        store.expire(now: now + PacketStore.lifetime + 40)
        XCTAssertEqual(store.count, 0)
    }

    func testSyncRequestOfferWantExchange() throws {
        // B stores a DM for C; C (a fresh neighbour) learns of it by offer and fetches it.
        var b = MeshFixture.receiver(0x0B)
        var c = MeshFixture.receiver(0x0C)
        let cKey = [UInt8](repeating: 0xCC, count: 32)
        c.dmIdentityKeys = [cKey]
        let dm = try MeshFixture.dm(to: DMTag.tag(identityKey: cKey, timestamp: now))
        b.linkUp(LinkID(2), mtu: 185, now: now)
        _ = b.receive(dm.encoded, on: LinkID(2), now: now)
        XCTAssertEqual(b.store.count, 1)
        // C hears B's announce (store), asks for an offer within 1 s.
        let announce = try Packet.sign(type: .announce, timestamp: now, recipient: nil,
                                       payload: Announce(capabilities: [.relay, .store, .dm], neighbours: []).encoded(), key: b.identity.current)
        _ = c.receive(announce.encoded, on: LinkID(1), now: now)
        XCTAssertEqual(c.linkStatus.first?.peers.first?.capabilities, [.relay, .store, .dm])
        XCTAssertNotNil(c.nextDeadline)
        let request = frames(c.tick(now: now + 1000))
        XCTAssertEqual(request.count, 1)
        guard request.count == 1 else { return }
        // B needs to know C as the link's peer only to address its offer; it answers the sender.
        let offer = frames(b.receive(request[0].frame, on: LinkID(1), now: now + 1001))
        XCTAssertEqual(offer.count, 1)
        guard offer.count == 1 else { return }
        let offerPacket = try UnverifiedPacket.decode(offer[0].frame).verified()
        XCTAssertEqual(offerPacket.type, .syncOffer)
        XCTAssertEqual(offerPacket.recipient, c.identity.current.id)
        let want = frames(c.receive(offer[0].frame, on: LinkID(1), now: now + 1002))
        XCTAssertEqual(want.count, 1)
        guard want.count == 1 else { return }
        guard case .want(let ids)? = try? SyncRequest.decode(UnverifiedPacket.decode(want[0].frame).payload) else { return XCTFail("not a want") }
        XCTAssertEqual(ids, [dm.id.id8])
        let resent = frames(b.receive(want[0].frame, on: LinkID(1), now: now + 1003))
        XCTAssertEqual(resent.map(\.frame), [dm.encoded(ttl: 6)])
        guard resent.count == 1 else { return }
        let delivered = deliveries(c.receive(resent[0].frame, on: LinkID(1), now: now + 1004))
        XCTAssertEqual(delivered.map(\.packet.id), [dm.id])
    }
}


extension RouterTests {
    /// A want (8.5) asks for up to 32 stored packets: ≈ 2 MiB of answers for a 400-byte request.
    /// Wants are answered at most `MeshConfiguration.wantsPerLinkPerMinute` times a minute per
    /// link and `wantsPerMinute` times in all; the rest are refused as `rate_limited`.
    func testSyncWantsAreRateLimitedPerLinkAndOverall() throws {
        var b = MeshFixture.receiver(0x0B)
        let stored = try MeshFixture.dm()
        b.linkUp(LinkID(2), mtu: 509, now: now)
        _ = b.receive(stored.encoded, on: LinkID(2), now: now)
        XCTAssertEqual(b.store.count, 1)
        let stranger = MeshFixture.key(0x66)
        let payload = try SyncRequest.want([stored.id.id8]).encoded()
        var stamp = now
        /// Sends one want on `link`; whether it was answered.
        func want(on link: LinkID) throws -> Bool {
            stamp += 1
            let packet = try Packet.sign(type: .syncRequest, timestamp: stamp, recipient: b.identity.current.id, payload: payload, key: stranger)
            var actions: [MeshAction] = []
            let refusal = b.receive(packet.encoded, on: link, now: now + 1000, actions: &actions)
            let answered = !frames(actions).isEmpty
            XCTAssertEqual(refusal == nil, answered)
            return answered
        }
        // One link: the per-link allowance, then refusals.
        var answered = 0
        for _ in 0..<40 { if try want(on: LinkID(1)) { answered += 1 } }
        XCTAssertEqual(answered, MeshConfiguration.wantsPerLinkPerMinute)
        XCTAssertEqual(b.counters.dropped["rate_limited"], 40 - MeshConfiguration.wantsPerLinkPerMinute)
        // Many links: the overall allowance caps them together.
        for link in 10..<30 { b.linkUp(LinkID(UInt32(link)), mtu: 509, now: now) }
        for link in 10..<30 {
            for _ in 0..<MeshConfiguration.wantsPerLinkPerMinute { if try want(on: LinkID(UInt32(link))) { answered += 1 } }
        }
        XCTAssertEqual(answered, MeshConfiguration.wantsPerMinute)
        // A minute later a link may ask again.
        stamp = now + 61_000
        let later = try Packet.sign(type: .syncRequest, timestamp: stamp, recipient: b.identity.current.id, payload: payload, key: stranger)
        XCTAssertFalse(frames(b.receive(later.encoded, on: LinkID(1), now: now + 61_000)).isEmpty)
    }
}

extension RouterTests {
    /// Issue 19: BLE centrals writing to our peripheral share its notification air, not its
    /// budget. Each is a receive link (`sendsOn` the notify link): one flooding us is
    /// `rate_limited` alone, and what goes out for their peers leaves once, on the shared link.
    func testReceiveLinksHaveTheirOwnBudgetAndSendOnTheSharedLink() throws {
        var router = MeshFixture.receiver()
        let notify = LinkID(0), centralA = LinkID(5), centralB = LinkID(6)
        router.linkUp(notify, mtu: 185, now: now)
        router.linkUp(centralA, mtu: 185, sendsOn: notify, now: now)
        router.linkUp(centralB, mtu: 185, sendsOn: notify, now: now)
        var sink: [MeshAction] = []
        let junk = [UInt8](repeating: 0, count: 10)
        for _ in 0..<250 { router.receive(junk, on: centralA, now: now, actions: &sink) }
        XCTAssertEqual(router.receive(junk, on: centralA, now: now, actions: &sink), .rateLimited)
        // Central B's budget is its own.
        let packet = try MeshFixture.dm()
        XCTAssertNil(router.receive(packet.encoded, on: centralB, now: now, actions: &sink))
        let forwarded = frames(router.tick(now: now + 100))
        XCTAssertEqual(Set(forwarded.map(\.link)), [LinkID(1)], "not back on the air it came from, never on a receive link")
        // Our own packets go once per air link; announces and leaves too.
        var actions: [MeshAction] = []
        _ = try router.send(type: .dm, recipient: MeshID(0x99), payload: [1], now: now + 200, actions: &actions)
        XCTAssertEqual(frames(actions).map(\.link).sorted(), [notify, LinkID(1)])
        actions = []
        router.stop(now: now + 300, actions: &actions)
        XCTAssertEqual(frames(actions).map(\.link).sorted(), [notify, LinkID(1)])
        // A peer announced on a receive link is reached through the shared link.
        let peerKey = MeshFixture.key(0x21)
        let announce = try Packet.sign(type: .announce, timestamp: now + 400, recipient: nil,
                                       payload: Announce(capabilities: [.relay, .dm], neighbours: []).encoded(), key: peerKey)
        XCTAssertNil(router.receive(announce.encoded, on: centralA, now: now + 60_000, actions: &sink))
        actions = []
        _ = try router.send(type: .dm, recipient: peerKey.id, payload: [2], now: now + 60_000, actions: &actions)
        XCTAssertEqual(frames(actions).map(\.link), [notify], "the neighbour's link only: the shared one")
    }
}

extension RouterTests {
    /// Two routers' keys, the smaller mesh id first.
    func orderedKeys() -> (smaller: MeshKey, larger: MeshKey) {
        let a = MeshFixture.key(0x31), b = MeshFixture.key(0x32)
        return a.id < b.id ? (a, b) : (b, a)
    }

    func announce(by key: MeshKey, at timestamp: UInt64) throws -> [UInt8] {
        try Packet.sign(type: .announce, timestamp: timestamp, recipient: nil,
                        payload: Announce(capabilities: [.relay, .dm], neighbours: []).encoded(), key: key).encoded
    }

    func closes(_ actions: [MeshAction]) -> [LinkID] {
        actions.compactMap { if case .close(let link) = $0 { return link } else { return nil } }
    }

    /// 11.1: "the larger mesh id closes a duplicate connection". The larger node, connected to
    /// the smaller twice (the smaller's connection to it, then its own 10 s later), closes its
    /// own newer connection once the same announce arrives on both; a link shared with other
    /// peers is no connection to close.
    func testTheLargerMeshIDClosesTheNewerOfTwoConnectionsToOneNeighbour() throws {
        let (smaller, larger) = orderedKeys()
        var router = MeshRouter(identity: MeshIdentity(key: larger, now: now), configuration: quietConfiguration(), now: now,
                                random: SplitMix64(seed: 3))
        let notify = LinkID(0), theirs = LinkID(7), ours = LinkID(8)
        router.linkUp(notify, mtu: 185, now: now)
        router.linkUp(theirs, mtu: 185, sendsOn: notify, now: now)  // the smaller connected to us
        var actions: [MeshAction] = []
        XCTAssertNil(router.receive(try announce(by: smaller, at: now), on: theirs, now: now, actions: &actions))
        XCTAssertEqual(closes(actions), [], "one connection: nothing to close")

        router.linkUp(ours, mtu: 185, now: now + 10_000)  // ours, 10 s later
        let periodic = try announce(by: smaller, at: now + 11_000)
        actions = []
        XCTAssertNil(router.receive(periodic, on: ours, now: now + 11_000, actions: &actions))
        XCTAssertEqual(router.receive(periodic, on: theirs, now: now + 11_005, actions: &actions), .duplicate)
        XCTAssertEqual(closes(actions), [ours], "the larger id closes its own, newer connection")
        XCTAssertEqual(router.linkStatus.filter { $0.peers.map(\.id) == [smaller.id] }.map(\.link), [theirs, ours])

        // Asked once; after the link is down, nothing more.
        actions = []
        _ = router.receive(try announce(by: smaller, at: now + 12_000), on: ours, now: now + 12_000, actions: &actions)
        XCTAssertEqual(closes(actions), [], "not asked twice")
        router.linkDown(ours)
        _ = router.receive(try announce(by: smaller, at: now + 13_000), on: theirs, now: now + 13_000, actions: &actions)
        XCTAssertEqual(closes(actions), [])
        XCTAssertEqual(router.linkStatus.map(\.link), [notify, theirs])

        // A link with another peer besides is shared, not a second connection to this one.
        router.linkUp(LinkID(9), mtu: 185, now: now + 14_000)
        let third = MeshFixture.key(0x33)
        _ = router.receive(try announce(by: third, at: now + 14_000), on: LinkID(9), now: now + 14_000, actions: &actions)
        _ = router.receive(try announce(by: smaller, at: now + 15_000), on: LinkID(9), now: now + 15_000, actions: &actions)
        XCTAssertEqual(closes(actions), [], "a shared link is not closed")
    }

    /// The smaller mesh id keeps both connections: the larger closes its own, and this end goes
    /// down with it.
    func testTheSmallerMeshIDKeepsBothConnections() throws {
        let (smaller, larger) = orderedKeys()
        var router = MeshRouter(identity: MeshIdentity(key: smaller, now: now), configuration: quietConfiguration(), now: now,
                                random: SplitMix64(seed: 4))
        let notify = LinkID(0), theirs = LinkID(7), ours = LinkID(8)
        router.linkUp(notify, mtu: 185, now: now)
        router.linkUp(ours, mtu: 185, now: now)
        router.linkUp(theirs, mtu: 185, sendsOn: notify, now: now + 10_000)
        var actions: [MeshAction] = []
        let periodic = try announce(by: larger, at: now + 11_000)
        XCTAssertNil(router.receive(periodic, on: theirs, now: now + 11_000, actions: &actions))
        XCTAssertEqual(router.receive(periodic, on: ours, now: now + 11_005, actions: &actions), .duplicate)
        XCTAssertEqual(router.linkStatus.filter { $0.peers.map(\.id) == [larger.id] }.map(\.link), [theirs, ours],
                       "the larger is heard on both")
        XCTAssertEqual(closes(actions), [], "the smaller closes nothing")
    }

    func quietConfiguration() -> MeshConfiguration {
        var configuration = MeshConfiguration()
        configuration.announces = false
        return configuration
    }
}

final class PacketStoreTests: XCTestCase {
    /// The 4 MiB total and the 1 MiB / 256 broadcast quota hold under many recipients and sizes,
    /// oldest dropped first, and the accounting matches the contents.
    func testQuotasUnderManyRecipients() throws {
        var store = PacketStore()
        let now = MeshFixture.now
        let key = MeshFixture.key(4)
        var rng = SplitMix64(seed: 6)
        var newest: UInt64 = 0
        for i in 0..<700 {
            let t = now + UInt64(i)
            let size = Int(rng.next() % 30_000) + 1
            let packet = try MeshFixture.dm(from: key, to: MeshID(rng.next() % 100 + 1), at: t, payload: [UInt8](repeating: UInt8(i & 0xFF), count: size))
            store.insert(packet, now: now)
            newest = t
            XCTAssertLessThanOrEqual(store.bytes, PacketStore.totalBytes)
        }
        XCTAssertNotNil(store.offer(since: newest, before: 0, max: 1).entries.first, "the newest is kept")
        XCTAssertGreaterThan(store.bytes, PacketStore.totalBytes - 64 * 1024, "the 4 MiB total was the binding limit")
        let all = store.offer(since: 0, before: 0, max: Int.max).entries
        XCTAssertEqual(all.count, store.count)
        XCTAssertEqual(all.reduce(0) { $0 + $1.encodedLength }, store.bytes)
        for recipient in Set(all.compactMap(\.recipient)) {
            let mine = all.filter { $0.recipient == recipient }
            XCTAssertLessThanOrEqual(mine.count, PacketStore.perRecipientPackets)
            XCTAssertLessThanOrEqual(mine.reduce(0) { $0 + $1.encodedLength }, PacketStore.perRecipientBytes)
        }
    }
}

final class RouterLifecycleTests: XCTestCase {
    let now = MeshFixture.now

    func packets(_ actions: [MeshAction]) -> [Packet] {
        actions.compactMap {
            if case .transmit(_, let frame) = $0 { return try? UnverifiedPacket.decode(frame).verified() } else { return nil }
        }
    }

    /// Every 15 minutes a new key, announced at once; the old id is still answered for 60 s; an
    /// open invite holds the key.
    func testKeyRotationAnnouncesAndAnswersThePreviousID() throws {
        var configuration = MeshConfiguration()
        configuration.announces = true
        var router = MeshRouter(identity: MeshIdentity(key: MeshFixture.key(0x51), now: now), configuration: configuration, now: now,
                                random: SplitMix64(seed: 2))
        router.linkUp(LinkID(1), mtu: 185, now: now)
        let first = router.identity.current.id
        router.inviteOpen = true
        _ = router.tick(now: now + 15 * 60_000)
        XCTAssertEqual(router.identity.current.id, first, "held while an invite is open")
        router.inviteOpen = false
        let t = now + 15 * 60_000 + 1
        let announces = packets(router.tick(now: t)).filter { $0.type == .announce }
        let second = router.identity.current.id
        XCTAssertNotEqual(second, first)
        XCTAssertEqual(announces.map(\.sender), [second], "announced under the new key")
        // A join message to the previous id is still delivered within 60 s, not after.
        let hello = JoinMessage(inviteID: [UInt8](repeating: 1, count: 16), nonce: [UInt8](repeating: 2, count: 16),
                                body: .hello(yb: [UInt8](repeating: 3, count: 32)))
        let early = try Packet.sign(type: .joinHello, timestamp: t + 1000, recipient: first, payload: hello.payload, key: MeshFixture.key(9))
        XCTAssertEqual(router.receive(early.encoded, on: LinkID(1), now: t + 1000).filter { if case .deliver = $0 { return true } else { return false } }.count, 1)
        let late = try Packet.sign(type: .joinHello, timestamp: t + 61_000, recipient: first, payload: hello.payload, key: MeshFixture.key(9))
        XCTAssertEqual(router.receive(late.encoded, on: LinkID(1), now: t + 61_000).filter { if case .deliver = $0 { return true } else { return false } }.count, 0)
    }

    /// Own packets enter the seen-caches when sent: an echo is a duplicate, and the same event
    /// injected by another node in another packet is a duplicate too.
    func testOwnPacketsAreSeenAndEventsDeduplicatedAcrossPackets() throws {
        var router = MeshFixture.receiver()
        var rng = SplitMix64(seed: 3)
        let keys = Keys.generate(using: &rng)
        let event = try Event.sign(kind: 1059, content: "x", tags: [], createdAt: Int64(now / 1000), keys: keys, rng: &rng)
        var actions: [MeshAction] = []
        let mine = try router.sendEvent(event, now: now, actions: &actions)
        XCTAssertEqual(packets(actions).map(\.id), [mine.id], "sent at once on the link")
        XCTAssertEqual(router.receive(mine.encoded(ttl: 6), on: LinkID(1), now: now + 10, actions: &actions), .duplicate)
        let other = try Packet.sign(type: .nostrEvent, timestamp: now + 20, recipient: nil, payload: event.jsonBytes, key: MeshFixture.key(8))
        XCTAssertEqual(router.receive(other.encoded, on: LinkID(1), now: now + 20, actions: &actions), .duplicate)
        XCTAssertThrowsError(try router.sendEvent(try Event.sign(kind: 1, content: "note", createdAt: 0, keys: keys, rng: &rng), now: now, actions: &actions)) {
            XCTAssertEqual($0 as? MeshError, .invalidArgument, "only carried kinds go on the mesh")
        }
    }

    func testLeaveForgetsThePeerAndStopSendsLeaves() throws {
        var router = MeshFixture.receiver()
        let peer = MeshFixture.key(0x61)
        let announce = try Packet.sign(type: .announce, timestamp: now, recipient: nil,
                                       payload: Announce(nickname: "Dad", capabilities: [.dm], neighbours: []).encoded(), key: peer)
        _ = router.receive(announce.encoded, on: LinkID(1), now: now)
        XCTAssertEqual(router.linkStatus.first?.peers.first?.nickname, "Dad")
        let leave = try Packet.sign(type: .leave, timestamp: now + 5, recipient: nil, payload: [], key: peer)
        _ = router.receive(leave.encoded, on: LinkID(1), now: now + 5)
        XCTAssertEqual(router.linkStatus.first?.peers, [])
        var actions: [MeshAction] = []
        router.stop(now: now + 10, actions: &actions)
        XCTAssertEqual(packets(actions).map(\.type), [.leave])
        // Silence forgets a peer after 30 s.
        _ = router.receive(try Packet.sign(type: .announce, timestamp: now + 2_000, recipient: nil,
                                           payload: Announce(capabilities: [.dm], neighbours: []).encoded(), key: peer).encoded,
                           on: LinkID(1), now: now + 2_000)
        XCTAssertEqual(router.linkStatus.first?.peers.count, 1)
        _ = router.tick(now: now + 2_000 + 30_000)
        XCTAssertEqual(router.linkStatus.first?.peers.count, 1)
        _ = router.tick(now: now + 2_000 + 30_001)
        XCTAssertEqual(router.linkStatus.first?.peers, [])
    }
}
