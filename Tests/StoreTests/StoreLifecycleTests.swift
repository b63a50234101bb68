import Foundation
import XCTest
@testable import Store

/// Creating, reopening and the errors that say why a store cannot be opened.
final class StoreLifecycleTests: StoreTestCase {
    func testCreateThenReopenWithTheRightPassphrase() throws {
        XCTAssertFalse(BurrowStore.exists(home: home))
        let store = try createStore()
        XCTAssertTrue(BurrowStore.exists(home: home))
        XCTAssertEqual(store.kdfParameters.memoryMiB, testKDFMemoryMiB)
        XCTAssertEqual(store.kdfParameters.passes, 3)
        XCTAssertEqual(try store.schemaVersion(), Schema.latestVersion)
        try store.setIdentity(secretKey: [UInt8](repeating: 0x5A, count: 32), createdAt: 1_700_000_000)
        try store.addRelay(url: "wss://relay.example", addedAt: 10)
        XCTAssertTrue(try store.insertEvent(testEvent(1)))
        store.close()
        XCTAssertTrue(store.isClosed)

        let reopened = try openStore()
        defer { reopened.close() }
        XCTAssertEqual(reopened.kdfParameters, store.kdfParameters)
        XCTAssertEqual(try reopened.identity(), StoredIdentity(secretKey: [UInt8](repeating: 0x5A, count: 32), createdAt: 1_700_000_000))
        XCTAssertEqual(try reopened.relays(), [StoredRelay(url: "wss://relay.example", addedAt: 10)])
        XCTAssertEqual(try reopened.event(id: testID(1)), testEvent(1))
        XCTAssertEqual(try reopened.schemaVersion(), Schema.latestVersion)
    }

    func testWrongPassphraseIsReportedAsSuch() throws {
        try createStore().close()
        XCTAssertStoreError(.wrongPassphrase, try openStore(passphrase: Array("correct horse battery stapler".utf8)))
        XCTAssertStoreError(.wrongPassphrase, try openStore(passphrase: []))
        // The failed attempts released the home: the right passphrase still opens it.
        try openStore().close()
    }

    func testMissingStoreIsNotInitialized() throws {
        XCTAssertStoreError(.notInitialized, try openStore())
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        XCTAssertStoreError(.notInitialized, try openStore())
        XCTAssertFalse(BurrowStore.exists(home: home))
    }

    func testCreateRefusesAnExistingStore() throws {
        try createStore().close()
        XCTAssertStoreError(.alreadyInitialized, try createStore())
        XCTAssertStoreError(.alreadyInitialized, try createStore(passphrase: Array("another".utf8)))
        try openStore().close()
    }

    func testCreateReplacesWhatAnInterruptedCreateLeft() throws {
        // A database without a header (create killed before the header was installed) can never
        // be opened: its salt was never recorded.
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try Data(repeating: 0x42, count: 8192).write(to: databaseURL)
        XCTAssertFalse(BurrowStore.exists(home: home))
        XCTAssertStoreError(.notInitialized, try openStore())
        let store = try createStore()
        XCTAssertEqual(try store.eventCount(), 0)
        store.close()
        try openStore().close()
    }

    func testDefaultKDFParameters() throws {
        let store = try BurrowStore.create(home: home, passphrase: testPassphrase)
        XCTAssertEqual(store.kdfParameters.memoryMiB, 64)
        XCTAssertEqual(store.kdfParameters.passes, 3)
        XCTAssertEqual(store.kdfParameters.salt.count, 16)
        store.close()

        let header = try StoreHeader.decode(Data(contentsOf: headerURL))
        XCTAssertEqual(header.kdf.memoryMiB, 64)
        XCTAssertEqual(header.kdf.passes, 3)
        XCTAssertEqual(header.kdf.salt, store.kdfParameters.salt)
        XCTAssertEqual(header.keyCheck.count, 32)
        let reopened = try openStore()
        XCTAssertEqual(reopened.kdfParameters, store.kdfParameters)
        reopened.close()
        XCTAssertStoreError(.wrongPassphrase, try openStore(passphrase: Array("nope".utf8)))
    }

    func testKDFMemoryBounds() throws {
        XCTAssertStoreError(.invalidKDFMemory(mib: 7), try BurrowStore.create(home: home, passphrase: testPassphrase, kdfMemoryMiB: 7))
        XCTAssertStoreError(.invalidKDFMemory(mib: 0), try BurrowStore.create(home: home, passphrase: testPassphrase, kdfMemoryMiB: 0))
        XCTAssertStoreError(.invalidKDFMemory(mib: 4097), try BurrowStore.create(home: home, passphrase: testPassphrase, kdfMemoryMiB: 4097))
        XCTAssertFalse(BurrowStore.exists(home: home))
        let store = try BurrowStore.create(home: home, passphrase: testPassphrase, kdfMemoryMiB: 9)
        XCTAssertEqual(store.kdfParameters.memoryMiB, 9)
        store.close()
        XCTAssertEqual(try openStore().kdfParameters.memoryMiB, 9)
    }

