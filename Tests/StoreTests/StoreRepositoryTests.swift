import Foundation
import Synchronization
import XCTest
@testable import Store

/// The repositories and transaction semantics.
final class StoreRepositoryTests: StoreTestCase {
    private var store: BurrowStore!

    override func setUpWithError() throws {
        try super.setUpWithError()
        store = try createStore()
    }

    override func tearDownWithError() throws {
        store?.close()
        try super.tearDownWithError()
    }

    func testIdentityHasOneRow() throws {
        XCTAssertNil(try store.identity())
        try store.setIdentity(secretKey: [UInt8](repeating: 1, count: 32), createdAt: 100)
        try store.setIdentity(secretKey: [UInt8](repeating: 2, count: 32), createdAt: 200)
        XCTAssertEqual(try store.identity(), StoredIdentity(secretKey: [UInt8](repeating: 2, count: 32), createdAt: 200))
        XCTAssertStoreError(.invalidInput("the secret key must be 32 bytes, not 31"),
                            try store.setIdentity(secretKey: [UInt8](repeating: 3, count: 31)))
        XCTAssertEqual(try store.identity()?.secretKey, [UInt8](repeating: 2, count: 32))
    }

    func testRelaysAddListRemove() throws {
        XCTAssertEqual(try store.relays(), [])
        XCTAssertTrue(try store.addRelay(url: "wss://b.example", addedAt: 2))
        XCTAssertTrue(try store.addRelay(url: "wss://a.example", read: true, write: false, addedAt: 1))
        XCTAssertFalse(try store.addRelay(url: "wss://b.example", read: false, write: true, addedAt: 99))
        XCTAssertEqual(try store.relays(), [
            StoredRelay(url: "wss://a.example", read: true, write: false, addedAt: 1),
            StoredRelay(url: "wss://b.example", read: false, write: true, addedAt: 2),
        ])
        XCTAssertTrue(try store.removeRelay(url: "wss://a.example"))
        XCTAssertFalse(try store.removeRelay(url: "wss://a.example"))
        XCTAssertEqual(try store.relays().map(\.url), ["wss://b.example"])
        XCTAssertStoreError(.invalidInput("the relay URL is empty"), try store.addRelay(url: ""))
    }

    func testEventsInsertIgnoresDuplicateIDs() throws {
        XCTAssertTrue(try store.insertEvent(testEvent(1, content: "first")))
        XCTAssertFalse(try store.insertEvent(testEvent(1, content: "second")))
        XCTAssertEqual(try store.event(id: testID(1))?.json, testEvent(1, content: "first").json)
        XCTAssertNil(try store.event(id: testID(2)))
        XCTAssertEqual(try store.eventCount(), 1)
        try store.transaction { tx in
            XCTAssertTrue(try tx.events.contains(id: testID(1)))
            XCTAssertFalse(try tx.events.contains(id: testID(2)))
        }
    }

    func testEventsQueryByKind() throws {
        try store.transaction { tx in
            try tx.events.insert(testEvent(1, kind: 1, createdAt: 30))
            try tx.events.insert(testEvent(2, kind: 1, createdAt: 10))
            try tx.events.insert(testEvent(3, kind: 1059, createdAt: 20))
            try tx.events.insert(testEvent(4, kind: 1, createdAt: 20))
            try tx.events.insert(testEvent(5, kind: 0, createdAt: 20))
        }
        XCTAssertEqual(try store.events(kind: 1).map(\.id), [testID(2), testID(4), testID(1)])
        XCTAssertEqual(try store.events(kind: 1, since: 20).map(\.id), [testID(4), testID(1)])
        XCTAssertEqual(try store.events(kind: 1, until: 20).map(\.id), [testID(2), testID(4)])
        XCTAssertEqual(try store.events(kind: 1, limit: 1).map(\.id), [testID(2)])
        XCTAssertEqual(try store.events(kind: 1059), [testEvent(3, kind: 1059, createdAt: 20)])
        XCTAssertEqual(try store.events(kind: 0).map(\.kind), [0])
        XCTAssertEqual(try store.events(kind: 7), [])
        XCTAssertEqual(try store.eventCount(), 5)
        XCTAssertEqual(try store.eventCount(kind: 1), 3)
    }

    func testEventsRejectMalformedInput() throws {
        let shortID = StoredEvent(id: [1, 2, 3], kind: 1, pubkey: [UInt8](repeating: 0, count: 32), createdAt: 0, json: "{}", receivedAt: 0)
        XCTAssertStoreError(.invalidInput("the event id must be 32 bytes, not 3"), try store.insertEvent(shortID))
        let shortKey = StoredEvent(id: testID(1), kind: 1, pubkey: [], createdAt: 0, json: "{}", receivedAt: 0)
        XCTAssertStoreError(.invalidInput("the event pubkey must be 32 bytes, not 0"), try store.insertEvent(shortKey))
        let negativeKind = StoredEvent(id: testID(1), kind: -1, pubkey: testID(2), createdAt: 0, json: "{}", receivedAt: 0)
        XCTAssertStoreError(.invalidInput("the event kind is negative"), try store.insertEvent(negativeKind))
        XCTAssertStoreError(.invalidInput("the limit is negative"), try store.events(kind: 1, limit: -1))
        XCTAssertEqual(try store.eventCount(), 0)
    }

