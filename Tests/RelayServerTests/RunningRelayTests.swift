import Foundation
import Nostr
import RelayClient
import XCTest
@testable import RelayServer
import TestSupport

/// Starting and stopping the embeddable relay: failures are typed errors that leave nothing
/// running, and the URLs NIP-42 accepts follow the listening address.
final class RunningRelayTests: XCTestCase {
    func testStartFailsCleanlyOnATakenPortOrAnUnusableDataDirectory() async throws {
        try await bounded(60) {
            let first = TestRelay()
            defer { first.remove() }
            let relay = try await first.start()
            XCTAssertTrue(relay.url.hasPrefix("ws://127.0.0.1:"))
            XCTAssertNotEqual(relay.port, 0)

            let second = TestRelay()
            defer { second.remove() }
            do {
                _ = try await second.start { $0.port = relay.port }
                XCTFail("a second relay bound a taken port")
            } catch RelayServerError.listenFailed(let why) {
                XCTAssertFalse(why.isEmpty)
            }

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("relay-not-a-dir-\(UUID().uuidString)")
            try Data("x".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            do {
                _ = try await RunningRelay.start(first.configuration { $0.dataDirectory = file.path })
                XCTFail("a file was used as the data directory")
            } catch RelayServerError.dataDirectory(let path, _) {
                XCTAssertEqual(path, file.path)
            }
            do {
                _ = try await RunningRelay.start(first.configuration { $0.limits.queryLimit = 0 })
                XCTFail("an invalid configuration started")
            } catch RelayServerError.invalidConfiguration {}

            // The first relay was not disturbed.
            let pool = try RelayPool(urls: [relay.url], authKeys: nil)
            let note = try TestEvents.sign(kind: 1, keys: TestEvents.keys())
            let answer = await pool.publish(note, timeout: .seconds(10))
            XCTAssertEqual(answer.first?.accepted, true)
            await pool.close()
            await relay.close()
            await relay.close()  // idempotent
            let closed = try? await relay.storedEventCount()
            XCTAssertNil(closed, "the database is closed with the relay")
        }
    }

    func testNIP42AcceptsTheListeningAddressLoopbackNamesAndPublicURLs() {
        XCTAssertEqual(RunningRelay.acceptedRelayURLs(host: "127.0.0.1", port: 7447, publicURLs: []),
                       ["ws://127.0.0.1:7447", "ws://localhost:7447", "ws://[::1]:7447"])
        XCTAssertEqual(RunningRelay.acceptedRelayURLs(host: "192.168.1.10", port: 7447, publicURLs: ["wss://relay.home.example"]),
                       ["wss://relay.home.example", "ws://192.168.1.10:7447"])
        XCTAssertEqual(RunningRelay.acceptedRelayURLs(host: "::1", port: 1, publicURLs: []).first, "ws://[::1]:1")
    }
}
