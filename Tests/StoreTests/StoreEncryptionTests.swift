import Foundation
import XCTest
@testable import Store

/// Nothing stored is readable in the files of the home: the database, its WAL and shared
/// memory index, the header and the lock file are grepped byte by byte.
final class StoreEncryptionTests: StoreTestCase {
    private let marker = "BURROW-PLAINTEXT-MARKER-6d1f0c"
    private let relayURL = "wss://marker-relay-8c2e.example"
    private let secretKey: [UInt8] = (0..<32).map { UInt8(0xA0 &+ $0) }

    private func needles() -> [(String, [UInt8])] {
        [
            ("event content", Array(marker.utf8)),
            ("relay url", Array(relayURL.utf8)),
            ("secret key", secretKey),
            ("secret key hex", Array(Sodium.hex(secretKey).utf8)),
            ("event id", testID(77, tag: 0xE7)),
            ("passphrase", testPassphrase),
        ]
    }

    private func assertNoPlaintext(_ stage: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let files = try homeFiles()
        XCTAssertFalse(files.isEmpty)
        for url in files {
            let bytes = [UInt8](try Data(contentsOf: url))
            for (name, needle) in needles() {
                XCTAssertFalse(contains(bytes, needle), "\(stage): \(name) in clear in \(url.lastPathComponent)", file: file, line: line)
            }
        }
    }

    func testTheGrepFindsPlaintextWhenItIsThere() throws {
        // Control: the same search over an unencrypted file does find every needle.
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let plain = Array(needles().map { $0.1 + [0] }.joined())
        try Data(plain).write(to: home.appendingPathComponent("plain"))
        let bytes = [UInt8](try Data(contentsOf: home.appendingPathComponent("plain")))
        for (name, needle) in needles() { XCTAssertTrue(contains(bytes, needle), name) }
    }

    func testStoredContentsNeverAppearInClear() throws {
        let store = try createStore()
        let content = String(repeating: "\(marker) ", count: 40)
        try store.transaction { tx in
            try tx.identity.set(secretKey: secretKey, createdAt: 1)
            try tx.relays.add(url: relayURL)
            try tx.events.insert(StoredEvent(id: testID(77, tag: 0xE7), kind: 9, pubkey: testID(1),
                                             createdAt: 1, json: "{\"content\":\"\(content)\"}", receivedAt: 2))
            try tx.processedEvents.mark(eventID: testID(77, tag: 0xE7), outcome: marker)
        }
        // Many small commits so the WAL holds several frames of the marked pages.
        for n in 0..<50 { try store.insertEvent(testEvent(n, content: "\(marker) \(n)")) }

        // Open: the data sits in the WAL.
        let names = Set(try homeFiles().map(\.lastPathComponent))
        XCTAssertTrue(names.isSuperset(of: ["store.db", "store.db-wal", "store.db-shm", "store.header", "store.lock"]), "\(names)")
        XCTAssertEqual(try store.event(id: testID(77, tag: 0xE7))?.json.contains(marker), true, "the marker was stored")
        try assertNoPlaintext("while open")

        // Deleting a row (secure_delete rewrites its page) leaves no trace in clear either.
        XCTAssertTrue(try store.removeRelay(url: relayURL))
        store.close()
        try assertNoPlaintext("after close")

        // And the contents are all there for the right key.
        let reopened = try openStore()
        defer { reopened.close() }
        XCTAssertEqual(try reopened.identity()?.secretKey, secretKey)
        XCTAssertEqual(try reopened.eventCount(), 51)
        try assertNoPlaintext("reopened")
    }
}