    func testEmptyPassphraseIsRefusedAtCreate() throws {
        XCTAssertStoreError(.invalidInput("the passphrase is empty"), try createStore(passphrase: []))
        XCTAssertFalse(BurrowStore.exists(home: home))
    }

    func testEachStoreHasItsOwnSalt() throws {
        let a = try createStore()
        let saltA = a.kdfParameters.salt
        a.close()
        let otherHome = home.deletingLastPathComponent().appendingPathComponent("other")
        let b = try BurrowStore.create(home: otherHome, passphrase: testPassphrase, kdfMemoryMiB: testKDFMemoryMiB)
        defer { b.close() }
        XCTAssertNotEqual(saltA, b.kdfParameters.salt)
        let headerA = try StoreHeader.decode(Data(contentsOf: headerURL))
        let headerB = try StoreHeader.decode(Data(contentsOf: otherHome.appendingPathComponent("store.header")))
        XCTAssertNotEqual(headerA.keyCheck, headerB.keyCheck)
    }

    func testHomeIs0700AndEveryFileIs0600() throws {
        let store = try createStore()
        try store.insertEvent(testEvent(1))
        XCTAssertEqual(try mode(of: home), 0o700)
        let files = try homeFiles()
        let names = Set(files.map(\.lastPathComponent))
        XCTAssertTrue(names.isSuperset(of: ["store.db", "store.db-wal", "store.db-shm", "store.header", "store.lock"]), "\(names)")
        for file in files { XCTAssertEqual(try mode(of: file), 0o600, file.lastPathComponent) }
        store.close()
        for file in try homeFiles() { XCTAssertEqual(try mode(of: file), 0o600, file.lastPathComponent) }
    }

    func testConnectionSettings() throws {
        let store = try createStore()
        defer { store.close() }
        let settings = try store.transaction { tx -> [String] in
            let c = try tx.connection()
            return try ["journal_mode", "foreign_keys", "secure_delete", "synchronous", "temp_store", "cipher_page_size", "user_version"]
                .map { pragma in try c.queryFirst("PRAGMA \(pragma)") { $0.text(0) ?? "" } ?? "" }
        }
        XCTAssertEqual(settings, ["wal", "1", "1", "2", "2", "4096", String(Schema.latestVersion)])
    }

    func testHomeWithMissingParentsIsCreated() throws {
        let deep = home.appendingPathComponent("a/b/home")
        try BurrowStore.create(home: deep, passphrase: testPassphrase, kdfMemoryMiB: testKDFMemoryMiB).close()
        XCTAssertEqual(try mode(of: deep), 0o700)
        XCTAssertTrue(BurrowStore.exists(home: deep))
    }

    func testExistingHomeDirectoryIsTightenedTo0700() throws {
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try createStore().close()
        XCTAssertEqual(try mode(of: home), 0o700)
    }

    func testSecondOpenInTheSameProcessIsBusy() throws {
        let store = try createStore()
        XCTAssertStoreError(.busy, try openStore())
        XCTAssertStoreError(.busy, try createStore())
        store.close()
        let again = try openStore()
        again.close()
    }

    func testClosedStoreRefusesUse() throws {
        let store = try createStore()
        store.close()
        store.close()
        XCTAssertThrowsError(try store.eventCount()) { error in
            guard case .misuse? = error as? StoreError else { return XCTFail("\(error)") }
        }
    }

    func testErrorDescriptionsCarryNoSecrets() throws {
        let errors: [StoreError] = [.notInitialized, .alreadyInitialized, .wrongPassphrase, .storeCorrupt("x"), .busy,
                                    .sqlite(code: 1, message: "m"), .invalidKDFMemory(mib: 1), .invalidInput("y"),
                                    .io(operation: "op", errno: 2), .keyDerivationFailed, .unsupportedSchemaVersion(9),
                                    .misuse("z")]
        for error in errors { XCTAssertFalse(String(describing: error).isEmpty) }
        let identity = StoredIdentity(secretKey: [UInt8](repeating: 0xC3, count: 32), createdAt: 1)
        var dumped = ""
        dump(identity, to: &dumped)
        for text in [String(describing: identity), String(reflecting: identity), dumped] {
            XCTAssertFalse(text.lowercased().contains("c3c3"), text)
            XCTAssertFalse(text.contains("195"), text)
        }
    }
}
