import Foundation
import XCTest
@testable import Store

/// Two processes on one home, and a process killed while writing. The other process is the
/// `StoreProbe` executable built beside the tests.
final class StoreProcessTests: StoreTestCase {
    func testSecondProcessGetsBusyWhileWeOwnTheHome() throws {
        let store = try createStore()
        let probe = try StoreProbeProcess(arguments: ["open", home.path], passphrase: testPassphrase)
        XCTAssertEqual(probe.waitForEndOfOutput(), ["error busy"])
        XCTAssertEqual(probe.waitForExit(), 3)
        store.close()

        let after = try StoreProbeProcess(arguments: ["open", home.path], passphrase: testPassphrase)
        XCTAssertEqual(after.waitForEndOfOutput(), ["opened"])
        XCTAssertEqual(after.waitForExit(), 0)
    }

    func testWeGetBusyWhileAnotherProcessOwnsTheHome() throws {
        try createStore().close()
        let holder = try StoreProbeProcess(arguments: ["hold", home.path], passphrase: testPassphrase)
        XCTAssertEqual(holder.waitForLines { $0.contains("ready") }, ["ready"])
        XCTAssertStoreError(.busy, try openStore())
        XCTAssertStoreError(.busy, try createStore())
        // A wrong passphrase does not get past the lock either.
        XCTAssertStoreError(.busy, try openStore(passphrase: Array("wrong".utf8)))
        holder.closeInput()
        XCTAssertEqual(holder.waitForExit(), 0)
        try openStore().close()
    }

    func testProbeReportsWrongPassphrase() throws {
        try createStore().close()
        let probe = try StoreProbeProcess(arguments: ["open", home.path], passphrase: Array("wrong".utf8))
        XCTAssertEqual(probe.waitForEndOfOutput(), ["error wrongPassphrase"])
        XCTAssertEqual(probe.waitForExit(), 3)
    }

    func testOwnerKilledHoldingTheHomeReleasesIt() throws {
        try createStore().close()
        let holder = try StoreProbeProcess(arguments: ["hold", home.path], passphrase: testPassphrase)
        XCTAssertEqual(holder.waitForLines { $0.contains("ready") }, ["ready"])
        XCTAssertStoreError(.busy, try openStore())
        holder.sigkill()
        XCTAssertNotNil(holder.waitForExit())
        try openStore().close()
    }

    /// The probe commits one event + its processed mark per transaction and prints each id
    /// after the commit returns; it is SIGKILLed mid-loop. Every reported id must be stored,
    /// every stored event must have its mark (no half transaction), and the store must open.
    func testKillingTheWriterLosesNoCommittedRow() throws {
        try createStore().close()
        var expectedTotal = 0
        // Kill after different amounts of work, and a varying moment within a transaction.
        for (run, threshold) in [(1, 5), (2, 40), (3, 120)] {
            let probe = try StoreProbeProcess(arguments: ["insert", home.path, String(run)], passphrase: testPassphrase)
            let seen = probe.waitForLines { lines in lines.filter { $0.hasPrefix("committed ") }.count >= threshold }
            XCTAssertGreaterThanOrEqual(seen.count, threshold, "the probe did not get going: \(seen.suffix(3))")
            usleep(UInt32(run * 1_700))
            probe.sigkill()
            XCTAssertNotNil(probe.waitForExit(), "the probe did not die")
            let lines = probe.waitForEndOfOutput()
            XCTAssertFalse(lines.contains { $0.hasPrefix("error") }, "\(lines.filter { $0.hasPrefix("error") })")
            let committed = lines.compactMap { line -> [UInt8]? in
                guard line.hasPrefix("committed ") else { return nil }
                return Sodium.unhex(String(line.dropFirst("committed ".count)), expectedCount: 32)
            }
            XCTAssertGreaterThanOrEqual(committed.count, threshold)

            let store = try openStore()
            defer { store.close() }
            try store.transaction { tx in
                for id in committed {
                    XCTAssertTrue(try tx.events.contains(id: id), "committed event lost (run \(run))")
                    XCTAssertTrue(try tx.processedEvents.contains(eventID: id), "committed mark lost (run \(run))")
                }
                let events = try tx.events.count()
                let marks = try tx.processedEvents.count()
                XCTAssertEqual(events, marks, "a transaction was half applied")
                // At most the one transaction whose commit raced the kill is stored but unreported.
                let total = expectedTotal + committed.count
                XCTAssertTrue(events == total || events == total + 1, "\(events) stored, \(total) reported")
                expectedTotal = events
            }
            try store.verifyIntegrity()
        }
    }
}
