import Foundation
import TestSupport
import XCTest

/// Direct messages survive the sender or the receiver dying at each DM failpoint (Docs/protocols/pigeon-dm.md
/// section 7): nothing is lost, nothing is shown twice, and no message key is used twice — a
/// reused key would make the receiver refuse later frames as `message_replayed` or fail to
/// decrypt them, so every text arriving exactly once, with no refusals, proves it.
final class DMCrashSafetyTests: XCTestCase {
    var root: URL!
    var relay: RelayProcess!

    override func setUp() async throws {
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-dmcrash-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "dm crash passphrase".write(to: root.appendingPathComponent("pass"), atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start(RelayProcess.Options(notesPerMinute: 100_000))
    }

    override func tearDown() async throws {
        relay?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    func testKilledAtEveryDMFailpointLosesAndDoublesNothing() throws {
        let pass = root.appendingPathComponent("pass").path
        let alice = try BurrowHome.create(in: root, name: "alice", relay: relay.url, passphraseFile: pass)
        let bob = try BurrowHome.create(in: root, name: "bob", relay: relay.url, passphraseFile: pass)
        try alice.exchangeCards(with: bob, nicknames: ("Alice", "Bob"))

        var fired: [String: Int] = [:]
        func crash(_ home: BurrowHome, _ args: [String], at failpoint: String) throws {
            let result = try home.run(args, environment: ["BURROW_TEST_FAILPOINT": failpoint], executable: BurrowProcess.failpointProbe)
            if result.status == 86 {
                fired[failpoint, default: 0] += 1
            } else {
                XCTAssertEqual(result.status, 0, "\(args) at \(failpoint): \(result.stdout) \(result.stderr)")
            }
        }
        func syncErrors(_ home: BurrowHome) throws -> [String] {
            let report = try home.ok(["sync"])
            return (report["errors"] as? [[String: Any]] ?? []).map { "\($0["reason"] ?? "")" }
        }

        // The first message waits for the handshake, which completes across syncs.
        var sent = ["m0"]
        _ = try alice.ok(["dm", "send", "Bob", "m0", "--timeout", "1"])
        XCTAssertEqual(try syncErrors(bob), [])
        XCTAssertEqual(try syncErrors(alice), [])

        for round in 1...9 {
            let text = "m\(round)"
            sent.append(text)
            switch round % 3 {
            case 1:
                // Alice dies after committing the ratchet step and the frame, before sending it.
                try crash(alice, ["dm", "send", "Bob", text], at: "dm.stored")
            case 2:
                // Alice dies after a relay took the frame, before marking it sent: it goes again.
                try crash(alice, ["dm", "send", "Bob", text], at: "dm.published")
            default:
                // Bob dies right after committing a received frame.
                _ = try alice.ok(["dm", "send", "Bob", text])
                try crash(bob, ["sync"], at: "dm.received")
            }
            // Restarted, each side syncs: Alice sends what she stored, Bob reads what came.
            XCTAssertEqual(try syncErrors(alice), [], "round \(round)")
            XCTAssertEqual(try syncErrors(bob), [], "round \(round)")
        }
        XCTAssertEqual(try syncErrors(alice), [])

        let read = try XCTUnwrap(try bob.ok(["dm", "read", "Alice"])["messages"] as? [[String: Any]])
        let texts = read.compactMap { $0["text"] as? String }
        XCTAssertEqual(texts.sorted(), sent.sorted(), "every message exactly once")
        XCTAssertEqual(Set(read.compactMap { $0["direction"] as? String }), ["in"])
        // Bob's replies still decrypt at Alice: both ratchets are intact.
        _ = try bob.ok(["dm", "send", "Alice", "all good"])
        XCTAssertEqual(try syncErrors(alice), [])
        let atAlice = try XCTUnwrap(try alice.ok(["dm", "read", "Bob"])["messages"] as? [[String: Any]])
        XCTAssertEqual(atAlice.filter { $0["direction"] as? String == "in" }.compactMap { $0["text"] as? String }, ["all good"])
        XCTAssertTrue(atAlice.filter { $0["direction"] as? String == "out" }.allSatisfy { ["sent", "delivered"].contains($0["status"] as? String ?? "") },
                      "\(atAlice)")
        for name in try BurrowProcess.failpointNames().filter({ $0.hasPrefix("dm.") }) {
            XCTAssertEqual(fired[name], 3, "failpoint \(name) fired \(fired[name] ?? 0) times")
        }
    }
}
