import FuzzTargets
@testable import Pigeon
import TestSupport
import XCTest

/// The engine state's byte encoding: stable, versioned, per record; anything else decodes to a
/// `PigeonStateError`, never a crash or a silently different state.
final class StateCodecTests: XCTestCase {
    let t0: UInt64 = 1_767_225_600_000

    /// A state with every kind of record: contacts, current and previous sessions with skipped
    /// and retired keys, pending states of both roles, held frames and the seen cache.
    func richState() throws -> PigeonState {
        var (alice, bob) = try establishedPair(t0: t0)
        alice.state = try alice.state.advanceSendingChain(with: bob.id, count: 3).state
        try bob.deliver(try XCTUnwrap(alice.send("skip", to: bob, now: t0 + 10).last), now: t0 + 11)
        try alice.deliver(try XCTUnwrap(bob.send("step", to: alice, now: t0 + 12).last), now: t0 + 13)
        // A second handshake from Alice: Bob answers (pending responder) and holds a message.
        let h1 = try alice.start(bob, now: t0 + 20)
        let h2 = try XCTUnwrap(bob.deliver(h1, now: t0 + 21).outputs.first)
        try alice.deliver(h2, now: t0 + 22)
        XCTAssertTrue(try bob.deliver(try XCTUnwrap(alice.send("held", to: bob, now: t0 + 23).last), now: t0 + 24).held)
        // Bob starts one of his own towards a third node (pending initiator).
        let carol = try TestNode(nickname: "carol")
        try bob.add(carol)
        _ = try bob.start(carol, now: t0 + 25)
        XCTAssertFalse(bob.state.held.isEmpty)
        XCTAssertEqual(bob.state.pending.count, 2)
        return bob.state
    }

    func testRoundTripOfEveryRecord() throws {
        let state = try richState()
        let encoded = state.encoded
        XCTAssertEqual(try PigeonState(encoded: encoded), state)
        XCTAssertEqual(try PigeonState(encoded: encoded).encoded, encoded, "the encoding is stable")
        XCTAssertEqual(try PigeonState(records: state.records), state)
        XCTAssertEqual(encoded.first, PigeonStateCodec.version)
        for (key, bytes) in state.records { XCTAssertEqual(bytes.first, PigeonStateCodec.version, "\(key)") }
    }

    func testTruncatedAndExtendedEncodingsAreRefused() throws {
        let state = try richState()
        for (key, bytes) in state.records {
            var records = state.records
            for cut in Set([0, 1, bytes.count / 3, bytes.count / 2, bytes.count - 1]) {
                records[key] = Array(bytes.prefix(cut))
                XCTAssertThrowsError(try PigeonState(records: records), "\(key) cut at \(cut)") { XCTAssertTrue($0 is PigeonStateError) }
            }
            records[key] = bytes + [0]
            XCTAssertThrowsError(try PigeonState(records: records), "\(key) with a trailing byte")
            records[key] = [2] + bytes.dropFirst()
            XCTAssertThrowsError(try PigeonState(records: records)) {
                guard case .unsupportedVersion = $0 as? PigeonStateError else { return XCTFail("\($0)") }
            }
        }
        // A record under another record's key.
        var records = state.records
        let sessions = state.sessions.keys.sorted()
        XCTAssertGreaterThanOrEqual(sessions.count, 1)
        records[.session(SessionID(valid: [UInt8](repeating: 9, count: 16)))] = records[.session(sessions[0])]
        XCTAssertThrowsError(try PigeonState(records: records)) { XCTAssertEqual($0 as? PigeonStateError, .keyMismatch(record: "session")) }
    }

    /// Random edits of a real encoding: each decodes to a state or throws the typed error.
    func testMutatedEncodingsNeverCrash() throws {
        let encoded = try richState().encoded
        var rng = SplitMix64(seed: 0x5EED)
        var refused = 0
        for _ in 0..<2000 {
            let input = ByteEdits.mutate(encoded, using: &rng)
            do {
                let decoded = try PigeonState(encoded: input)
                XCTAssertEqual(try PigeonState(encoded: decoded.encoded), decoded)
            } catch {
                refused += 1  // typed: always a PigeonStateError
            }
        }
        XCTAssertGreaterThan(refused, 1000)
        for length in [0, 1, 5, 100] {
            XCTAssertThrowsError(try PigeonState(encoded: (0..<length).map { _ in UInt8.random(in: 0...255) }))
        }
    }

    /// Transitions report exactly the records they touched.
    func testTransitionsReportTheirChanges() throws {
        var (alice, bob) = try establishedPair(t0: t0)
        let session = try XCTUnwrap(bob.state.currentSession(with: alice.id)).id
        let frame = try XCTUnwrap(alice.send("x", to: bob, now: t0 + 10).last)
        let t = try bob.state.deliver(frame: frame, now: t0 + 11, keys: &bob.keys)
        XCTAssertEqual(t.changes, [.session(session)])
        let sent = try bob.state.send(to: alice.id, content: MessageContent(kind: 1, msgID: [UInt8](repeating: 1, count: 16), sentAt: t0, body: [0x41]), now: t0 + 12)
        XCTAssertEqual(sent.changes, [.session(session)])
        let h1 = try TestNode(nickname: "z")
        var zed = h1
        try zed.add(bob)
        let hello = try zed.start(bob, now: t0 + 13)
        let answered = try bob.state.deliver(frame: hello, now: t0 + 14, keys: &bob.keys)
        // The new pending state and the one seen-cache entry of Zed's e_i (not the whole cache).
        let zedEphemeral = try X25519PublicKey(bytes: Array(hello[18..<50]))
        XCTAssertEqual(answered.changes, [.pending(SessionID(valid: Array(hello[2..<18]))), .seenEntry(zedEphemeral)])
        // Writing the changed records over the old ones gives the new state.
        var records = bob.state.records
        for key in answered.changes { records[key] = answered.state.record(key) }
        XCTAssertEqual(try PigeonState(records: records), answered.state)
    }
}
