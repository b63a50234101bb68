import SQLite
import Foundation
import XCTest
@testable import Store
import TestSupport

/// Right passphrase, damaged store: every way of damaging it reads as `storeCorrupt`, and a
/// wrong passphrase is still `wrongPassphrase` whatever state the database is in.
final class StoreCorruptionTests: StoreTestCase {
    /// A closed store of ~300 events (~110 pages), so there are pages well past page 1.
    private func makePopulatedStore() throws -> Int {
        let store = try createStore()
        let padding = String(repeating: "q", count: 1400)
        try store.transaction { tx in
            for n in 0..<300 { try tx.events.insert(testEvent(n, content: "\(n) \(padding)")) }
            try tx.identity.set(secretKey: [UInt8](repeating: 9, count: 32), createdAt: 1)
        }
        store.close()
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: databaseURL.path)[.size] as? NSNumber).intValue
        XCTAssertGreaterThan(size, 100 * BurrowStore.cipherPageSize)
        XCTAssertFalse(FileManager.default.fileExists(atPath: databaseURL.path + "-wal"), "close checkpoints the WAL")
        return size
    }

    private func overwrite(at offset: Int, count: Int, seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let garbage = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let handle = try FileHandle(forWritingTo: databaseURL)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        handle.write(Data(garbage))
    }

    private func truncateDatabase(to size: Int) throws {
        XCTAssertEqual(truncate(databaseURL.path, off_t(size)), 0)
    }

    /// Opens and reads every table, then runs the integrity check.
    private func openAndReadEverything() throws {
        let store = try openStore()
        defer { store.close() }
        _ = try store.events(kind: 1)
        _ = try store.identity()
        try store.verifyIntegrity()
    }

    func testUndamagedStoreReadsAndPassesTheIntegrityCheck() throws {
        _ = try makePopulatedStore()
        try openAndReadEverything()
        let store = try openStore()
        defer { store.close() }
        XCTAssertEqual(try store.eventCount(), 300)
    }

    func testGarbageOverPageOneIsCorrupt() throws {
        _ = try makePopulatedStore()
        // Bytes 0..<16 are SQLCipher's salt; garble the rest of page 1.
        try overwrite(at: 16, count: BurrowStore.cipherPageSize - 16, seed: 1)
        XCTAssertStoreCorrupt(try openStore())
        XCTAssertStoreError(.wrongPassphrase, try openStore(passphrase: Array("wrong".utf8)))
    }

    func testGarbageOverTheSaltIsCorrupt() throws {
        _ = try makePopulatedStore()
        try overwrite(at: 0, count: 16, seed: 2)
        XCTAssertStoreCorrupt(try openStore())
    }

    func testGarbageOverLaterPagesIsCorrupt() throws {
        let size = try makePopulatedStore()
        let page = BurrowStore.cipherPageSize
        try overwrite(at: page, count: size - 2 * page, seed: 3)
        XCTAssertStoreCorrupt(try openAndReadEverything())
    }

    func testAFewFlippedBytesDeepInTheFileAreCaughtByTheIntegrityCheck() throws {
        let size = try makePopulatedStore()
        try overwrite(at: size / 2 + 100, count: 8, seed: 4)
        XCTAssertStoreCorrupt(try openAndReadEverything())
    }

    func testTruncatedToHalfIsCorrupt() throws {
        let size = try makePopulatedStore()
        try truncateDatabase(to: size / 2)
        XCTAssertStoreCorrupt(try openAndReadEverything())
    }

    func testTruncatedInsidePageOneIsCorrupt() throws {
        _ = try makePopulatedStore()
        try truncateDatabase(to: 100)
        XCTAssertStoreCorrupt(try openStore())
    }

    func testTruncatedToNothingIsCorruptAndNotANewStore() throws {
        _ = try makePopulatedStore()
        try truncateDatabase(to: 0)
        XCTAssertStoreCorrupt(try openStore())
        // Nothing was written into the empty file.
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: databaseURL.path)[.size] as? NSNumber, 0)
    }

    func testMissingDatabaseIsCorrupt() throws {
        _ = try makePopulatedStore()
        try FileManager.default.removeItem(at: databaseURL)
        XCTAssertStoreCorrupt(try openStore())
        XCTAssertFalse(FileManager.default.fileExists(atPath: databaseURL.path), "open never creates a database")
    }

    func testDamagedHeaderIsCorrupt() throws {
        _ = try makePopulatedStore()
        let original = try Data(contentsOf: headerURL)
        for damaged in [Data("garbage".utf8), Data(), original.prefix(original.count / 2),
                        Data(String(decoding: original, as: UTF8.self).replacingOccurrences(of: "argon2id13", with: "argon2i13").utf8),
                        Data(String(decoding: original, as: UTF8.self).replacingOccurrences(of: "\"memory_mib\" : 8", with: "\"memory_mib\" : 1000000").utf8)] {
            XCTAssertNotEqual(damaged, original)
            try damaged.write(to: headerURL)
            XCTAssertStoreCorrupt(try openStore())
        }
        try original.write(to: headerURL)
        try openAndReadEverything()
    }

    func testAlteredKeyCheckReadsAsWrongPassphrase() throws {
        // The key check is the only thing that decides "wrong passphrase": with a check value
        // that no passphrase produces, the right passphrase is refused too, before SQLite is asked.
        _ = try makePopulatedStore()
        var header = try StoreHeader.decode(Data(contentsOf: headerURL))
        header.keyCheck[0] ^= 1
        try header.encoded().write(to: headerURL)
        XCTAssertStoreError(.wrongPassphrase, try openStore())
    }

    func testNewerSchemaIsRefused() throws {
        _ = try makePopulatedStore()
        let header = try StoreHeader.decode(Data(contentsOf: headerURL))
        let key = try StoreKey(passphrase: testPassphrase, parameters: header.kdf)
        let connection = try SQLiteConnection(path: databaseURL.path, options: .init(create: false), mapError: StoreError.init(sqlite:))
        try key.withKeyLiteral { try connection.setKey($0) }
        try connection.exec("PRAGMA cipher_page_size = \(header.cipherPageSize)")
        try connection.exec("PRAGMA user_version = 99")
        connection.close()
        XCTAssertStoreError(.unsupportedSchemaVersion(99), try openStore())
    }
}

