import XCTest
@testable import Store

/// `location_shares` (issue 23): bounds at their edges, a restart replaces settings but keeps
/// the creation time and the record of what happened, and that record is bounded.
final class LocationShareRepositoryTests: StoreTestCase {
    func testBoundsReplaceAndRecord() throws {
        let store = try createStore()
        defer { store.close() }
        let group = [UInt8](repeating: 7, count: 16)
        func share(interval: Int64 = 60, fuzz: Int64 = 0, source: String = "fixed:1,2", createdAt: Int64 = 100) -> StoredLocationShare {
            StoredLocationShare(mlsGroupID: group, source: source, interval: interval, fuzz: fuzz, battery: true, createdAt: createdAt)
        }
        for bad in [share(interval: 9), share(interval: 3601), share(fuzz: -1), share(fuzz: 1001), share(source: ""),
                    share(source: String(repeating: "g", count: 257))] {
            XCTAssertThrowsError(try store.transaction { try $0.locationShares.set(bad) })
        }
        for good in [share(interval: 10), share(interval: 3600, fuzz: 1000, source: String(repeating: "g", count: 256))] {
            XCTAssertNoThrow(try store.transaction { try $0.locationShares.set(good) })
        }
        try store.transaction { tx in
            try tx.locationShares.record(mlsGroupID: group, fixAt: 500, publishAt: 510, error: String(repeating: "x", count: 1000),
                                         code: "location_denied")
            try tx.locationShares.set(share(interval: 120, createdAt: 999))
            try tx.locationShares.setPaused(true, mlsGroupID: group)
        }
        let stored = try XCTUnwrap(try store.transaction { try $0.locationShares.get(mlsGroupID: group) })
        XCTAssertEqual(stored.interval, 120)
        XCTAssertEqual(stored.createdAt, 100, "started again, the share keeps when it began")
        XCTAssertTrue(stored.paused)
        XCTAssertEqual(stored.lastFixAt, 500)
        XCTAssertEqual(stored.lastPublishAt, 510)
        XCTAssertEqual(stored.lastError?.count, 200, "a reason is kept to 200 characters")
        XCTAssertEqual(stored.lastErrorCode, "location_denied")
        XCTAssertNil(stored.schedule, "no schedule before run recorded one")
        let schedule = StoredLocationShare.ScheduleState(stationary: true, intervalInForce: 480, nextPublishAt: 1000)
        try store.transaction { try $0.locationShares.record(mlsGroupID: group, schedule: schedule) }
        XCTAssertEqual(try store.transaction { try $0.locationShares.get(mlsGroupID: group) }?.schedule, schedule)
        for bound in [9, 14401] as [Int64] {
            XCTAssertThrowsError(try store.transaction {
                try $0.locationShares.record(mlsGroupID: group, schedule: .init(stationary: false, intervalInForce: bound, nextPublishAt: 1))
            })
        }
        try store.transaction { try $0.locationShares.record(mlsGroupID: group, fixAt: nil, publishAt: 600, error: nil) }
        let later = try XCTUnwrap(try store.transaction { try $0.locationShares.get(mlsGroupID: group) })
        XCTAssertEqual(later.lastFixAt, 500, "a publish keeps the last fix time")
        XCTAssertNil(later.lastError)
        XCTAssertNil(later.lastErrorCode, "the code goes with its reason")
        XCTAssertTrue(try store.transaction { try $0.locationShares.delete(mlsGroupID: group) })
        XCTAssertFalse(try store.transaction { try $0.locationShares.delete(mlsGroupID: group) })
    }
}
