import Foundation
import Nostr
import Pigeon
import TestSupport
import XCTest

/// Issue 19 through the real program: what a stranger who knows our card can send, and what
/// the node must survive (findings 1, 2 and 6).
final class CLIStrangerTests: XCTestCase {
    var root: URL!
    var relay: RelayProcess!
    var pass: String { root.appendingPathComponent("pass").path }

    override func setUp() async throws {
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-stranger-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "stranger passphrase".write(to: root.appendingPathComponent("pass"), atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start()
    }

    override func tearDown() async throws {
        relay?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// Completes a handshake as the initiator against `home` (which answers on `sync`).
    func handshake(_ stranger: StrangerPeer, with home: BurrowHome, cardText: String) async throws -> ContactCard {
        let (h1, target) = try stranger.handshake1(to: cardText)
        try await stranger.publish(try stranger.wrap(h1, to: target.nostrKey))
        _ = try home.ok(["sync"])
        let frames = try await stranger.receivedFrames()
        let h2 = try XCTUnwrap(frames.first { $0.count > 1 && $0[1] == FrameType.handshake2.rawValue }, "the node answered the handshake1")
        let replies = try stranger.deliver(h2)
        XCTAssertNotNil(replies.established)
        return target
    }

    func testAStrangersLargestSentAtAndCardTimeLeaveTheNodeRunningAndTheNextHonestDMArrives() async throws {
        let bob = try BurrowHome.create(in: root, name: "bob", relay: relay.url, passphraseFile: pass)
        let bobCard = try XCTUnwrap(try bob.ok(["contact", "card", "--nickname", "Bob"])["card"] as? String)
        // The stranger calls itself Alice, dates its card at 2^63 ms and its text at 2^64 − 1.
        let stranger = try StrangerPeer(nickname: "Alice", relay: relay.url, cardCreatedAt: 1 << 63)
        let target = try await handshake(stranger, with: bob, cardText: bobCard)
        for frame in try stranger.text("boom", to: target.identityKey, sentAt: UInt64.max) {
            try await stranger.publish(try stranger.wrap(frame, to: target.nostrKey))
        }

        let read = try bob.run(["dm", "read", "--sync", "--json"])
        XCTAssertEqual(read.status, 0, "dm read --sync survived the DM: \(read.stderr)")
        let messages = try XCTUnwrap(try read.json()["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.compactMap { $0["text"] as? String }, ["boom"])
        XCTAssertEqual(messages.first?["sent_at"] as? Int64, Int64.max, "sent_at is clamped, not trapped on")
        let human = try bob.human(["dm", "read"])
        XCTAssertEqual(human.status, 0, human.stderr)

        // The card's created_at reaches `contact list` (JSON and human) clamped; the request is
        // named by its key, not by the nickname it claims.
        let contacts = try XCTUnwrap(try bob.ok(["contact", "list"])["contacts"] as? [[String: Any]])
        XCTAssertEqual(contacts.count, 1)
        XCTAssertEqual(contacts.first?["state"] as? String, "request")
        XCTAssertEqual(contacts.first?["card_created_at"] as? Int64, Int64.max)
        let requestName = try XCTUnwrap(contacts.first?["name"] as? String)
        XCTAssertTrue(requestName.hasPrefix("request-"), requestName)
        XCTAssertEqual(try bob.human(["contact", "list"]).status, 0)

        // The wrap was processed: the next sync fetches nothing new and does not die.
        let again = try bob.run(["sync", "--json"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual((try bob.ok(["dm", "read"])["messages"] as? [[String: Any]])?.count, 1)

        // The real Alice gets her own name, and her DM arrives.
        let alice = try BurrowHome.create(in: root, name: "alice", relay: relay.url, passphraseFile: pass)
        try alice.exchangeCards(with: bob, nicknames: ("Alice", "Bob"))
        let named = try XCTUnwrap(try bob.ok(["contact", "verify", "Alice"])["contact"] as? [String: Any])
        XCTAssertEqual(named["state"] as? String, "added", "`Alice` names the contact Bob added, not the stranger")
        XCTAssertEqual(named["name"] as? String, "Alice")
        _ = try alice.ok(["dm", "send", "Bob", "honest hello", "--timeout", "1"])
        _ = try bob.ok(["sync"])
        _ = try alice.ok(["sync"])
        let honest = try XCTUnwrap(try bob.ok(["dm", "read", "Alice", "--sync"])["messages"] as? [[String: Any]])
        XCTAssertEqual(honest.compactMap { $0["text"] as? String }, ["honest hello"])
        await stranger.close()
    }

    func testAStrangersTextReachesTheTerminalWithoutItsControlCharacters() async throws {
        let bob = try BurrowHome.create(in: root, name: "bob", relay: relay.url, passphraseFile: pass)
        let bobCard = try XCTUnwrap(try bob.ok(["contact", "card", "--nickname", "Bob"])["card"] as? String)
        let stranger = try StrangerPeer(nickname: "evil\u{1b}]0;owned\u{07}", relay: relay.url)
        let target = try await handshake(stranger, with: bob, cardText: bobCard)
        for frame in try stranger.text("red \u{1b}[31malert\u{1b}[0m \u{202e}txt.exe", to: target.identityKey, sentAt: StrangerPeer.now()) {
            try await stranger.publish(try stranger.wrap(frame, to: target.nostrKey))
        }
        let human = try bob.human(["dm", "read", "--sync"])
        XCTAssertEqual(human.status, 0, human.stderr)
        XCTAssertTrue(human.stdout.contains("red ?[31malert?[0m ?txt.exe"), human.stdout)
        XCTAssertFalse(human.stdout.unicodeScalars.contains { $0.value == 0x1b || $0.value == 0x202e })
        // Times are local (TZ), the date only when not today (issue 22): Kathmandu is 5:45 ahead.
        let utc = try bob.human(["dm", "read"], environment: ["TZ": "UTC"]).stdout
        let kathmandu = try bob.human(["dm", "read"], environment: ["TZ": "Asia/Kathmandu"]).stdout
        let clock = try XCTUnwrap(utc.range(of: #"^\[(\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}\] ← "#, options: .regularExpression), utc)
        XCTAssertNotEqual(String(utc[clock]), String(kathmandu.prefix(utc[clock].count)), "\(utc) / \(kathmandu)")
        // JSON keeps the text as it came (escaped as JSON asks).
        let json = try XCTUnwrap(try bob.ok(["dm", "read"])["messages"] as? [[String: Any]])
        XCTAssertEqual(json.first?["text"] as? String, "red \u{1b}[31malert\u{1b}[0m \u{202e}txt.exe")
        await stranger.close()
    }

    func testTheSameHandshake1InManyWrapsIsAnsweredAtMostOnceMore() async throws {
        let bob = try BurrowHome.create(in: root, name: "bob", relay: relay.url, passphraseFile: pass)
        let bobCard = try XCTUnwrap(try bob.ok(["contact", "card", "--nickname", "Bob"])["card"] as? String)
        let stranger = try StrangerPeer(nickname: "Mallory", relay: relay.url)
        let (h1, target) = try stranger.handshake1(to: bobCard)
        for _ in 0..<10 { try await stranger.publish(try stranger.wrap(h1, to: target.nostrKey)) }
        _ = try bob.ok(["sync"])
        _ = try bob.ok(["sync"])
        let answers = try await stranger.receivedFrames().filter { $0.count > 1 && $0[1] == FrameType.handshake2.rawValue }
        XCTAssertEqual(answers.count, 2, "one answer, and one more for a repeat (the first may have been lost); never ten")
        XCTAssertEqual(Set(answers.map { $0 }).count, 1, "the same handshake2 each time")
        await stranger.close()
    }
}
