import Nostr
@testable import Pigeon
import XCTest

/// Issue 19, finding 4: strangers' handshake1s get their own budgets (pending states, seen
/// entries and floor, held frames), which can never displace a contact's; no floor moves past
/// the time of the eviction that raised it, so future-dated handshake1s make nobody stale.
final class StrangerBudgetTests: XCTestCase {
    let t0: UInt64 = 1_767_225_600_000

    /// A stranger's handshake1 at `ts` from a fresh node (its own keys each time).
    func strangerHandshake1(to target: TestNode, ts: UInt64) throws -> [UInt8] {
        var stranger = try TestNode(nickname: "stranger")
        try stranger.add(target)
        return try stranger.start(target, now: ts)
    }

    func responderCount(_ state: PigeonState, strangers: Bool) -> Int {
        state.pending.values.filter { if case .responder(let p) = $0 { return p.origin.isStranger == strangers } else { return false } }.count
    }

    func testAFloodOfStrangersNeverEvictsAContactsPendingStateAndTheContactHandshakeCompletes() throws {
        var alice = try TestNode(nickname: "alice"), bob = try TestNode(nickname: "bob")
        try alice.add(bob)
        try bob.add(alice)
        let h1 = try alice.start(bob, now: t0)
        let t = try bob.state.deliver(frame: h1, now: t0 + 1, keys: &bob.keys, origin: .contact)
        bob.state = t.state
        let h2 = try XCTUnwrap(t.output.outputs.first)

        // 200 strangers, each with its own seal key, all newer than the contact's handshake.
        for i in 0..<200 {
            let frame = try strangerHandshake1(to: bob, ts: t0 + 10 + UInt64(i))
            var keys = SystemKeySource()
            bob.state = try bob.state.deliver(frame: frame, now: t0 + 10 + UInt64(i), keys: &keys,
                                              origin: .stranger(budgetKey: [UInt8(i & 0xff), UInt8(i >> 8)])).state
        }
        XCTAssertEqual(responderCount(bob.state, strangers: true), StrangerLimits.maxPending)
        XCTAssertEqual(responderCount(bob.state, strangers: false), 1, "the contact's pending state survived the flood")

        // The contact's handshake finishes.
        let h3 = try XCTUnwrap(alice.deliver(h2, now: t0 + 300).outputs.first)
        XCTAssertNotNil(try bob.deliver(h3, now: t0 + 301).established)
    }

    func testOneStrangerSenderHoldsAtMostItsOwnShare() throws {
        var bob = try TestNode(nickname: "bob")
        let sender: [UInt8] = Array(repeating: 7, count: 32)
        for i in 0..<20 {
            let frame = try strangerHandshake1(to: bob, ts: t0 + UInt64(i))
            var keys = SystemKeySource()
            bob.state = try bob.state.deliver(frame: frame, now: t0 + UInt64(i), keys: &keys, origin: .stranger(budgetKey: sender)).state
        }
        XCTAssertEqual(responderCount(bob.state, strangers: true), StrangerLimits.maxPendingPerSender)
        // The survivors are the newest.
        let kept = bob.state.pending.values.map(\.timestamp).sorted()
        XCTAssertEqual(kept, (16..<20).map { t0 + UInt64($0) })
    }

    func testFutureDatedEntriesCannotPushAFloorPastNow() {
        var cache = SeenEphemeralCache()
        let now = t0
        // Fill the contacts' cache with handshake1s dated 5 minutes ahead, then one more.
        for _ in 0...SeenEphemeralCache.capacity {
            cache.insert(X25519PrivateKey.generate().publicKey, timestamp: now + PigeonLimits.clockSkewMs, now: now)
        }
        XCTAssertLessThanOrEqual(cache.floor, now, "the floor rose past now")
        for _ in 0...StrangerLimits.seenCapacity {
            cache.insert(X25519PrivateKey.generate().publicKey, timestamp: now + PigeonLimits.clockSkewMs,
                         origin: .stranger(budgetKey: [1]), now: now)
        }
        XCTAssertLessThanOrEqual(cache.strangerFloor, now)
        XCTAssertEqual(cache.count, SeenEphemeralCache.capacity + StrangerLimits.seenCapacity)
    }

