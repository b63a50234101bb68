import Foundation
import TestSupport
import XCTest

/// Feeds through the real program on the UDP loopback radio, no relay anywhere (feed.md 8):
/// three `burrow run --mesh` processes in a line, Alice — Bob — Carol. Alice's contacts are
/// Bob and Carol; Bob and Carol are not contacts, so Bob relays DMs between them but no feed.
/// At MTU 185 Bob also joins Alice's group Family nearby, and reads her group post; Carol,
/// a contact but no member, holds it unread.
/// Keys go over mesh DMs; feed packets are link-local, so Carol, two hops from Alice, gets
/// nothing until she is in Alice's range.
final class FeedMeshTests: MeshCLITestCase {
    override var commandTimeout: TimeInterval { 5 }

    /// `run` without its embedded relay: nothing but the mesh carries anything. Its feed
    /// sessions log at debug, for `waitForFeed`'s failure message.
    private func run(_ home: BurrowHome, _ args: [String]) throws -> PeerProcess {
        try process(home, ["run"] + args + ["--no-embedded-relay"], logLevel: "debug")
    }

    /// Waits for a line of `run`, up to two whole session intervals (feed.md 8.2: sessions
    /// start at a presence match, at a new entry, then every 60 s; a session that crossed
    /// another, or a peer heard a moment before its tag matched, leaves an entry for the next
    /// one, and a loaded machine stretches both). On a timeout the failure shows the last feed
    /// log lines of every run (sessions, rounds, drops), not their whole stderr.
    @discardableResult
    private func waitForFeed(_ run: PeerProcess, containing text: String, runs: [(String, PeerProcess)]) async throws -> String {
        do {
            return try await run.waitForLine(containing: text, timeout: .seconds(130))
        } catch {
            var lines = ["no line containing \(text) within 130 s"]
            for (name, process) in runs {
                lines.append("-- \(name):")
                lines += process.standardError.split(separator: "\n").filter { $0.contains("burrow.feed") || $0.contains("burrow.mesh") }.suffix(25).map(String.init)
            }
            throw PeerProcess.Failure.notReady(lines.joined(separator: "\n"))
        }
    }

    /// Polls `feed status` until `contact`'s pair key exists (the exchange rides mesh DMs).
    private func waitForKeys(_ home: BurrowHome, with contact: String, timeout: TimeInterval = 40) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let feeds = try home.ok(["feed", "status"])["feeds"] as? [[String: Any]] ?? []
            if feeds.contains(where: { $0["name"] as? String == contact && !($0["pair_key_age_days"] is NSNull) && $0["pair_key_age_days"] != nil }) {
                return
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        XCTFail("no feed keys with \(contact) within \(timeout) s")
    }

    private func entries(_ home: BurrowHome, _ args: [String] = []) throws -> [[String: Any]] {
        try home.ok(["feed", "read"] + args)["entries"] as? [[String: Any]] ?? []
    }

    // Entries travel in sessions that start at a presence match, at a new entry, and every
    // 60 s (feed.md 8.2): a wait covers one whole interval, so a session that crossed another
    // on the air is not mistaken for a lost entry.
    func testMTU185ContactsPostCrossesOneLinkNotTwoRetractionHidesItAndARewrittenFeedIsRefused() async throws {
        try await contactsFeedOverTheMesh(mtu: 185, checkGroupAndFork: true)
    }

    func testMTU23ContactsPostCrossesInFragments() async throws {
        try await contactsFeedOverTheMesh(mtu: 23, checkGroupAndFork: false)
    }

