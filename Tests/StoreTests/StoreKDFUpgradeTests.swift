import Foundation
import XCTest
@testable import Store

/// Argon2id parameters an earlier policy allowed are raised at the next successful unlock
/// (issue 25, as the design's PBKDF2 v1→v2 migration), under the same passphrase; and a
/// passphrase change keeps the data and re-salts.
final class StoreKDFUpgradeTests: StoreTestCase {
    private func header() throws -> [String: Any] {
        let data = try Data(contentsOf: headerURL)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func kdf() throws -> [String: Any] { try XCTUnwrap(try header()["kdf"] as? [String: Any]) }

    func testAnEarlierPolicysWeakParametersAreRaisedAtTheNextUnlock() throws {
        let old = try BurrowStore.create(home: home, passphrase: testPassphrase, kdfMemoryMiB: 8, passes: 1, policy: 1)
        XCTAssertTrue(try old.insertEvent(testEvent(1)))
        old.close()
        var before = try kdf()
        XCTAssertEqual(before["passes"] as? Int, 1)
        XCTAssertEqual(before["policy"] as? Int, 1)

        let upgraded = try openStore()
        XCTAssertEqual(upgraded.kdfParameters.passes, StoreKDFParameters.defaultPasses)
        XCTAssertEqual(upgraded.kdfParameters.memoryMiB, StoreKDFParameters.defaultMemoryMiB)
        XCTAssertEqual(try upgraded.transaction { try $0.events.get(id: testEvent(1).id) }?.json, testEvent(1).json, "the data stays")
        upgraded.close()
        let after = try kdf()
        XCTAssertEqual(after["passes"] as? Int, 3)
        XCTAssertEqual(after["memory_mib"] as? Int, 64)
        XCTAssertEqual(after["policy"] as? Int, 2)
        XCTAssertNotEqual(after["salt"] as? String, before["salt"] as? String, "a fresh salt")
        XCTAssertNil(try header()["pending"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.appendingPathComponent("store.db.next").path))

        // Current parameters are left alone.
        before = after
        try openStore().close()
        XCTAssertEqual(try kdf()["salt"] as? String, before["salt"] as? String)
        XCTAssertStoreError(.wrongPassphrase, try openStore(passphrase: Array("wrong".utf8)))
    }

    func testAPassphraseChangeKeepsTheDataAndRefusesTheOldPassphrase() throws {
        let store = try createStore()
        for n in 1...50 { XCTAssertTrue(try store.insertEvent(testEvent(n))) }
        let newPassphrase = Array("a much better passphrase".utf8)
        var stages: [BurrowStore.PassphraseChangeStage] = []
        try store.changePassphrase(to: newPassphrase) { stages.append($0) }
        XCTAssertEqual(stages, [.copied, .pending, .swapped])
        // The open store keeps working under the new key.
        XCTAssertTrue(try store.insertEvent(testEvent(51)))
        store.close()
        XCTAssertStoreError(.wrongPassphrase, try openStore())
        let reopened = try openStore(passphrase: newPassphrase)
        XCTAssertEqual(try reopened.transaction { try $0.events.count(kind: 1) }, 51)
        try reopened.verifyIntegrity()
        XCTAssertEqual(try reopened.schemaVersion(), Schema.latestVersion)
        XCTAssertStoreError(.invalidInput("the passphrase is empty"), try reopened.changePassphrase(to: []))
        reopened.close()
    }
}