    func testAStrangerFloodLeavesTheContactsFloorAlone() throws {
        var alice = try TestNode(nickname: "alice"), bob = try TestNode(nickname: "bob")
        try alice.add(bob)
        try bob.add(alice)
        // Strangers' handshake1s fill their cache past capacity, dated in the future.
        for _ in 0...StrangerLimits.seenCapacity {
            bob.state.seen.insert(X25519PrivateKey.generate().publicKey, timestamp: t0 + PigeonLimits.clockSkewMs,
                                  origin: .stranger(budgetKey: [9]), now: t0)
        }
        XCTAssertEqual(bob.state.seen.floor, 0)
        // A contact's handshake1 made a minute ago is still fresh.
        let h1 = try alice.start(bob, now: t0 - 60_000)
        XCTAssertEqual(try bob.deliver(h1, now: t0).outputs.count, 1)
    }

    func testStrangersHeldFramesHaveTheirOwnBudget() throws {
        // Bob answers a contact (Alice) and a stranger (Carol, not in his contacts).
        var alice = try TestNode(nickname: "alice"), bob = try TestNode(nickname: "bob"), carol = try TestNode(nickname: "carol")
        try alice.add(bob)
        try bob.add(alice)
        try carol.add(bob)
        var keys = SystemKeySource()
        let carolH1 = try carol.start(bob, now: t0)
        let answered = try bob.state.deliver(frame: carolH1, now: t0, keys: &keys, origin: .stranger(budgetKey: [3]))
        bob.state = answered.state
        // Carol completes her side; her messages reach Bob before her handshake3.
        XCTAssertNotNil(try carol.deliver(try XCTUnwrap(answered.output.outputs.first), now: t0 + 1).established)
        var heldForCarol = 0
        for i in 0..<(StrangerLimits.maxHeldPerSession + 5) {
            let frame = try XCTUnwrap(carol.send("m\(i)", to: bob, now: t0 + 2 + UInt64(i)).last)
            do {
                bob.state = try bob.state.deliver(frame: frame, now: t0 + 20, keys: &keys).state
                heldForCarol += 1
            } catch {
                XCTAssertEqual(error as? PigeonError, .sessionUnknown)
            }
        }
        XCTAssertEqual(heldForCarol, StrangerLimits.maxHeldPerSession)
        XCTAssertEqual(bob.state.heldFrameCount(strangers: true), StrangerLimits.maxHeldPerSession)

        // The contact still gets the profile's 32 held frames.
        let aliceH1 = try alice.start(bob, now: t0)
        let aliceH2 = try XCTUnwrap(bob.deliver(aliceH1, now: t0 + 1).outputs.first)
        _ = try alice.deliver(aliceH2, now: t0 + 2)
        var heldForAlice = 0
        for i in 0..<PigeonLimits.maxHeldPerSession {
            let frame = try XCTUnwrap(alice.send("a\(i)", to: bob, now: t0 + 3 + UInt64(i)).last)
            if try bob.deliver(frame, now: t0 + 40).held { heldForAlice += 1 }
        }
        XCTAssertEqual(heldForAlice, PigeonLimits.maxHeldPerSession)
    }

    func testTheOriginSurvivesTheStateCodec() throws {
        var bob = try TestNode(nickname: "bob")
        let frame = try strangerHandshake1(to: bob, ts: t0)
        var keys = SystemKeySource()
        bob.state = try bob.state.deliver(frame: frame, now: t0, keys: &keys, origin: .stranger(budgetKey: [1, 2, 3])).state
        let decoded = try PigeonState(encoded: bob.state.encoded)
        XCTAssertEqual(decoded, bob.state)
        XCTAssertEqual(decoded.seen.strangerEntries.count, 1)
    }
}
