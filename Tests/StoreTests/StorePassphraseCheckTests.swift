import Foundation
import XCTest
@testable import Store

/// `verifyPassphrase`: the check a command forwarded to the running node passes instead of
/// opening the store, decided exactly as `open` decides `wrongPassphrase`.
final class StorePassphraseCheckTests: StoreTestCase {
    private func verify(_ passphrase: [UInt8] = testPassphrase) throws {
        try BurrowStore.verifyPassphrase(home: home, passphrase: passphrase)
    }

    func testAgreesWithOpen() throws {
        try createStore().close()
        try verify()
        for wrong in [Array("correct horse battery stapler".utf8), [], Array(testPassphrase.dropLast()), testPassphrase + [0]] {
            XCTAssertStoreError(.wrongPassphrase, try verify(wrong))
            XCTAssertStoreError(.wrongPassphrase, try openStore(passphrase: wrong))
        }
        try openStore().close()
    }

    func testWorksWhileThisProcessOwnsTheHome() throws {
        let store = try createStore()
        defer { store.close() }
        try verify()
        XCTAssertStoreError(.wrongPassphrase, try verify(Array("wrong".utf8)))
        // The store is still ours and usable: nothing was locked, closed or written.
        XCTAssertStoreError(.busy, try openStore())
        XCTAssertTrue(try store.insertEvent(testEvent(1)))
    }

    func testWorksWhileAnotherProcessOwnsTheHome() throws {
        try createStore().close()
        let holder = try StoreProbeProcess(arguments: ["hold", home.path], passphrase: testPassphrase)
        XCTAssertEqual(holder.waitForLines { $0.contains("ready") }, ["ready"])
        XCTAssertStoreError(.busy, try openStore())
        try verify()
        XCTAssertStoreError(.wrongPassphrase, try verify(Array("wrong".utf8)))
        holder.closeInput()
        XCTAssertEqual(holder.waitForExit(), 0)
    }

    func testTouchesNeitherTheDatabaseNorTheLock() throws {
        try createStore().close()
        for name in ["store.db", "store.db-wal", "store.db-shm", "store.lock"] {
            try? FileManager.default.removeItem(at: home.appendingPathComponent(name))
        }
        let before = try homeFiles().map(\.lastPathComponent).sorted()
        XCTAssertEqual(before, ["store.header"])
        try verify()
        XCTAssertStoreError(.wrongPassphrase, try verify(Array("wrong".utf8)))
        XCTAssertEqual(try homeFiles().map(\.lastPathComponent).sorted(), before)
        // An open, by contrast, needs the database.
        XCTAssertStoreCorrupt(try openStore())
    }

    func testMissingOrDamagedStore() throws {
        XCTAssertStoreError(.notInitialized, try verify())
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        XCTAssertStoreError(.notInitialized, try verify())

        try createStore().close()
        let original = try Data(contentsOf: headerURL)
        try Data("{\"format\":\"burrow-store\"}".utf8).write(to: headerURL)
        XCTAssertStoreCorrupt(try verify())
        XCTAssertStoreCorrupt(try openStore())
        try original.write(to: headerURL)

        // A flipped key-check value is indistinguishable from a wrong passphrase, for both.
        var header = try StoreHeader.decode(original)
        header.keyCheck[0] ^= 1
        try header.encoded().write(to: headerURL)
        XCTAssertStoreError(.wrongPassphrase, try verify())
        XCTAssertStoreError(.wrongPassphrase, try openStore())
    }
}
