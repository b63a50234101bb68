import Foundation
import XCTest
@testable import Store

/// Fast Argon2id for tests (the minimum); one test covers the 64 MiB default.
let testKDFMemoryMiB = 8
let testPassphrase: [UInt8] = Array("correct horse battery staple".utf8)

/// A fresh home under the temporary directory, removed by `StoreTestCase.tearDown`.
class StoreTestCase: XCTestCase {
    private(set) var home: URL!

    override func setUpWithError() throws {
        home = FileManager.default.temporaryDirectory
            .appendingPathComponent("burrow-store-tests-\(UUID().uuidString)")
            .appendingPathComponent("home")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: home.deletingLastPathComponent())
    }

    func createStore(passphrase: [UInt8] = testPassphrase) throws -> BurrowStore {
        try BurrowStore.create(home: home, passphrase: passphrase, kdfMemoryMiB: testKDFMemoryMiB)
    }

    func openStore(passphrase: [UInt8] = testPassphrase) throws -> BurrowStore {
        try BurrowStore.open(home: home, passphrase: passphrase)
    }

    var databaseURL: URL { home.appendingPathComponent("store.db") }
    var headerURL: URL { home.appendingPathComponent("store.header") }

    /// Every regular file in the home.
    func homeFiles() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: home, includingPropertiesForKeys: nil).filter {
            (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
        }
    }
}

/// Asserts `body` throws exactly `expected`.
func XCTAssertStoreError<T>(_ expected: StoreError, _ body: @autoclosure () throws -> T,
                            file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
        XCTAssertEqual(error as? StoreError, expected, "\(error)", file: file, line: line)
    }
}

/// Asserts `body` throws `storeCorrupt` and that the message is ours, not SQLite's.
func XCTAssertStoreCorrupt<T>(_ body: @autoclosure () throws -> T, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
        guard case .storeCorrupt? = error as? StoreError else {
            return XCTFail("expected storeCorrupt, got \(error)", file: file, line: line)
        }
        XCTAssertFalse(String(describing: error).lowercased().contains("not a database"), file: file, line: line)
    }
}

/// A deterministic 32-byte id.
func testID(_ n: Int, tag: UInt8 = 0x11) -> [UInt8] {
    var id = [UInt8](repeating: tag, count: 24)
    for shift in stride(from: 56, through: 0, by: -8) { id.append(UInt8(truncatingIfNeeded: UInt64(n) >> UInt64(shift))) }
    return id
}

func testEvent(_ n: Int, kind: Int = 1, createdAt: Int64? = nil, content: String = "hello") -> StoredEvent {
    StoredEvent(id: testID(n), kind: kind, pubkey: [UInt8](repeating: 0x22, count: 32),
                createdAt: createdAt ?? Int64(1_700_000_000 + n),
                json: "{\"kind\":\(kind),\"content\":\"\(content)\"}", receivedAt: 1_700_000_500)
}

/// Whether `needle` occurs in `haystack`.
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    let first = needle[0]
    var i = 0
    let last = haystack.count - needle.count
    while i <= last {
        if haystack[i] == first && haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
        i += 1
    }
    return false
}

/// POSIX mode bits of a path.
func mode(of url: URL) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}
