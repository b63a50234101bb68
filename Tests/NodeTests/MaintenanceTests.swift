import Foundation
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// `burrow run`'s periodic upkeep.
final class MaintenanceTests: NodeRelayTestCase {
    /// A long `burrow run` may never sync in full: its upkeep truncates the write-ahead log,
    /// so old epochs' secrets deleted from the database do not linger there.
    func testUpkeepTruncatesTheWriteAheadLog() async throws {
        let alice = try node()
        let created = try await alice.groups.createGroup(name: "Keep", description: "", invitees: [], admins: [], timeout: timeout)
        for index in 0..<3 { _ = try await alice.groups.chat(created.mlsGroupID, text: "note \(index)", timeout: timeout) }
        _ = try await alice.groups.selfUpdate(created.mlsGroupID, timeout: timeout)
        let wal = alice.home.appendingPathComponent("store.db-wal")
        func walSize() -> Int { (try? FileManager.default.attributesOfItem(atPath: wal.path)[.size] as? NSNumber)?.intValue ?? 0 }
        XCTAssertGreaterThan(walSize(), 0, "writes went to the log")
        _ = await alice.maintain(selfUpdatePeriod: 0, timeout: timeout)
        XCTAssertEqual(walSize(), 0, "upkeep truncated the log")
    }
}
