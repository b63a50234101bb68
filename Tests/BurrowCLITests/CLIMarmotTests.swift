import Foundation
import TestSupport
import XCTest

/// The Marmot commands of Docs/cli.md through the real program: three Burrow homes in one
/// family group over rust-nostr's LocalRelay on 127.0.0.1.
/// `@unchecked Sendable`: XCTest runs one test method at a time on an instance; its stored
/// properties are set in setUp and only read while a test's tasks run.
final class CLIMarmotTests: XCTestCase, @unchecked Sendable {
    var root: URL!
    var passFile: URL!
    var relay: RelayProcess!

    override func setUp() async throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-cli-marmot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        passFile = root.appendingPathComponent("pass")
        try "marmot test passphrase".write(to: passFile, atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start(RelayProcess.Options(notesPerMinute: 10_000))
    }

    override func tearDown() async throws {
        relay?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// One user's home.
    struct Home {
        let test: CLIMarmotTests
        let name: String
        var path: String { test.root.appendingPathComponent(name).path }

        func run(_ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> BurrowResult {
            try BurrowProcess.run(args + ["--home", path, "--passphrase-file", test.passFile.path, "--json", "--timeout", "5"])
        }

        /// Runs and requires success; returns the JSON document.
        @discardableResult
        func ok(_ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
            let r = try run(args)
            XCTAssertEqual(r.status, 0, "\(name) \(args): \(r.stdout) \(r.stderr)", file: file, line: line)
            let json = try r.json()
            XCTAssertEqual(json["ok"] as? Bool, true, file: file, line: line)
            return json
        }

        /// Runs and requires failure with `code`.
        func fails(_ args: [String], _ code: String, file: StaticString = #filePath, line: UInt = #line) throws {
            let r = try run(args)
            XCTAssertEqual(r.status, 1, "\(name) \(args): \(r.stdout)", file: file, line: line)
            let error = try r.json()["error"] as? [String: Any]
            XCTAssertEqual(error?["code"] as? String, code, "\(name) \(args): \(r.stdout)", file: file, line: line)
        }

        var pubkey: String {
            get throws { try XCTUnwrap(try ok(["whoami"])["pubkey"] as? String) }
        }

        /// What a person reads: the command's human output (no --json), required to succeed.
        func human(_ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
            let r = try BurrowProcess.run(args + ["--home", path, "--passphrase-file", test.passFile.path, "--timeout", "5"])
            XCTAssertEqual(r.status, 0, "\(name) \(args): \(r.stdout) \(r.stderr)", file: file, line: line)
            return r.stdout
        }

        func group(_ group: String) throws -> [String: Any] { try XCTUnwrap(try ok(["group", "show", group])["group"] as? [String: Any]) }
    }

    func makeHome(_ name: String) throws -> Home {
        let home = Home(test: self, name: name)
        try home.ok(["init", "--kdf-memory-mib", "8"])
        try home.ok(["relay", "add", relay.url])
        let published = try home.ok(["keypackage", "publish"])
        let ids = try XCTUnwrap(published["event_ids"] as? [String: String])
        XCTAssertEqual(Set(ids.keys), ["30443", "443", "10051", "10050"])
        return home
    }

    /// Syncs `home` and accepts its one pending invite; returns the joined group object.
    func join(_ home: Home) throws -> [String: Any] {
        let report = try home.ok(["sync"])
        XCTAssertEqual((report["errors"] as? [Any])?.count, 0, "\(report)")
        let invites = try XCTUnwrap(try home.ok(["invite", "list"])["invites"] as? [[String: Any]])
        XCTAssertEqual(invites.count, 1)
        let id = try XCTUnwrap(invites.first?["id"] as? String)
        return try XCTUnwrap(try home.ok(["invite", "accept", id])["group"] as? [String: Any])
    }

    func testFamilyGroupLifecycle() throws {
        let alice = try makeHome("alice"), bob = try makeHome("bob"), carol = try makeHome("carol")
        let (a, b, c) = (try alice.pubkey, try bob.pubkey, try carol.pubkey)

        // Create with Bob invited; the group object has every documented field.
        let created = try XCTUnwrap(try alice.ok(["group", "create", "Family", "--description", "us", "--invite", b])["group"] as? [String: Any])
        XCTAssertEqual(Set(created.keys), ["nostr_group_id", "mls_group_id", "name", "description", "epoch", "members", "admins", "relays", "state", "member_names"])
        XCTAssertEqual(created["name"] as? String, "Family")
        XCTAssertEqual(created["description"] as? String, "us")
        XCTAssertEqual(created["epoch"] as? Int, 1)
        XCTAssertEqual(Set(try XCTUnwrap(created["members"] as? [String])), [a, b])
        XCTAssertEqual(created["admins"] as? [String], [a])
        XCTAssertEqual(created["relays"] as? [String], [relay.url])
        XCTAssertEqual(created["state"] as? String, "active")
        let gid = try XCTUnwrap(created["nostr_group_id"] as? String)

        // Bob sees the invite with its fields, then joins.
        XCTAssertEqual(try bob.ok(["sync"])["processed"] as? Int, 1)
        let invites = try XCTUnwrap(try bob.ok(["invite", "list"])["invites"] as? [[String: Any]])
        XCTAssertEqual(invites.count, 1)
        XCTAssertEqual(invites[0]["group_name"] as? String, "Family")
        XCTAssertEqual(invites[0]["nostr_group_id"] as? String, gid)
        XCTAssertEqual(invites[0]["from"] as? String, a)
        XCTAssertEqual(Set(try XCTUnwrap(invites[0]["members"] as? [String])), [a, b])
        XCTAssertEqual(try bob.group(gid)["state"] as? String, "pending")
        try bob.fails(["invite", "accept", "00000000"], "unknown_invite")
        let joined = try XCTUnwrap(try bob.ok(["invite", "accept", try XCTUnwrap(invites[0]["id"] as? String)])["group"] as? [String: Any])
        XCTAssertEqual(joined["state"] as? String, "active")
        XCTAssertEqual((try bob.ok(["invite", "list"])["invites"] as? [Any])?.count, 0)

        // Chat and location both ways, with senders and payloads.
        let sent = try bob.ok(["chat", "Family", "hello from bob"])
        XCTAssertEqual((sent["event_id"] as? String)?.count, 64)
        let chatID = try XCTUnwrap(sent["message_id"] as? String)
        try alice.ok(["location", String(gid.prefix(8)), "--lat", "48.8566", "--lon", "2.3522", "--acc", "12.5", "--batt", "77"])
        try alice.ok(["chat", gid, "hello from alice"])
        try bob.ok(["sync"])
        let messages = try XCTUnwrap(try bob.ok(["messages", "Family"])["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.count, 3)
        let bobChat = try XCTUnwrap(messages.first { $0["id"] as? String == chatID })
        XCTAssertEqual(bobChat["sender"] as? String, b)
        XCTAssertEqual(bobChat["kind"] as? Int, 9)
        XCTAssertEqual(bobChat["text"] as? String, "hello from bob")
        let location = try XCTUnwrap(messages.first { $0["kind"] as? Int == 1 })
        XCTAssertEqual(location["sender"] as? String, a)
        let payload = try XCTUnwrap(location["location"] as? [String: Any])
        XCTAssertEqual(payload["lat"] as? Double, 48.8566)
        XCTAssertEqual(payload["batt"] as? Int, 77)
        XCTAssertEqual(payload["interval"] as? Int, 3600)
        XCTAssertEqual(payload["v"] as? Int, 1)
        let locations = try XCTUnwrap(try bob.ok(["locations", "Family"])["locations"] as? [[String: Any]])
        XCTAssertEqual(locations.count, 1)
        XCTAssertEqual(locations[0]["member"] as? String, a)
        XCTAssertEqual(locations[0]["acc"] as? Double, 12.5)
        XCTAssertEqual(locations[0]["stale"] as? Bool, false)
        let newest = try XCTUnwrap(try bob.ok(["messages", "Family", "--limit", "2"])["messages"] as? [[String: Any]])
        XCTAssertEqual(Set(newest.compactMap { $0["sender"] as? String }), [a])
        XCTAssertEqual(Set(newest.compactMap { $0["kind"] as? Int }), [1, 9])

        // Half the world is south or west (issue 22): negative numbers are values, not options.
        try bob.ok(["location", "Family", "--lat", "-33.8688", "--lon", "-74.006", "--alt", "-12", "--acc", "8"])
        try alice.ok(["sync"])
        let southWest = try XCTUnwrap(try alice.ok(["locations", "Family"])["locations"] as? [[String: Any]]).first { $0["member"] as? String == b }
        XCTAssertEqual(southWest?["lat"] as? Double, -33.8688)
        XCTAssertEqual(southWest?["lon"] as? Double, -74.006)
        // People read the group's name, not ids (issue 22, items 9 and 12): "sent to Family";
        // a location says what was shared, battery when given, no "±0 m" for an unknown accuracy.
        XCTAssertEqual(try bob.human(["chat", "Family", "hello in words"]).trimmingCharacters(in: .whitespacesAndNewlines), "sent to Family")
        XCTAssertEqual(try bob.human(["location", "Family", "--lat", "40.7", "--lon", "-74.0", "--batt", "81"])
                        .trimmingCharacters(in: .whitespacesAndNewlines), "location shared with Family: 40.70000, -74.00000, battery 81%")
        XCTAssertEqual(try bob.human(["location", "Family", "--lat", "40.7", "--lon", "-74.0", "--acc", "12"])
                        .trimmingCharacters(in: .whitespacesAndNewlines), "location shared with Family: 40.70000, -74.00000 ±12 m")
        let shared = try bob.ok(["location", "Family", "--lat", "-33.8688", "--lon", "-74.006", "--alt", "-12", "--acc", "8", "--batt", "64"])
        let sharedLocation = try XCTUnwrap(shared["location"] as? [String: Any])
        XCTAssertEqual(sharedLocation["batt"] as? Int, 64)
        XCTAssertEqual(sharedLocation["lat"] as? Double, -33.8688)
        XCTAssertEqual(shared["group_name"] as? String, "Family")
        // A negative accuracy or battery is refused with a clear error, not "missing value".
        try bob.fails(["location", "Family", "--lat", "1", "--lon", "1", "--acc", "-5"], "invalid_input")
        try bob.fails(["location", "Family", "--lat", "1", "--lon", "1", "--batt", "-1"], "invalid_input")

        // Only admins commit; admins must be members.
        try bob.fails(["group", "add", "Family", c], "not_admin")
        try alice.fails(["group", "admins", "Family", "--add", c], "invalid_input")
        try alice.fails(["group", "add", "Family", String(repeating: "ab", count: 32)], "no_key_package")
        // It names the person and says what they must do (issue 22, item 10).
        let noKeyPackage = try alice.run(["group", "add", "Family", String(repeating: "ab", count: 32)])
        let advice = ((try noKeyPackage.json()["error"] as? [String: Any])?["message"] as? String) ?? ""
        XCTAssertTrue(advice.hasPrefix("npub1") && advice.contains("burrow keypackage publish"), advice)

        // Alice adds Carol, renames, makes Bob admin; everyone follows.
        try alice.ok(["group", "add", "Family", c])
        XCTAssertEqual(try join(carol)["epoch"] as? Int, 2)
        try alice.ok(["group", "rename", "Family", "Family 2"])
        let promoted = try XCTUnwrap(try alice.ok(["group", "admins", "Family 2", "--add", b])["group"] as? [String: Any])
        XCTAssertEqual(Set(try XCTUnwrap(promoted["admins"] as? [String])), [a, b])
        for home in [bob, carol] {
            let report = try home.ok(["sync"])
            XCTAssertEqual((report["errors"] as? [Any])?.count, 0, "\(report)")
            let g = try home.group(gid)
            XCTAssertEqual(g["name"] as? String, "Family 2")
            XCTAssertEqual(g["epoch"] as? Int, 4)
            XCTAssertEqual(Set(try XCTUnwrap(g["members"] as? [String])), [a, b, c])
            XCTAssertEqual(Set(try XCTUnwrap(g["admins"] as? [String])), [a, b])
        }
        try carol.ok(["chat", "Family 2", "carol here"])
        try alice.ok(["sync"])
        XCTAssertTrue(try XCTUnwrap(try alice.ok(["messages", gid])["messages"] as? [[String: Any]]).contains {
            $0["sender"] as? String == c && $0["text"] as? String == "carol here"
        })

        // Carol leaves: a leave request and a SelfRemove; both admins auto-commit, one wins.
        let leaving = try XCTUnwrap(try carol.ok(["leave", gid])["group"] as? [String: Any])
        XCTAssertEqual(leaving["state"] as? String, "leaving")
        let requests = try XCTUnwrap(try alice.ok(["group", "requests", gid, "--sync"])["requests"] as? [[String: Any]])
        XCTAssertTrue(requests.isEmpty || requests.allSatisfy { $0["member"] as? String == c })
        try bob.ok(["sync"])
        try alice.ok(["sync"])
        try bob.ok(["sync"])
        let aliceView = try alice.group(gid), bobView = try bob.group(gid)
        XCTAssertEqual(Set(try XCTUnwrap(aliceView["members"] as? [String])), [a, b])
        XCTAssertEqual(aliceView["epoch"] as? Int, bobView["epoch"] as? Int)
        XCTAssertEqual(aliceView["members"] as? [String], bobView["members"] as? [String])
        try carol.ok(["sync"])
        XCTAssertEqual(try carol.group(gid)["state"] as? String, "left")

        // Alice and Bob still talk at the new epoch.
        try alice.ok(["chat", gid, "after carol left"])
        try bob.ok(["sync"])
        XCTAssertEqual((try bob.ok(["messages", gid, "--limit", "1"])["messages"] as? [[String: Any]])?.first?["text"] as? String,
                       "after carol left")

        // Bob removes Alice's admin role? Never zero admins: Alice alone cannot leave as last admin.
        try bob.ok(["group", "admins", gid, "--remove", b])
        try alice.ok(["sync"])
        try alice.fails(["leave", gid], "last_admin")

        // Carol is welcome back (issue 22, item 2): a welcome to a group she left is a new
        // invite, listed with nothing refused; accepting it gives her a fresh state at the
        // group's epoch, and her old messages stay as history.
        try alice.ok(["group", "add", gid, c])
        let back = try carol.ok(["invite", "list", "--sync"])
        let reinvites = try XCTUnwrap(back["invites"] as? [[String: Any]])
        XCTAssertEqual(reinvites.map { $0["nostr_group_id"] as? String }, [gid])
        XCTAssertEqual((back["sync_errors"] as? [Any])?.count, 0, "\(back)")
        XCTAssertTrue(try carol.human(["invite", "list"]).contains("Family 2"))
        let rejoined = try XCTUnwrap(try carol.ok(["invite", "accept", try XCTUnwrap(reinvites[0]["id"] as? String)])["group"] as? [String: Any])
        XCTAssertEqual(rejoined["state"] as? String, "active")
        XCTAssertEqual(rejoined["epoch"] as? Int, try alice.group(gid)["epoch"] as? Int)
        XCTAssertEqual(Set(try XCTUnwrap(rejoined["members"] as? [String])), [a, b, c])
        try alice.ok(["chat", gid, "welcome back carol"])
        try carol.ok(["chat", gid, "glad to be back"])
        try carol.ok(["sync"])
        let carolTexts = try XCTUnwrap(try carol.ok(["messages", gid])["messages"] as? [[String: Any]]).compactMap { $0["text"] as? String }
        XCTAssertTrue(carolTexts.contains("carol here"), "the old history stays")
        XCTAssertTrue(carolTexts.contains("welcome back carol"))
        try alice.ok(["sync"])
        XCTAssertTrue(try XCTUnwrap(try alice.ok(["messages", gid])["messages"] as? [[String: Any]]).contains {
            $0["sender"] as? String == c && $0["text"] as? String == "glad to be back"
        })
    }

    func testGroupResolutionAndInviteErrors() throws {
        let alice = try makeHome("alice")
        try alice.fails(["group", "show", "Nope"], "unknown_group")
        try alice.ok(["group", "create", "Twins"])
        let second = try alice.ok(["group", "create", "Twins"])
        XCTAssertTrue((second["warnings"] as? [String])?.contains { $0.hasPrefix("another group of yours is already called Twins") } ?? false,
                      "\(second)")
        try alice.fails(["group", "show", "Twins"], "ambiguous_group")
        // Errors that say what to do next (issue 22, item 10): the candidates' ids, any case,
        // and a near name suggested.
        let twins = try alice.run(["group", "show", "twins"])
        XCTAssertTrue(((try twins.json()["error"] as? [String: Any])?["message"] as? String ?? "").contains("give one's id: Twins "), twins.stdout)
        try alice.ok(["group", "create", "Garden Club"])
        XCTAssertEqual(try alice.group("garden club")["name"] as? String, "Garden Club")
        let typo = try alice.run(["group", "show", "Gardn Club"])
        XCTAssertEqual((try typo.json()["error"] as? [String: Any])?["code"] as? String, "unknown_group")
        XCTAssertTrue(((try typo.json()["error"] as? [String: Any])?["message"] as? String ?? "").contains("did you mean \"Garden Club\"?"), typo.stdout)
        let groups = try XCTUnwrap(try alice.ok(["group", "list"])["groups"] as? [[String: Any]])
        XCTAssertEqual(groups.count, 3)
        XCTAssertEqual(groups.map { $0["epoch"] as? Int }, [0, 0, 0])
        let id = try XCTUnwrap(groups[0]["mls_group_id"] as? String)
        XCTAssertEqual(try alice.group(id)["mls_group_id"] as? String, id)
        try alice.fails(["chat", "Nope", "x"], "unknown_group")
        // A key with no KeyPackage on the relays (secp256k1's generator point, nobody's user).
        try alice.fails(["group", "create", "Lonely", "--invite", "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"],
                        "no_key_package")
        try alice.fails(["group", "create", "Bad", "--invite", "not-a-key"], "invalid_input")
        try alice.fails(["invite", "decline", "abcdef0123"], "unknown_invite")
    }

    /// `burrow run` processes live events, prints JSON lines, serves other commands over its
    /// socket (checking their passphrase), refuses a second `run`, and stops cleanly on SIGTERM.
    func testRunServesCommandsAndProcessesLive() async throws {
        let alice = try makeHome("alice"), bob = try makeHome("bob")
        let b = try bob.pubkey
        let gid = try XCTUnwrap((try alice.ok(["group", "create", "Live", "--invite", b])["group"] as? [String: Any])?["nostr_group_id"] as? String)
        _ = try join(bob)

        let run = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", bob.path, "--passphrase-file", passFile.path, "--json", "--timeout", "5"])
        defer { run.stop() }
        let ready = try await run.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))
        XCTAssertTrue(ready.contains(b), ready)
        let socket = bob.path + "/burrow.sock"
        XCTAssertTrue(FileManager.default.fileExists(atPath: socket))

        // Commands reach the running node.
        let groups = try XCTUnwrap(try bob.ok(["group", "list"])["groups"] as? [[String: Any]])
        XCTAssertEqual(groups.first?["nostr_group_id"] as? String, gid)
        let sent = try bob.ok(["chat", gid, "sent through run"])
        let wrong = root.appendingPathComponent("wrong")
        try "not the passphrase".write(to: wrong, atomically: true, encoding: .utf8)
        let refused = try BurrowProcess.run(["whoami", "--home", bob.path, "--passphrase-file", wrong.path, "--json"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual((try refused.json()["error"] as? [String: Any])?["code"] as? String, "wrong_passphrase")
        try bob.fails(["run"], "busy")

        // Live: Alice's message appears as a JSON line without any sync on Bob's side.
        try alice.ok(["sync"])
        XCTAssertTrue(try XCTUnwrap(try alice.ok(["messages", gid])["messages"] as? [[String: Any]]).contains {
            $0["id"] as? String == sent["message_id"] as? String
        })
        try alice.ok(["chat", gid, "live hello"])
        let deadline = ContinuousClock.now + .seconds(20)
        var line: String?
        while ContinuousClock.now < deadline, line == nil {
            line = run.lines.first { $0.contains(#""type":"message""#) && $0.contains("live hello") }
            if line == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let message = try XCTUnwrap(line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        XCTAssertEqual(message["sender"] as? String, try alice.pubkey)
        XCTAssertEqual(message["text"] as? String, "live hello")

        run.stop()
        XCTAssertFalse(run.isRunning)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "the socket is removed on exit")
        XCTAssertTrue(try XCTUnwrap(try bob.ok(["messages", gid])["messages"] as? [[String: Any]]).contains { $0["text"] as? String == "live hello" })
    }

    /// People are names, not keys (issue 22, item 3): `profile set/show`; the inviter's name in
    /// `invite list`, members' names in `group show`; `run` says who joined and left, and
    /// follows a name changed while it runs.
    func testPeopleAreShownByTheirNames() async throws {
        let alice = try makeHome("alice"), bob = try makeHome("bob"), carol = try makeHome("carol")
        let a = try alice.pubkey, c = try carol.pubkey
        let set = try alice.ok(["profile", "set", "--name", "Alice", "--about", "mum"])
        XCTAssertEqual((set["profile"] as? [String: Any])?["name"] as? String, "Alice")
        XCTAssertEqual(set["relays"] as? [String], [relay.url])
        XCTAssertTrue(try alice.human(["profile", "show"]).hasPrefix("Alice (npub1"))
        try bob.ok(["profile", "set", "--name", "Bob"])
        try carol.ok(["profile", "set", "--name", "Carol"])
        // Fields not given keep their value; an empty one is removed.
        try alice.ok(["profile", "set", "--about", "mum of two"])
        let mine = try XCTUnwrap(try alice.ok(["profile", "show"])["profile"] as? [String: Any])
        XCTAssertEqual(mine["name"] as? String, "Alice")
        XCTAssertEqual(mine["about"] as? String, "mum of two")
        try alice.fails(["profile", "set", "--name", String(repeating: "x", count: 65)], "invalid_input")

        let gid = try XCTUnwrap((try alice.ok(["group", "create", "Family", "--invite", try bob.pubkey])["group"] as? [String: Any])?["nostr_group_id"] as? String)
        XCTAssertTrue(try bob.human(["invite", "list", "--sync"]).contains("\"Family\" from Alice,"), "the inviter by name")
        _ = try join(bob)
        let shown = try bob.human(["group", "show", "Family"])
        XCTAssertTrue(shown.contains("members        Alice, Bob") || shown.contains("members        Bob, Alice"), shown)
        let json = try bob.group(gid)
        XCTAssertEqual((json["member_names"] as? [String: String])?[a], "Alice")
        // Someone we share a group with, by name.
        XCTAssertEqual((try bob.ok(["profile", "show", "alice", "--sync"])["profile"] as? [String: Any])?["about"] as? String, "mum of two")

        // Bob's run says who joined and left, by name.
        let run = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", bob.path, "--passphrase-file", passFile.path, "--timeout", "5"])
        defer { run.stop() }
        let running = try await run.waitForLine(prefix: "running as", timeout: .seconds(30))
        XCTAssertTrue(running.hasPrefix("running as npub1"), running)
        // A path given to a forwarded command is the caller's (issue 22, item 8), and said in full.
        try alice.ok(["location", gid, "--lat", "51.5", "--lon", "-0.12"])
        let elsewhere = root.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let mapped = try BurrowProcess.run(["locations", gid, "--sync", "--svg", "family.svg", "--home", bob.path,
                                            "--passphrase-file", passFile.path, "--timeout", "5"], directory: elsewhere)
        XCTAssertEqual(mapped.status, 0, mapped.stdout + mapped.stderr)
        let mapPath = elsewhere.appendingPathComponent("family.svg").path
        XCTAssertTrue(FileManager.default.fileExists(atPath: mapPath), "the map is where the caller is")
        XCTAssertTrue(mapped.stdout.contains("map written to \(mapPath)"), mapped.stdout)
        XCTAssertTrue(mapped.stdout.contains("Alice: 51.50000, -0.12000 at "), "a name, no ±0 m: \(mapped.stdout)")
        try alice.ok(["group", "add", gid, c])
        _ = try await run.waitForLine(prefix: "Carol joined Family", timeout: .seconds(20))
        _ = try join(carol)
        try carol.ok(["leave", gid])
        try alice.ok(["sync"])
        _ = try await run.waitForLine(prefix: "Carol left Family", timeout: .seconds(20))

        // A name changed while Bob runs reaches him live (its kind 0), and resolves.
        try alice.ok(["profile", "set", "--name", "Mum"])
        let deadline = ContinuousClock.now + .seconds(20)
        var name: String?
        while ContinuousClock.now < deadline, name != "Mum" {
            name = (try bob.ok(["profile", "show", a])["profile"] as? [String: Any])?["name"] as? String
            if name != "Mum" { try await Task.sleep(for: .milliseconds(200)) }
        }
        XCTAssertEqual(name, "Mum")
        XCTAssertEqual((try bob.ok(["profile", "show", "mum"])["profile"] as? [String: Any])?["pubkey"] as? String, a)
    }

    /// One person's messages never swap (issue 22, item 5): Bob's chats, several a second,
    /// reach Carol in any order, and she lists them in the order Bob sent them (created_at,
    /// then Bob's ratchet generation, then arrival).
    func testOnePersonsMessagesOfTheSameSecondKeepTheirOrder() throws {
        let bob = try makeHome("bob"), carol = try makeHome("carol")
        let gid = try XCTUnwrap((try bob.ok(["group", "create", "Order", "--invite", try carol.pubkey])["group"] as? [String: Any])?["nostr_group_id"] as? String)
        _ = try join(carol)
        let sent = (1...16).map { String(format: "m%02d", $0) }
        for text in sent { try bob.ok(["chat", gid, text]) }
        try carol.ok(["sync"])
        let received = try XCTUnwrap(try carol.ok(["messages", gid])["messages"] as? [[String: Any]]).compactMap { $0["text"] as? String }
        XCTAssertEqual(received, sent)
        let ours = try XCTUnwrap(try bob.ok(["messages", gid, "--limit", "5"])["messages"] as? [[String: Any]]).compactMap { $0["text"] as? String }
        XCTAssertEqual(ours, Array(sent.suffix(5)), "the newest five, in order, on the sender's side too")
    }

    /// `run`'s upkeep: a consumed KeyPackage is replaced, and groups self-update on the period.
    func testRunRenewsConsumedKeyPackagesAndSelfUpdates() async throws {
        let alice = try makeHome("alice"), bob = try makeHome("bob")
        let b = try bob.pubkey
        let gid = try XCTUnwrap((try alice.ok(["group", "create", "Upkeep", "--invite", b])["group"] as? [String: Any])?["nostr_group_id"] as? String)
        try bob.ok(["sync"])  // the invite consumes Bob's only KeyPackage
        func bobKeyPackages() throws -> Int {
            (try alice.ok(["fetch", "--filter", #"{"kinds":[30443],"authors":["\#(b)"]}"#])["events"] as? [Any])?.count ?? 0
        }
        XCTAssertEqual(try bobKeyPackages(), 1)

        let run = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", bob.path, "--passphrase-file", passFile.path, "--json", "--timeout", "5",
            "--self-update-period", "3", "--maintenance-interval", "1"])
        defer { run.stop() }
        _ = try await run.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))
        let id = try XCTUnwrap(((try bob.ok(["invite", "list"])["invites"] as? [[String: Any]])?.first)?["id"] as? String)
        try bob.ok(["invite", "accept", id])

        let deadline = ContinuousClock.now + .seconds(30)
        var epoch = 1
        while ContinuousClock.now < deadline, epoch < 2 {
            try await Task.sleep(for: .milliseconds(500))
            try alice.ok(["sync"])
            epoch = try XCTUnwrap((try alice.ok(["group", "show", gid])["group"] as? [String: Any])?["epoch"] as? Int)
        }
        XCTAssertGreaterThanOrEqual(epoch, 2, "Bob's scheduled self-update reached Alice")
        XCTAssertGreaterThanOrEqual(try bobKeyPackages(), 2, "a fresh KeyPackage replaced the consumed one")
        // The self-update wrote to the write-ahead log; with nothing synced since, only run's
        // upkeep can truncate it (it must, while the store stays open: a long run may never sync).
        let wal = bob.path + "/store.db-wal"
        func walSize() -> Int? { (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? NSNumber)?.intValue }
        let walDeadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < walDeadline, walSize() != 0 { try await Task.sleep(for: .milliseconds(100)) }
        XCTAssertEqual(walSize(), 0, "burrow run's upkeep truncated the WAL (the file stays, empty, while the store is open)")
        run.stop()
        let members = try XCTUnwrap((try alice.ok(["group", "show", gid])["group"] as? [String: Any])?["members"] as? [String])
        XCTAssertEqual(Set(members), [try alice.pubkey, b])
    }

    /// Loopback-only relays in a group with others get a warning; `relay add --public` adds the
    /// listed public relays only when asked; `group relays` changes the group's relays and
    /// members follow.
    func testRelayReachabilityWarningsAndGroupRelays() async throws {
        let alice = try makeHome("alice"), bob = try makeHome("bob")
        let created = try alice.ok(["group", "create", "Local", "--invite", try bob.pubkey])
        let warnings = try XCTUnwrap(created["warnings"] as? [String])
        XCTAssertEqual(warnings.count, 1)
        XCTAssertTrue(warnings[0].contains("--public"), warnings[0])
        let gid = try XCTUnwrap((created["group"] as? [String: Any])?["nostr_group_id"] as? String)
        XCTAssertEqual(try XCTUnwrap(try alice.ok(["group", "create", "Solo"])["warnings"] as? [String]), [])

        let carol = Home(test: self, name: "carol")
        try carol.ok(["init", "--kdf-memory-mib", "8"])
        let relays = try XCTUnwrap(try carol.ok(["relay", "add", "--public"])["relays"] as? [String])
        XCTAssertEqual(relays, ["wss://relay.damus.io", "wss://nos.lol", "wss://relay.primal.net"])

        _ = try join(bob)
        let second = try await RelayProcess.start(RelayProcess.Options(notesPerMinute: 10_000))
        defer { second.stop() }
        let changed = try XCTUnwrap(try alice.ok(["group", "relays", gid, "--add", second.url])["group"] as? [String: Any])
        XCTAssertEqual(Set(try XCTUnwrap(changed["relays"] as? [String])), [relay.url, second.url])
        try bob.fails(["group", "relays", gid, "--remove", relay.url], "not_admin")
        try bob.ok(["sync"])
        XCTAssertEqual(Set(try XCTUnwrap(try bob.group(gid)["relays"] as? [String])), [relay.url, second.url])
        try alice.fails(["group", "relays", gid, "--remove", relay.url, "--remove", second.url], "invalid_input")
    }

    /// The relay restarts while commands run: each command's refused or dropped connection is
    /// reconnected within --timeout (Docs/cli.md), so the command succeeds instead of ending
    /// with relay_unreachable, and nothing is lost or doubled.
    func testCommandsStartedWhileTheRelayRestartsSucceed() async throws {
        relay.stop()
        relay = try await RelayProcess.start(RelayProcess.Options(persistent: true, notesPerMinute: 10_000))
        let mum = try makeHome("mum"), dad = try makeHome("dad")
        let created = try mum.ok(["group", "create", "Family", "--invite", try dad.pubkey])
        let gid = try XCTUnwrap((created["group"] as? [String: Any])?["nostr_group_id"] as? String)
        _ = try join(dad)

        /// Runs `args` for `home` while the relay is down and comes back after a second.
        func duringRestart(_ home: Home, _ args: [String]) async throws -> BurrowResult {
            relay.kill()
            let command = Task.detached { try home.run(args) }
            try await Task.sleep(for: .seconds(1))
            try await relay.restart()
            return try await command.value
        }
        let sent = try await duringRestart(mum, ["chat", gid, "sent while the relay restarted"])
        XCTAssertEqual(sent.status, 0, sent.stdout + sent.stderr)
        let synced = try await duringRestart(dad, ["sync"])
        XCTAssertEqual(synced.status, 0, synced.stdout + synced.stderr)
        let renamed = try await duringRestart(mum, ["group", "rename", gid, "Family (renamed mid-restart)"])
        XCTAssertEqual(renamed.status, 0, renamed.stdout + renamed.stderr)

        try dad.ok(["sync"])
        let texts = try XCTUnwrap(try dad.ok(["messages", gid])["messages"] as? [[String: Any]]).compactMap { $0["text"] as? String }
        XCTAssertEqual(texts.filter { $0 == "sent while the relay restarted" }.count, 1, "\(texts)")
        XCTAssertEqual(try dad.group(gid)["name"] as? String, "Family (renamed mid-restart)")
        XCTAssertEqual(try dad.group(gid)["epoch"] as? Int, try mum.group(gid)["epoch"] as? Int)
    }
}
