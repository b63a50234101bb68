import Nostr
@testable import Pigeon
import XCTest

/// Issue 19, finding 5: the seen-ephemeral cache is stored an entry per record, so a handshake1
/// writes a few dozen bytes, not the whole ~820 KB cache; records of the earlier single-record
/// form still decode and are rewritten as entries by the next transition.
final class SeenCacheRecordsTests: XCTestCase {
    let t0: UInt64 = 1_767_225_600_000

    /// Bob with a full cache (contacts' and strangers' parts), settled (nothing left to write).
    func bobWithAFullCache() throws -> TestNode {
        var bob = try TestNode(nickname: "bob")
        for i in 0..<SeenEphemeralCache.capacity {
            bob.state.seen.insert(X25519PrivateKey.generate().publicKey, timestamp: t0 + UInt64(i % 1000), now: t0)
        }
        for i in 0..<StrangerLimits.seenCapacity {
            bob.state.seen.insert(X25519PrivateKey.generate().publicKey, timestamp: t0 + UInt64(i % 1000),
                                  origin: .stranger(budgetKey: [1]), now: t0)
        }
        bob.state = bob.state.expire(now: t0).state
        XCTAssertEqual(bob.state.seen.count, SeenEphemeralCache.capacity + StrangerLimits.seenCapacity)
        return bob
    }

    func bytesWritten<Output>(_ transition: PigeonTransition<Output>) -> Int {
        transition.changes.reduce(0) { $0 + (transition.state.record($1)?.count ?? 0) }
    }

    func testAStrangersHandshake1AtAFullCacheWritesItsEntryNotTheCache() throws {
        var bob = try bobWithAFullCache()
        var stranger = try TestNode(nickname: "stranger")
        try stranger.add(bob)
        let h1 = try stranger.start(bob, now: t0 + 2000)
        var keys = SystemKeySource()
        let answered = try bob.state.deliver(frame: h1, now: t0 + 2000, keys: &keys, origin: .stranger(budgetKey: [2]))
        let entries = answered.changes.filter { if case .seenEntry = $0 { return true } else { return false } }
        XCTAssertEqual(entries.count, 2, "the new entry and the one it evicted")
        XCTAssertEqual(entries.compactMap { answered.state.record($0) }.map(\.count), [10], "ts and origin, after the version")
        // The new pending state (a few hundred bytes), the entries and the floors: well under 2 KiB.
        XCTAssertLessThan(bytesWritten(answered), 2048)
        XCTAssertLessThanOrEqual(answered.state.record(.seenCache)?.count ?? 0, 25)
        // What was written is what decodes.
        var records = bob.state.records
        for key in answered.changes { records[key] = answered.state.record(key) }
        XCTAssertEqual(try PigeonState(records: records), answered.state)
    }

    func testEntriesRoundTripAsRecordsAndThroughTheWholeStateBlob() throws {
        var bob = try TestNode(nickname: "bob")
        bob.state.seen.insert(X25519PrivateKey.generate().publicKey, timestamp: t0, now: t0)
        bob.state.seen.insert(X25519PrivateKey.generate().publicKey, timestamp: t0 + 1, origin: .stranger(budgetKey: [1]), now: t0)
        XCTAssertEqual(bob.state.records.keys.filter { if case .seenEntry = $0 { return true } else { return false } }.count, 2)
        XCTAssertEqual(try PigeonState(records: bob.state.records), bob.state)
        XCTAssertEqual(try PigeonState(encoded: bob.state.encoded), bob.state)
        for key in bob.state.records.keys { XCTAssertEqual(PigeonRecordKey(storeKey: key.description), key) }
    }

    func testTheEarlierSingleRecordDecodesAndIsRewrittenAsEntries() throws {
        let bob = try TestNode(nickname: "bob")
        let contactsE = X25519PrivateKey.generate().publicKey, strangersE = X25519PrivateKey.generate().publicKey
        // floor ‖ count ‖ (e ‖ ts)* for contacts, then the strangers' part: the record as it was.
        var legacy: [UInt8] = [1]
        legacy.appendBigEndian(t0 - 5)
        legacy.appendBigEndian(UInt32(1))
        legacy += contactsE.bytes
        legacy.appendBigEndian(t0)
        legacy.appendBigEndian(t0 - 9)
        legacy.appendBigEndian(UInt32(1))
        legacy += strangersE.bytes
        legacy.appendBigEndian(t0 + 1)
        var records = bob.state.records
        records[.seenCache] = legacy
        let decoded = try PigeonState(records: records)
        XCTAssertEqual(decoded.seen.floor, t0 - 5)
        XCTAssertEqual(decoded.seen.strangerFloor, t0 - 9)
        XCTAssertEqual(decoded.seen.entry(contactsE)?.stranger, false)
        XCTAssertEqual(decoded.seen.entry(strangersE)?.stranger, true)

        // The next transition (the node's upkeep) writes each entry and the floors-only record.
        let next = decoded.expire(now: t0 + 2)
        XCTAssertEqual(next.changes, [.seenCache, .seenEntry(contactsE), .seenEntry(strangersE)])
        for key in next.changes { records[key] = next.state.record(key) }
        XCTAssertEqual(records[.seenCache]?.count, 1 + 12 + 12)
        let reread = try PigeonState(records: records)
        XCTAssertEqual(reread, next.state)
        XCTAssertEqual(reread.expire(now: t0 + 3).changes, [], "nothing left to migrate")
    }

    func testDamagedOrExcessEntryRecordsAreRefused() throws {
        let bob = try TestNode(nickname: "bob")
        let e = X25519PrivateKey.generate().publicKey
        var records = bob.state.records
        var bad: [UInt8] = [1]
        bad.appendBigEndian(t0)
        records[.seenEntry(e)] = bad + [2]
        XCTAssertThrowsError(try PigeonState(records: records)) { XCTAssertEqual($0 as? PigeonStateError, .malformed(record: "seen entry", field: "origin")) }
        records[.seenEntry(e)] = bad + [0, 0]
        XCTAssertThrowsError(try PigeonState(records: records))

        // One more strangers' entry than the budget: the store was tampered with.
        records = bob.state.records
        for _ in 0...StrangerLimits.seenCapacity { records[.seenEntry(X25519PrivateKey.generate().publicKey)] = bad + [1] }
        XCTAssertThrowsError(try PigeonState(records: records)) { XCTAssertEqual($0 as? PigeonStateError, .malformed(record: "seen entry", field: "count")) }
    }
}