    func testEventContentRoundTripsExactly() throws {
        let json = "{\"content\":\"é 🦫 \\u0000 \\\"quoted\\\" \(String(repeating: "x", count: 100_000))\"}"
        let event = StoredEvent(id: testID(9), kind: 1, pubkey: testID(8), createdAt: -5, json: json, receivedAt: Int64.max)
        try store.insertEvent(event)
        XCTAssertEqual(try store.event(id: testID(9)), event)
    }

    func testProcessedEventsMarkOnce() throws {
        XCTAssertFalse(try store.isProcessed(eventID: testID(1)))
        XCTAssertTrue(try store.markProcessed(eventID: testID(1), outcome: "applied", at: 5))
        XCTAssertFalse(try store.markProcessed(eventID: testID(1), outcome: "rejected", at: 6))
        XCTAssertTrue(try store.isProcessed(eventID: testID(1)))
        try store.transaction { tx in
            XCTAssertEqual(try tx.processedEvents.get(eventID: testID(1)), ProcessedEvent(eventID: testID(1), outcome: "applied", processedAt: 5))
            XCTAssertNil(try tx.processedEvents.get(eventID: testID(2)))
            XCTAssertEqual(try tx.processedEvents.count(), 1)
        }
        XCTAssertStoreError(.invalidInput("the event id must be 32 bytes, not 0"), try store.isProcessed(eventID: []))
    }

    func testTransactionCommitsEverythingTogether() throws {
        try store.transaction { tx in
            try tx.events.insert(testEvent(1))
            try tx.processedEvents.mark(eventID: testID(1), outcome: "applied")
            try tx.relays.add(url: "wss://r.example")
        }
        store.close()
        store = try openStore()
        XCTAssertEqual(try store.eventCount(), 1)
        XCTAssertTrue(try store.isProcessed(eventID: testID(1)))
        XCTAssertEqual(try store.relays().count, 1)
    }

    func testTransactionRollsBackWhenItsBodyThrows() throws {
        struct Abort: Error {}
        try store.insertEvent(testEvent(0))
        XCTAssertThrowsError(try store.transaction { tx in
            try tx.events.insert(testEvent(1))
            try tx.processedEvents.mark(eventID: testID(1), outcome: "applied")
            try tx.identity.set(secretKey: [UInt8](repeating: 4, count: 32))
            throw Abort()
        }) { XCTAssertTrue($0 is Abort) }
        // A failing statement rolls back the statements before it, too.
        XCTAssertThrowsError(try store.transaction { tx in
            try tx.events.insert(testEvent(2))
            try tx.events.insert(StoredEvent(id: testID(3), kind: 1, pubkey: [], createdAt: 0, json: "", receivedAt: 0))
        })
        XCTAssertEqual(try store.eventCount(), 1)
        XCTAssertFalse(try store.isProcessed(eventID: testID(1)))
        XCTAssertNil(try store.identity())
        // The store is usable afterwards.
        XCTAssertTrue(try store.insertEvent(testEvent(4)))
    }

    func testTransactionMisuseIsAnErrorNotACrash() throws {
        var escaped: StoreTransaction?
        try store.transaction { tx in
            escaped = tx
            XCTAssertThrowsError(try store.transaction { _ in () }) { error in
                guard case .misuse? = error as? StoreError else { return XCTFail("\(error)") }
            }
            try tx.events.insert(testEvent(1))
        }
        XCTAssertThrowsError(try escaped?.events.count()) { error in
            guard case .misuse? = error as? StoreError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try store.eventCount(), 1)
    }

    func testStoreIsUsableFromSeveralThreads() throws {
        let group = DispatchGroup()
        let failures = Mutex<[Error]>([])
        let store = try XCTUnwrap(self.store)
        for worker in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for n in 0..<25 {
                    do {
                        try store.transaction { tx in
                            let id = testID(worker * 100 + n)
                            try tx.events.insert(StoredEvent(id: id, kind: worker, pubkey: testID(0), createdAt: Int64(n), json: "{}", receivedAt: 0))
                            try tx.processedEvents.mark(eventID: id, outcome: "applied")
                        }
                    } catch {
                        failures.withLock { $0.append(error) }
                    }
                }
            }
        }
        group.wait()
        let errors = failures.withLock { $0 }
        XCTAssertTrue(errors.isEmpty, "\(errors)")
        XCTAssertEqual(try store.eventCount(), 100)
        XCTAssertEqual(try store.transaction { try $0.processedEvents.count() }, 100)
    }
}
