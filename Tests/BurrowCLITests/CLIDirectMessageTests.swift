import Foundation
import TestSupport
import XCTest

/// The DM commands of Docs/cli.md through the real program: cards (with a QR code a real
/// decoder reads back), contacts, safety numbers, sending and reading, and the error codes.
final class CLIDirectMessageTests: XCTestCase {
    var root: URL!
    var relay: RelayProcess!

    override func setUp() async throws {
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-clidm-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "cli dm passphrase".write(to: root.appendingPathComponent("pass"), atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start()
    }

    override func tearDown() async throws {
        relay?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    func testCardsContactsSafetyNumbersAndMessages() throws {
        let pass = root.appendingPathComponent("pass").path
        let alice = try BurrowHome.create(in: root, name: "alice", relay: relay.url, passphraseFile: pass)
        let bob = try BurrowHome.create(in: root, name: "bob", relay: relay.url, passphraseFile: pass)

        // The card, and its QR code read back by zbarimg from the printed half blocks.
        let card = try alice.ok(["contact", "card", "--qr", "--nickname", "Alice"])
        let text = try XCTUnwrap(card["card"] as? String)
        XCTAssertTrue(text.hasPrefix("burrowcard1"))
        XCTAssertEqual(card["nickname"] as? String, "Alice")
        XCTAssertEqual(card["relays"] as? [String], [relay.url])
        XCTAssertEqual(card["npub"] as? String, try alice.ok(["whoami"])["npub"] as? String)
        let lines = try XCTUnwrap(card["qr"] as? [String])
        let rows = lines.flatMap { line -> [[Bool]] in
            let cells = Array(line)
            return [cells.map { $0 == "█" || $0 == "▀" }, cells.map { $0 == "█" || $0 == "▄" }]
        }
        XCTAssertEqual(lines.count, 37, "a short card is version 13 (69 modules) plus the margin, in half blocks")
        XCTAssertEqual(try Zbar.decode(Image(rows: rows, border: 4, borderDark: false, scale: 4)), text.uppercased())
        // The same card again: nothing changed, nothing reissued.
        XCTAssertEqual(try alice.ok(["contact", "card"])["card"] as? String, text)
        XCTAssertEqual(try alice.errorCode(["contact", "card", "--nickname", String(repeating: "x", count: 33)]), "invalid_input")

        // Contacts: added by card (stdin too), listed, found by name.
        let added = try XCTUnwrap(try bob.ok(["contact", "add", text])["contact"] as? [String: Any])
        XCTAssertEqual(added["name"] as? String, "Alice")
        XCTAssertEqual(added["state"] as? String, "added")
        XCTAssertEqual(added["verified"] as? Bool, false)
        let bobCard = try XCTUnwrap(try bob.ok(["contact", "card", "--nickname", "Bob"])["card"] as? String)
        let viaStdin = try BurrowProcess.run(["contact", "add", "-", "--name", "Bobby", "--home", alice.path, "--passphrase-file", pass, "--json"],
                                             stdin: bobCard + "\n")
        XCTAssertEqual(viaStdin.status, 0, viaStdin.stdout + viaStdin.stderr)
        XCTAssertEqual((try alice.ok(["contact", "list"])["contacts"] as? [[String: Any]])?.compactMap { $0["name"] as? String }, ["Bobby"])
        XCTAssertEqual(try alice.errorCode(["contact", "add", "burrowcard1xyz"]), "bad_card")
        XCTAssertEqual(try alice.errorCode(["contact", "verify", "Carol"]), "unknown_contact")
        XCTAssertEqual(try alice.errorCode(["dm", "send", "Carol", "hi"]), "unknown_contact")
        XCTAssertEqual(try alice.errorCode(["dm", "send", "Bobby", String(repeating: "x", count: 16_358)]), "message_too_large")

        // Safety numbers: the same 60 digits on both sides; --match checks them.
        let fromAlice = try XCTUnwrap(try alice.ok(["contact", "verify", "Bobby"])["safety_number"] as? String)
        let fromBob = try XCTUnwrap(try bob.ok(["contact", "verify", "Alice"])["safety_number"] as? String)
        XCTAssertEqual(fromAlice, fromBob)
        XCTAssertEqual(fromAlice.filter(\.isNumber).count, 60)
        XCTAssertEqual(try alice.errorCode(["contact", "verify", "Bobby", "--match", String(repeating: "0", count: 60)]), "safety_number_mismatch")
        let verified = try alice.ok(["contact", "verify", "Bobby", "--match", fromBob])
        XCTAssertEqual((verified["contact"] as? [String: Any])?["verified"] as? Bool, true)

        // A message across the handshake, then read on both sides.
        let queued = try XCTUnwrap(try alice.ok(["dm", "send", "Bobby", "hello Bob", "--timeout", "1"])["message"] as? [String: Any])
        XCTAssertEqual(queued["status"] as? String, "queued")
        _ = try bob.ok(["sync"])
        _ = try alice.ok(["sync"])
        let read = try XCTUnwrap(try bob.ok(["dm", "read", "--sync"])["messages"] as? [[String: Any]])
        XCTAssertEqual(read.compactMap { $0["text"] as? String }, ["hello Bob"])
        XCTAssertEqual(read.first?["contact"] as? String, "Alice")
        XCTAssertEqual(read.first?["direction"] as? String, "in")
        XCTAssertEqual(read.first?["verified"] as? Bool, false, "Bob never compared the digits")
        let mine = try XCTUnwrap(try alice.ok(["dm", "read", "Bobby"])["messages"] as? [[String: Any]])
        XCTAssertEqual(mine.first?["verified"] as? Bool, true)
        XCTAssertEqual(try alice.errorCode(["dm", "send", "Bobby", "x", "--via", "mesh"]), "no_route")

        // Removing a contact forgets its session.
        XCTAssertEqual((try alice.ok(["contact", "remove", "Bobby"])["contact"] as? [String: Any])?["name"] as? String, "Bobby")
        XCTAssertEqual((try alice.ok(["contact", "list"])["contacts"] as? [Any])?.count, 0)
    }

    /// `burrow run` answers a handshake and prints the message as a `dm` line, live, with no
    /// sync on its side; Alice's `dm send` completes the handshake within its timeout.
    func testRunAnswersHandshakesAndPrintsDMsLive() async throws {
        let pass = root.appendingPathComponent("pass").path
        let alice = try BurrowHome.create(in: root, name: "alice", relay: relay.url, passphraseFile: pass)
        let bob = try BurrowHome.create(in: root, name: "bob", relay: relay.url, passphraseFile: pass)
        try alice.exchangeCards(with: bob, nicknames: ("Alice", "Bob"))

        let run = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", bob.path, "--passphrase-file", pass, "--json", "--timeout", "5"])
        defer { run.stop() }
        _ = try await run.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))

        let sent = try XCTUnwrap(try alice.ok(["dm", "send", "Bob", "live DM", "--timeout", "15"])["message"] as? [String: Any])
        XCTAssertEqual(sent["status"] as? String, "sent", "the handshake completed within the timeout")
        let line = try await run.waitForLine(containing: #""type":"dm""#, timeout: .seconds(20))
        let message = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        XCTAssertEqual(message["text"] as? String, "live DM")
        XCTAssertEqual(message["contact"] as? String, "Alice")
        XCTAssertEqual(message["direction"] as? String, "in")
        XCTAssertEqual(message["id"] as? String, sent["id"] as? String)
        // Commands reach the running node: Bob answers through it.
        _ = try bob.ok(["dm", "send", "Alice", "got it"])
        _ = try alice.ok(["sync"])
        let atAlice = try XCTUnwrap(try alice.ok(["dm", "read", "Bob"])["messages"] as? [[String: Any]])
        XCTAssertEqual(atAlice.compactMap { $0["text"] as? String }, ["live DM", "got it"])
    }
}
