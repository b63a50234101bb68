import Foundation
import TestSupport
import XCTest

/// Join requests over relays (Whistle's kind 1080) through the real program: `join request`,
/// `invite requests`, `invite approve`, `invite reject`, the `join_request` line of `run`, and
/// their refusals, over rust-nostr's LocalRelay on a free loopback port.
final class CLIJoinRequestTests: XCTestCase {
    var root: URL!
    var pass: String!
    var relay: RelayProcess!

    override func setUp() async throws {
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-clijr-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        pass = root.appendingPathComponent("pass").path
        try "join request passphrase".write(toFile: pass, atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start(RelayProcess.Options(notesPerMinute: 10_000))
    }

    override func tearDown() async throws {
        relay?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    func home(_ name: String) throws -> BurrowHome { try BurrowHome.create(in: root, name: name, relay: relay.url, passphraseFile: pass) }

    func requests(_ home: BurrowHome, _ extra: [String] = []) throws -> [[String: Any]] {
        (try home.ok(["invite", "requests"] + extra)["requests"] as? [[String: Any]]) ?? []
    }

    /// A Whistle invite deep link for `group` from `inviter` (base64 of the JSON object).
    func link(inviter: String, group: String) -> String {
        let json = #"{"relay":"\#(relay.url)","inviterNpub":"\#(inviter)","groupId":"\#(group)"}"#
        return "whistle://invite/" + Data(json.utf8).base64EncodedString()
    }

    func testRequestApproveJoinAndChat() throws {
        let alice = try home("alice"), bob = try home("bob"), carol = try home("carol"), dave = try home("dave")
        let aliceKey = try alice.pubkey, bobKey = try bob.pubkey, carolKey = try carol.pubkey, daveKey = try dave.pubkey
        // Alice's group, with Carol as a second admin.
        let created = try XCTUnwrap(try alice.ok(["group", "create", "Family", "--invite", carolKey, "--admin", carolKey])["group"] as? [String: Any])
        let group = try XCTUnwrap(created["mls_group_id"] as? String)
        XCTAssertEqual(try carol.acceptInvites().count, 1)

        // Bob asks Alice.
        let sent = try bob.ok(["join", "request", group, "--inviter", aliceKey, "--name", "Bob"])
        let requestID = try XCTUnwrap(sent["request_id"] as? String)
        XCTAssertEqual(requestID.count, 64)
        XCTAssertEqual(sent["group_id"] as? String, group)
        XCTAssertEqual(sent["inviter"] as? String, aliceKey)
        XCTAssertEqual(sent["relays"] as? [String], [relay.url])

        // Alice syncs and lists it.
        let synced = try alice.ok(["sync"])
        XCTAssertEqual((synced["errors"] as? [Any])?.count, 0, "\(synced)")
        let listed = try requests(alice)
        XCTAssertEqual(listed.count, 1)
        let request = try XCTUnwrap(listed.first)
        XCTAssertEqual(request["id"] as? String, requestID)
        XCTAssertEqual(request["group"] as? String, group)
        XCTAssertEqual(request["group_name"] as? String, "Family")
        XCTAssertEqual(request["from"] as? String, bobKey)
        XCTAssertEqual(request["name"] as? String, "Bob")
        XCTAssertNotNil(request["created_at"] as? Int)
        XCTAssertEqual(try requests(alice, ["Family"]).count, 1)
        // Syncing again finds nothing new (the same request is not listed twice).
        _ = try alice.ok(["sync"])
        XCTAssertEqual(try requests(alice).count, 1)

        // Alice approves: Bob is a member; the request is settled.
        let approved = try XCTUnwrap(try alice.ok(["invite", "approve", String(requestID.prefix(12))])["group"] as? [String: Any])
        XCTAssertEqual(Set(approved["members"] as? [String] ?? []), [aliceKey, bobKey, carolKey])
        XCTAssertEqual(try requests(alice).count, 0)
        XCTAssertEqual(try alice.errorCode(["invite", "approve", requestID]), "unknown_request")

        // Bob sees the welcome from Alice, accepts, and they chat.
        _ = try bob.ok(["sync"])
        let invites = (try bob.ok(["invite", "list"])["invites"] as? [[String: Any]]) ?? []
        XCTAssertEqual(invites.count, 1)
        XCTAssertEqual(invites.first?["from"] as? String, aliceKey)
        XCTAssertEqual(invites.first?["nostr_group_id"] as? String, created["nostr_group_id"] as? String)
        let inviteID = try XCTUnwrap(invites.first?["id"] as? String)
        XCTAssertEqual((try bob.ok(["invite", "accept", inviteID])["group"] as? [String: Any])?["state"] as? String, "active")
        _ = try bob.ok(["chat", group, "hi, I asked to join"])
        _ = try alice.ok(["sync"])
        XCTAssertEqual(try alice.messages(group).compactMap { $0["text"] as? String }, ["hi, I asked to join"])
        _ = try alice.ok(["chat", group, "welcome Bob"])
        _ = try bob.ok(["sync"])
        XCTAssertEqual(try bob.messages(group).compactMap { $0["text"] as? String }, ["hi, I asked to join", "welcome Bob"])

        // Dave asks Bob, who is no admin: Bob's sync refuses it with the reason; nothing is listed.
        _ = try dave.ok(["join", "request", group, "--inviter", bobKey])
        let bobSync = try bob.ok(["sync"])
        let reasons = ((bobSync["errors"] as? [[String: Any]]) ?? []).compactMap { $0["reason"] as? String }
        XCTAssertTrue(reasons.contains { $0.contains("we do not administer group \(group)") }, "\(reasons)")
        XCTAssertEqual(try requests(bob).count, 0)

        // Dave asks Alice through a Whistle link; Alice rejects it, and it is gone.
        let viaLink = try dave.ok(["join", "request", link(inviter: aliceKey, group: group), "--name", "Dave"])
        XCTAssertEqual(viaLink["inviter"] as? String, aliceKey)
        XCTAssertEqual(viaLink["group_id"] as? String, group)
        _ = try alice.ok(["sync"])
        XCTAssertEqual(try requests(alice).compactMap { $0["from"] as? String }, [daveKey])
        let rejected = try XCTUnwrap(try alice.ok(["invite", "reject", try XCTUnwrap(viaLink["request_id"] as? String)])["request"] as? [String: Any])
        XCTAssertEqual(rejected["state"] as? String, "rejected")
        XCTAssertEqual(rejected["name"] as? String, "Dave")
        XCTAssertEqual(try requests(alice).count, 0)
        _ = try dave.ok(["sync"])
        XCTAssertEqual(((try dave.ok(["invite", "list"])["invites"] as? [Any]) ?? []).count, 0, "a rejected request brings no welcome")

        // Dave asks again; Carol removes Alice's admin rights before she approves: `not_admin`,
        // and the request stays listed (nothing lost).
        let again = try XCTUnwrap(try dave.ok(["join", "request", group, "--inviter", aliceKey])["request_id"] as? String)
        _ = try alice.ok(["sync"])
        XCTAssertEqual(try requests(alice).compactMap { $0["id"] as? String }, [again])
        _ = try carol.ok(["sync"])
        _ = try carol.ok(["group", "admins", group, "--remove", aliceKey])
        XCTAssertEqual(try alice.errorCode(["invite", "approve", again]), "not_admin")
        XCTAssertEqual(try requests(alice).compactMap { $0["id"] as? String }, [again])
        XCTAssertFalse((try alice.group(group)["members"] as? [String] ?? []).contains(daveKey))
    }

    func testRefusalsAndUsage() throws {
        let alice = try home("alice"), bob = try home("bob")
        let aliceKey = try alice.pubkey
        let group = try XCTUnwrap((try alice.ok(["group", "create", "Family"])["group"] as? [String: Any])?["mls_group_id"] as? String)

        XCTAssertEqual(try bob.run(["join", "request", group]).status, 2, "--inviter is required with a bare group id")
        XCTAssertEqual(try bob.errorCode(["join", "request", "not-hex", "--inviter", aliceKey]), "invalid_input")
        XCTAssertEqual(try bob.errorCode(["join", "request", group, "--inviter", "npub1nope"]), "invalid_input")
        XCTAssertEqual(try bob.errorCode(["join", "request", group, "--inviter", try bob.pubkey]), "invalid_input")
        XCTAssertEqual(try bob.errorCode(["join", "request", "whistle://invite/!!!"]), "invalid_input")
        XCTAssertEqual(try bob.errorCode(["join", "request", link(inviter: aliceKey, group: group), "--inviter", try bob.pubkey]), "invalid_input")
        XCTAssertEqual(try bob.errorCode(["join", "request", group, "--inviter", aliceKey, "--name", String(repeating: "x", count: 65)]),
                       "invalid_input")
        XCTAssertEqual(try alice.errorCode(["invite", "approve", "0123456789abcdef"]), "unknown_request")
        XCTAssertEqual(try alice.errorCode(["invite", "reject", "xyz"]), "unknown_request")
        XCTAssertEqual(try alice.errorCode(["invite", "requests", "Nope"]), "unknown_group")
        XCTAssertEqual(try requests(alice).count, 0)
    }

    /// `burrow run` prints a `join_request` line live; forwarded commands list and approve it.
    func testRunPrintsJoinRequestsLive() async throws {
        let alice = try home("alice"), bob = try home("bob")
        let aliceKey = try alice.pubkey
        let group = try XCTUnwrap((try alice.ok(["group", "create", "Family"])["group"] as? [String: Any])?["mls_group_id"] as? String)

        let run = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", alice.path, "--passphrase-file", pass, "--json", "--timeout", "5"])
        defer { run.stop() }
        _ = try await run.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))

        let requestID = try XCTUnwrap(try bob.ok(["join", "request", group, "--inviter", aliceKey, "--name", "Bob"])["request_id"] as? String)
        let line = try await run.waitForLine(containing: #""type":"join_request""#, timeout: .seconds(20))
        let printed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        XCTAssertEqual(printed["id"] as? String, requestID)
        XCTAssertEqual(printed["group"] as? String, group)
        XCTAssertEqual(printed["from"] as? String, try bob.pubkey)
        XCTAssertEqual(printed["name"] as? String, "Bob")

        // Through the running node.
        XCTAssertEqual(try requests(alice).compactMap { $0["id"] as? String }, [requestID])
        let approved = try XCTUnwrap(try alice.ok(["invite", "approve", requestID])["group"] as? [String: Any])
        XCTAssertEqual((approved["members"] as? [String])?.count, 2)
        XCTAssertEqual(try bob.acceptInvites().count, 1)
        XCTAssertEqual(try bob.group(group)["state"] as? String, "active")
    }
}
