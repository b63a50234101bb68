import Foundation
import TestSupport
import XCTest

/// Feeds through a third-party relay (rust-nostr's LocalRelay), the relay carrier of feed.md 9:
/// Alice writes, Bob (a contact and a member of Family) and Carol (a contact, not a member)
/// follow her over the relay. The pair keys are exchanged in Pigeon DMs through the same relay.
final class FeedRelayTests: XCTestCase {
    var relay: RelayProcess!
    var root: URL!
    var pass: String { root.appendingPathComponent("pass").path }

    override func setUp() async throws {
        relay = try await RelayProcess.start()
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-feedrelay-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "feed relay passphrase".write(to: root.appendingPathComponent("pass"), atomically: true, encoding: .utf8)
    }

    override func tearDown() async throws {
        relay?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    private func home(_ name: String) throws -> BurrowHome { try BurrowHome.create(in: root, name: name, relay: relay.url, passphraseFile: pass) }

    private func entries(_ home: BurrowHome, _ args: [String] = []) throws -> [[String: Any]] {
        try home.ok(["feed", "read"] + args)["entries"] as? [[String: Any]] ?? []
    }

    private func hasKeys(_ home: BurrowHome, with contact: String) throws -> Bool {
        let feeds = try home.ok(["feed", "status"])["feeds"] as? [[String: Any]] ?? []
        return feeds.contains { $0["name"] as? String == contact && $0["pair_key_age_days"] is Int }
    }

    func testAFollowerReadsOverTheRelayAGroupPostOnlyMembersAndForgedEventsChangeNothing() throws {
        let alice = try home("alice"), bob = try home("bob"), carol = try home("carol")
        try alice.exchangeCards(with: bob, nicknames: ("Alice", "Bob"))
        try alice.exchangeCards(with: carol, nicknames: ("Alice", "Carol"))
        _ = try alice.ok(["dm", "send", "Bob", "hi Bob", "--timeout", "10"])
        _ = try alice.ok(["dm", "send", "Carol", "hi Carol", "--timeout", "10"])
        // Each sync takes in what the other queued: four bodies make both pair keys.
        var rounds = 0
        while rounds < 8, try !(hasKeys(alice, with: "Bob") && hasKeys(bob, with: "Alice") && hasKeys(alice, with: "Carol") && hasKeys(carol, with: "Alice")) {
            for home in [bob, carol, alice] { _ = try home.ok(["sync"]) }
            rounds += 1
        }
        XCTAssertTrue(try hasKeys(bob, with: "Alice") && hasKeys(carol, with: "Alice"), "pair keys after \(rounds) rounds")

        // Family: Alice and Bob. Carol is Alice's contact but not a member.
        _ = try alice.ok(["group", "create", "Family", "--invite", try bob.pubkey])
        XCTAssertEqual(try bob.acceptInvites().count, 1)
        for home in [alice, bob, carol] { _ = try home.ok(["feed", "relay", "on"]) }

        let post = try XCTUnwrap(try alice.ok(["feed", "post", "Picnic at the lake on Sunday?"])["entry"] as? [String: Any])
        let family = try XCTUnwrap(try alice.ok(["feed", "post", "The gate code is 4711", "--audience", "group:Family"])["entry"] as? [String: Any])
        XCTAssertEqual(family["audience"] as? String, "group:Family")

        // The relay holds kind-1591 events tagged with Alice's feed id; no plaintext.
        let feedID = try XCTUnwrap((try alice.ok(["feed", "status"])["feeds"] as? [[String: Any]])?.first { $0["own"] as? Bool == true }?["feed_id"] as? String)
        let events = try XCTUnwrap(try bob.ok(["fetch", "--filter", ##"{"kinds":[1591],"#f":["\##(feedID)"]}"##])["events"] as? [[String: Any]])
        XCTAssertEqual(events.count, 2)
        for event in events {
            XCTAssertEqual(event["pubkey"] as? String, try alice.pubkey)
            let content = event["content"] as? String ?? ""
            XCTAssertFalse(content.contains("Picnic") || content.contains("4711"), "the relay sees ciphertext only")
        }

        // Bob, a member, reads both; Carol reads the contacts post, and holds the group one
        // without a key for it.
        let synced = try bob.ok(["sync"])
        XCTAssertEqual((synced["feed"] as? [[String: Any]])?.count, 2, "\(synced)")
        let atBob = try entries(bob, ["--author", "Alice"])
        XCTAssertEqual(atBob.first { $0["id"] as? String == post["id"] as? String }?["body"] as? String, "Picnic at the lake on Sunday?")
        let bobFamily = try XCTUnwrap(atBob.first { $0["id"] as? String == family["id"] as? String })
        XCTAssertEqual(bobFamily["body"] as? String, "The gate code is 4711")
        XCTAssertEqual(bobFamily["audience"] as? String, "group:Family")
        _ = try carol.ok(["sync"])
        let atCarol = try entries(carol, ["--author", "Alice"])
        XCTAssertEqual(atCarol.first { $0["id"] as? String == post["id"] as? String }?["status"] as? String, "ok")
        let carolFamily = try XCTUnwrap(atCarol.first { $0["id"] as? String == family["id"] as? String })
        XCTAssertEqual(carolFamily["status"] as? String, "no_key")
        XCTAssertNil(carolFamily["body"])
        let human = try carol.human(["feed", "read"]).stdout
        XCTAssertTrue(human.contains("Alice: Picnic at the lake on Sunday?"), human)
        XCTAssertTrue(human.contains("can't read this yet"), human)
        XCTAssertFalse(human.contains("4711"))

        // Carol forges: a kind-1591 event under her own key naming Alice's feed, carrying
        // Alice's envelope with the text changed, and one with a sequence Alice never wrote.
        let contents = events.compactMap { $0["content"] as? String }
        let original = try XCTUnwrap(contents.first { $0.contains(#""audience":"contacts""#) })
        let tampered = original.replacingOccurrences(of: #""timestamp":"#, with: #""timestamp":1"#)
        _ = try carol.ok(["publish", "--kind", "1591", "--content", tampered, "--tag", #"["f","\#(feedID)"]"#])
        _ = try carol.ok(["publish", "--kind", "1591", "--content", "not an envelope", "--tag", #"["f","\#(feedID)"]"#])
        let before = try entries(bob, ["--author", "Alice"]).count
        _ = try bob.ok(["sync"])
        XCTAssertEqual(try entries(bob, ["--author", "Alice"]).count, before, "forged events change nothing")
        let status = try XCTUnwrap((try bob.ok(["feed", "status"])["feeds"] as? [[String: Any]])?.first { $0["name"] as? String == "Alice" })
        XCTAssertEqual(status["flagged"] as? Bool, false, "a forgery is not the author's fork")
        XCTAssertEqual(status["accepted"] as? [Int], [0, 1])

        // Alice introduces Carol to Bob. An introduction makes no contact; when Bob adds Carol's
        // card he is told who introduced her and that the card has the keys introduced.
        _ = try alice.ok(["feed", "introduce", "Carol", "--to", "Bob", "--note", "my sister"])
        _ = try bob.ok(["sync"])
        let introduced = try bob.human(["feed", "read"]).stdout
        XCTAssertTrue(introduced.contains("Alice: introduced someone new (feed-"), introduced)
        XCTAssertTrue(introduced.contains("my sister — add their card to connect"), introduced)
        let carolCard = try XCTUnwrap(try carol.ok(["contact", "card"])["card"] as? String)
        let added = try bob.human(["contact", "add", carolCard]).stdout
        XCTAssertTrue(added.contains("introduced by Alice: “my sister” — the card's keys match the introduction"), added)
        let addedJSON = try XCTUnwrap(try bob.ok(["contact", "add", carolCard])["introduced_by"] as? [[String: Any]])
        XCTAssertEqual(addedJSON.first?["name"] as? String, "Alice")
        XCTAssertEqual(addedJSON.first?["keys_match"] as? Bool, true)
        XCTAssertTrue(try bob.human(["feed", "read"]).stdout.contains("Alice: introduced Carol: my sister"), "once added, she has her name")
        XCTAssertEqual(try alice.human(["contact", "add", carolCard]).stdout.contains("introduced"), false, "Alice's own introduction is no check")

        // Alice's laptop is lost; a backup (which holds no feed) is restored on a new one. It
        // takes its own feed back before writing, so Bob sees one chain go on, not a fork.
        let backupPass = root.appendingPathComponent("backup-pass").path
        try "a backup passphrase".write(toFile: backupPass, atomically: true, encoding: .utf8)
        let file = root.appendingPathComponent("alice.burrowbackup").path
        _ = try alice.ok(["backup", "create", file, "--backup-passphrase-file", backupPass, "--kdf-memory-mib", "8"])
        let laptop = BurrowHome(path: root.appendingPathComponent("alice-laptop").path, passphraseFile: pass)
        _ = try laptop.ok(["backup", "restore", file, "--backup-passphrase-file", backupPass, "--kdf-memory-mib", "8"])
        XCTAssertEqual(try laptop.errorCode(["feed", "post", "too early"]), "invalid_input", "nothing is written before the feed is back")
        _ = try laptop.ok(["feed", "relay", "on"])
        _ = try laptop.ok(["sync"])
        XCTAssertEqual(try entries(laptop, ["--author", "you"]).compactMap { $0["body"] as? String }.sorted(),
                       ["Picnic at the lake on Sunday?", "The gate code is 4711"], "the own feed came back, readable")
        let next = try XCTUnwrap(try laptop.ok(["feed", "post", "Back on a new laptop"])["entry"] as? [String: Any])
        XCTAssertEqual(next["sequence"] as? Int, 3, "the chain goes on where it was")
        _ = try bob.ok(["sync"])
        let after = try XCTUnwrap((try bob.ok(["feed", "status"])["feeds"] as? [[String: Any]])?.first { $0["name"] as? String == "Alice" })
        XCTAssertEqual(after["flagged"] as? Bool, false)
        XCTAssertEqual(after["accepted"] as? [Int], [0, 3])
    }
}