    private func contactsFeedOverTheMesh(mtu: Int, checkGroupAndFork: Bool) async throws {
        let alice = try home("alice"), bob = try home("bob"), carol = try home("carol")
        try alice.exchangeCards(with: bob, nicknames: ("Alice", "Bob"))
        try alice.exchangeCards(with: carol, nicknames: ("Alice", "Carol"))
        if checkGroupAndFork { _ = try alice.ok(["group", "create", "Family"]) }
        let ports = try LoopbackPorts.free(3)
        let (pa, pb, pc) = (ports[0], ports[1], ports[2])
        // Everything runs at the MTU under test, the feed keys too: a feed-keys body is a 4 KiB
        // DM frame, ~500 link frames at MTU 23, which each link paces under its neighbour's
        // budget (mesh.md 7.4) instead of losing its tail.
        var aliceRun = try run(alice, ["--mesh", "udp:\(pa),\(pb)/\(mtu),\(pc)/\(mtu)"])
        var bobRun = try run(bob, ["--mesh", "udp:\(pb),\(pa)/\(mtu),\(pc)/\(mtu)"])
        // Carol hears only Bob: Alice is two hops away.
        var carolRun = try run(carol, ["--mesh", "udp:\(pc),\(pb)/\(mtu)"])
        defer {
            aliceRun.stop()
            bobRun.stop()
            carolRun.stop()
        }
        for run in [aliceRun, bobRun, carolRun] { _ = try await run.waitForLine(containing: #""type":"mesh""#, timeout: .seconds(30)) }

        // The first DMs make the Pigeon sessions; the feed-keys bodies follow on them.
        _ = try alice.ok(["dm", "send", "Bob", "hi Bob", "--via", "mesh", "--timeout", "15"])
        _ = try alice.ok(["dm", "send", "Carol", "hi Carol", "--via", "mesh", "--timeout", "15"])
        _ = try bob.ok(["dm", "send", "Alice", "hi Alice", "--via", "mesh", "--timeout", "15"])
        _ = try carol.ok(["dm", "send", "Alice", "hi Alice", "--via", "mesh", "--timeout", "15"])
        try await waitForKeys(alice, with: "Bob")
        try await waitForKeys(bob, with: "Alice")
        try await waitForKeys(alice, with: "Carol")
        try await waitForKeys(carol, with: "Alice")

        var familyPostID: String?
        if checkGroupAndFork {
            // Bob joins Family nearby, over the mesh; Carol is no member. A group post reaches
            // Bob readable (the secret of his new group is looked for when its entry arrives).
            let invite = try process(alice, ["invite", "nearby", "Family", "--expires", "120"])
            defer { invite.stop() }
            let open = try object(try await invite.waitForLine(containing: #""type":"invite_open""#, timeout: .seconds(30)))
            let code = try XCTUnwrap(open["code"] as? String)
            let joined = try BurrowProcess.run(["join", "nearby", "--invite", "Family", "--code-stdin", "--home", bob.path,
                                                "--passphrase-file", pass, "--json", "--timeout", "2"], stdin: code + "\n", timeout: 120)
            XCTAssertEqual(joined.status, 0, joined.stdout + joined.stderr)
            _ = try await invite.waitForLine(containing: #""type":"joined""#, timeout: .seconds(30))
            let family = try XCTUnwrap(try alice.ok(["feed", "post", "The gate code is 4711", "--audience", "group:Family"])["entry"] as? [String: Any])
            familyPostID = family["id"] as? String
            let seen = try object(try await waitForFeed(bobRun, containing: "gate code is 4711", runs: [("alice", aliceRun), ("bob", bobRun), ("carol", carolRun)]))
            XCTAssertEqual(seen["audience"] as? String, "group:Family")
            XCTAssertEqual(seen["status"] as? String, "ok")
        }

        // A post for contacts reaches Bob, in range, as a `feed` line of his run.
        _ = try alice.ok(["feed", "profile", "--name", "Alice M"])
        let post = try XCTUnwrap(try alice.ok(["feed", "post", "Picnic at the lake on Sunday?"])["entry"] as? [String: Any])
        let postID = try XCTUnwrap(post["id"] as? String)
        let line = try object(try await waitForFeed(bobRun, containing: "Picnic at the lake", runs: [("alice", aliceRun), ("bob", bobRun), ("carol", carolRun)]))
        XCTAssertEqual(line["type"] as? String, "feed")
        XCTAssertEqual(line["author"] as? String, "Alice")
        XCTAssertEqual(line["status"] as? String, "ok")
        XCTAssertEqual(line["id"] as? String, postID)

        // Carol is Alice's contact but two hops away: link-local feed packets never reach her.
        try await Task.sleep(for: .seconds(4))
        XCTAssertEqual(try entries(carol).filter { $0["author"] as? String == "Alice" }.count, 0, "nothing crosses two hops")

        // A retraction hides the post at Bob: the envelope stays, its content goes.
        _ = try alice.ok(["feed", "retract", postID])
        _ = try await waitForFeed(bobRun, containing: #""entry_type":"tombstone""#, runs: [("alice", aliceRun), ("bob", bobRun), ("carol", carolRun)])
        let atBob = try entries(bob, ["--author", "Alice"])
        let retracted = try XCTUnwrap(atBob.first { $0["id"] as? String == postID })
        XCTAssertEqual(retracted["status"] as? String, "tombstoned")
        XCTAssertNil(retracted["body"])

        // Carol comes into Alice's range: her session asks for Alice's feed and gets all of it.
        carolRun.stop()
        carolRun = try run(carol, ["--mesh", "udp:\(pc),\(pb)/\(mtu),\(pa)/\(mtu)"])
        _ = try await waitForFeed(carolRun, containing: #""display_name":"Alice M""#, runs: [("alice", aliceRun), ("bob", bobRun), ("carol", carolRun)])
        _ = try await waitForFeed(carolRun, containing: #""entry_type":"tombstone""#, runs: [("alice", aliceRun), ("bob", bobRun), ("carol", carolRun)])
        let atCarol = try entries(carol, ["--author", "Alice"])
        XCTAssertEqual(atCarol.first { $0["id"] as? String == postID }?["status"] as? String, "tombstoned")
        XCTAssertEqual(atCarol.first { $0["type"] as? String == "profile_update" }?["display_name"] as? String, "Alice M")
        if let familyPostID {
            let held = try XCTUnwrap(atCarol.first { $0["id"] as? String == familyPostID }, "Carol holds the group post too")
            XCTAssertEqual(held["status"] as? String, "no_key", "only members read a group post")
            XCTAssertNil(held["body"])
            XCTAssertFalse(try carol.human(["feed", "read"]).stdout.contains("4711"))
        }

        guard checkGroupAndFork else { return }
        // Alice's home is put back to a copy from before her next entry and she writes again:
        // a rewritten chain. Bob refuses it, keeps it as evidence and flags the feed.
        aliceRun.stop()
        carolRun.stop()
        let copy = root.appendingPathComponent("alice-copy").path
        try FileManager.default.copyItem(atPath: alice.path, toPath: copy)
        aliceRun = try run(alice, ["--mesh", "udp:\(pa),\(pb)/\(mtu)"])
        _ = try await aliceRun.waitForLine(containing: #""type":"mesh""#, timeout: .seconds(30))
        _ = try alice.ok(["feed", "post", "first version"])
        _ = try await waitForFeed(bobRun, containing: "first version", runs: [("alice", aliceRun), ("bob", bobRun), ("carol", carolRun)])
        aliceRun.stop()
        try FileManager.default.removeItem(atPath: alice.path)
        try FileManager.default.moveItem(atPath: copy, toPath: alice.path)
        aliceRun = try run(alice, ["--mesh", "udp:\(pa),\(pb)/\(mtu)"])
        _ = try await aliceRun.waitForLine(containing: #""type":"mesh""#, timeout: .seconds(30))
        _ = try alice.ok(["feed", "post", "second version"])
        _ = try alice.ok(["feed", "post", "and more"])
        let deadline = Date().addingTimeInterval(130)
        var flagged: [String: Any]?
        while Date() < deadline, flagged == nil {
            let feeds = try bob.ok(["feed", "status"])["feeds"] as? [[String: Any]] ?? []
            flagged = feeds.first { $0["name"] as? String == "Alice" && $0["flagged"] as? Bool == true }
            if flagged == nil { try await Task.sleep(for: .milliseconds(500)) }
        }
        let diagnostics = (bobRun.standardError + aliceRun.standardError).split(separator: "\n").filter { $0.contains("burrow.feed") }.suffix(30)
        let feed = try XCTUnwrap(flagged, "Bob flags Alice's rewritten feed\n" + diagnostics.joined(separator: "\n"))
        XCTAssertGreaterThan(feed["evidence"] as? Int ?? 0, 0)
        let bodies = try entries(bob, ["--author", "Alice"]).compactMap { $0["body"] as? String }
        XCTAssertTrue(bodies.contains("first version"))
        XCTAssertFalse(bodies.contains("second version"), "the rewritten entries are refused")
        XCTAssertFalse(bodies.contains("and more"))
    }
}
