import Foundation
import RelayServer
import TestSupport
import XCTest

/// Burrow (the real `burrow` program) and MDK 0.8.0 users (mdk-python, one process each) in
/// the same family groups over a relay on 127.0.0.1, in both directions: the flows, run by the
/// two classes at the end against rust-nostr's LocalRelay and against Burrow's own relay.
class MarmotInteropFlows: XCTestCase {
    var root: URL!
    var relay: RelayProcess?
    /// Burrow's own relay, in-process, when a subclass asks for it instead of LocalRelay.
    var burrowRelay: RunningRelay?
    var relayURL: String { burrowRelay?.url ?? relay?.url ?? "" }
    class var usesBurrowRelay: Bool { false }
    var peers: [MDKPeer] = []
    var passFile: String { root.appendingPathComponent("pass").path }

    override func setUp() async throws {
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-mdk-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "interop passphrase".write(toFile: passFile, atomically: true, encoding: .utf8)
        if Self.usesBurrowRelay {
            var configuration = RelayServerConfiguration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            configuration.dataDirectory = root.appendingPathComponent("relay-data").path
            configuration.limits.eventsPerMinute = 100_000
            configuration.limits.eventsPerMinutePerKey = 100_000
            configuration.limits.requestsPerMinute = 100_000
            burrowRelay = try await RunningRelay.start(configuration)
        } else {
            relay = try await RelayProcess.start(RelayProcess.Options(notesPerMinute: 10_000))
        }
    }

    override func tearDown() async throws {
        for peer in peers { peer.terminate() }
        relay?.stop()
        await burrowRelay?.close()
        try? FileManager.default.removeItem(at: root)
    }

    func mdk(_ name: String, kinds: [Int] = [30443]) async throws -> MDKPeer {
        let dir = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let peer = try await MDKPeer.start(relays: [relayURL], directory: dir)
        peers.append(peer)
        _ = try await peer.publishKeyPackage(kinds: kinds)
        return peer
    }

    func burrow(_ name: String) throws -> BurrowHome {
        try BurrowHome.create(in: root, name: name, relay: relayURL, passphraseFile: passFile)
    }

    func members(_ group: [String: Any]) -> Set<String> { Set(group["members"] as? [String] ?? []) }

    /// An MDK admin creates the group and invites Burrow and another MDK user; everything each
    /// side sends is read by the other; MDK promotes Burrow, which then adds an MDK user from a
    /// kind-443 KeyPackage, renames the group and removes a member; self-updates from both
    /// sides; a message MDK made five epochs earlier still opens at Burrow.
    func flowMDKCreatesAndBurrowJoins() async throws {
        let alice = try await mdk("alice"), bob = try await mdk("bob"), carol = try await mdk("carol", kinds: [443])
        let home = try burrow("burrow")
        let me = try home.pubkey

        let created = try await alice.createGroup(name: "Family", description: "made by MDK", invitees: [me, bob.pubkey],
                                                  admins: [alice.pubkey])
        let joined = try XCTUnwrap(try home.acceptInvites().first)
        XCTAssertEqual(joined["nostr_group_id"] as? String, created.nostrGroupID)
        XCTAssertEqual(joined["name"] as? String, "Family")
        XCTAssertEqual(joined["description"] as? String, "made by MDK")
        XCTAssertEqual(joined["epoch"] as? Int, 1)
        XCTAssertEqual(members(joined), [alice.pubkey, bob.pubkey, me])
        XCTAssertEqual(joined["admins"] as? [String], [alice.pubkey])
        _ = try await bob.sync()
        let gid = created.nostrGroupID

        // MDK → Burrow: chat, Whistle location, Whistle JSON chat, leave request.
        let hello = try await alice.send(group: gid, kind: 9, content: "hello from MDK")
        let whistleLocation = #"{"type":"location","lat":51.5,"lon":-0.12,"alt":11.0,"acc":8.0,"ts":1795300000,"batt":64,"interval":900,"stationary":true,"v":1}"#
        _ = try await alice.send(group: gid, kind: 1, content: whistleLocation)
        _ = try await bob.send(group: gid, kind: 9, content: #"{"type":"chat","text":"whistle style","ts":1795300000,"v":1}"#)
        _ = try await bob.send(group: gid, kind: 9, content: #"{"type":"nickname","name":"Bobby","ts":1795300000,"v":1}"#)
        _ = try await bob.send(group: gid, kind: 2, content: "")
        let report = try home.ok(["sync"])
        XCTAssertEqual((report["errors"] as? [Any])?.count ?? 0, 0, "\(report)")
        XCTAssertEqual(report["messages"] as? Int, 5)
        let received = try home.messages(gid)
        let helloMessage = try XCTUnwrap(received.first { $0["id"] as? String == hello.rumorID })
        XCTAssertEqual(helloMessage["sender"] as? String, alice.pubkey)
        XCTAssertEqual(helloMessage["text"] as? String, "hello from MDK")
        let location = try XCTUnwrap(received.first { $0["kind"] as? Int == 1 }?["location"] as? [String: Any])
        XCTAssertEqual(location["lat"] as? Double, 51.5)
        XCTAssertEqual(location["interval"] as? Int, 900)
        XCTAssertEqual(location["stationary"] as? Bool, true)
        XCTAssertTrue(received.contains { $0["text"] as? String == "whistle style" && $0["sender"] as? String == bob.pubkey })
        XCTAssertTrue(received.contains { $0["sender_name"] as? String == "Bobby" })
        let requests = try XCTUnwrap(try home.ok(["group", "requests", gid])["requests"] as? [[String: Any]])
        XCTAssertEqual(requests.map { $0["member"] as? String }, [bob.pubkey])

        // Burrow → MDK.
        let sent = try home.ok(["chat", gid, "hello from Burrow"])
        try home.ok(["location", gid, "--lat", "48.1", "--lon", "11.5", "--acc", "5", "--batt", "90"])
        _ = try await alice.sync()
        let aliceMessages = try await alice.messages(group: gid)
        let ours = aliceMessages.filter { $0.sender == me }
        XCTAssertEqual(ours.map(\.kind).sorted(), [1, 9])
        let chat = try XCTUnwrap(ours.first { $0.kind == 9 })
        XCTAssertEqual(chat.content, "hello from Burrow")
        XCTAssertEqual(chat.rumorID, sent["message_id"] as? String)
        let locationEvent = try XCTUnwrap(ours.first { $0.kind == 1 })
        let payload = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(locationEvent.content.utf8)) as? [String: Any])
        XCTAssertEqual(payload["type"] as? String, "location")
        XCTAssertEqual(payload["lat"] as? Double, 48.1)
        XCTAssertEqual(payload["batt"] as? Int, 90)

        // Non-admin Burrow cannot commit; MDK makes it admin.
        XCTAssertEqual(try home.errorCode(["group", "rename", gid, "Nope"]), "not_admin")
        _ = try await alice.updateGroupData(group: gid, admins: [alice.pubkey, me])
        try home.ok(["sync"])
        XCTAssertEqual(Set(try home.group(gid)["admins"] as? [String] ?? []), [alice.pubkey, me])

        // Burrow adds Carol (443 KeyPackage), renames, removes Bob; MDK follows.
        try home.ok(["group", "add", gid, carol.pubkey])
        let carolSync = try await carol.sync()
        XCTAssertEqual(carolSync.welcomes.first?.accepted, true)
        try home.ok(["group", "rename", gid, "Family (renamed by Burrow)"])
        try home.ok(["group", "remove", gid, bob.pubkey])
        _ = try await alice.sync()
        _ = try await carol.sync()
        _ = try await bob.sync()
        let burrowView = try home.group(gid)
        for peer in [alice, carol] {
            let state = try await peer.group(gid)
            XCTAssertEqual(state.name, "Family (renamed by Burrow)")
            XCTAssertEqual(state.epoch, burrowView["epoch"] as? Int)
            XCTAssertEqual(Set(state.members), members(burrowView))
        }
        XCTAssertEqual(members(burrowView), [alice.pubkey, carol.pubkey, me])
        let bobState = try await bob.group(gid)
        XCTAssertEqual(bobState.state, "inactive")

        // Self-updates from each side.
        _ = try await carol.selfUpdate(group: gid)
        try home.ok(["sync"])
        try home.ok(["group", "self-update", gid])
        _ = try await alice.sync()
        _ = try await carol.sync()
        let epoch = try XCTUnwrap(try home.group(gid)["epoch"] as? Int)
        let aliceEpoch = try await alice.group(gid).epoch
        let carolEpoch = try await carol.group(gid).epoch
        XCTAssertEqual(aliceEpoch, epoch)
        XCTAssertEqual(carolEpoch, epoch)

        // A message MDK made five epochs ago, delivered late, still opens.
        let late = try await alice.prepare(group: gid, kind: 9, content: "written five epochs ago")
        for _ in 0..<5 { _ = try await alice.selfUpdate(group: gid) }
        try home.ok(["sync"])
        XCTAssertEqual(try home.group(gid)["epoch"] as? Int, epoch + 5)
        _ = try await alice.publish(event: late.event)
        let lateReport = try home.ok(["sync"])
        XCTAssertEqual(lateReport["messages"] as? Int, 1, "\(lateReport)")
        XCTAssertTrue(try home.messages(gid).contains { $0["id"] as? String == late.message.rumorID })

        // And the conversation goes on at the newest epoch.
        try home.ok(["chat", gid, "still here"])
        _ = try await carol.sync()
        let carolMessages = try await carol.messages(group: gid)
        XCTAssertTrue(carolMessages.contains { $0.content == "still here" && $0.sender == me })
    }

    /// Burrow creates the group and invites MDK users (30443 and 443 KeyPackages); an MDK
    /// member's SelfRemove leave converges with everyone auto-committing; Burrow, demoted from
    /// admin first, leaves and MDK completes its removal.
    func flowBurrowCreatesAndMDKJoins() async throws {
        let alice = try await mdk("alice"), bob = try await mdk("bob", kinds: [443])
        let home = try burrow("burrow")
        let me = try home.pubkey

        let created = try XCTUnwrap(try home.ok(["group", "create", "Cousins", "--description", "made by Burrow",
                                                 "--invite", alice.pubkey, "--invite", bob.pubkey,
                                                 "--admin", alice.pubkey])["group"] as? [String: Any])
        let gid = try XCTUnwrap(created["nostr_group_id"] as? String)
        for peer in [alice, bob] {
            let report = try await peer.sync()
            XCTAssertEqual(report.welcomes.first?.accepted, true, "\(report.welcomes)")
            let state = try await peer.group(gid)
            XCTAssertEqual(state.name, "Cousins")
            XCTAssertEqual(state.description, "made by Burrow")
            XCTAssertEqual(state.epoch, 1)
            XCTAssertEqual(Set(state.members), [alice.pubkey, bob.pubkey, me])
            XCTAssertEqual(Set(state.admins), [alice.pubkey, me])
            // LCD rule: both KeyPackages (the 443 carries the same package) offer SelfRemove.
            XCTAssertEqual(state.requiredProposals, ["self_remove"])
        }

        try home.ok(["chat", gid, "welcome, cousins"])
        _ = try await bob.send(group: gid, kind: 9, content: "thanks")
        _ = try await alice.sync()
        let aliceMessages = try await alice.messages(group: gid)
        XCTAssertTrue(aliceMessages.contains { $0.sender == me && $0.content == "welcome, cousins" })
        try home.ok(["sync"])
        XCTAssertTrue(try home.messages(gid).contains { $0["sender"] as? String == bob.pubkey && $0["text"] as? String == "thanks" })

        // Bob leaves with SelfRemove: Burrow and Alice both owe a commit; one wins everywhere.
        _ = try await bob.leaveGroup(group: gid)
        try home.ok(["sync"])
        _ = try await alice.sync()
        try home.ok(["sync"])
        _ = try await bob.sync()
        let afterLeave = try home.group(gid)
        XCTAssertEqual(members(afterLeave), [alice.pubkey, me])
        let aliceAfterLeave = try await alice.group(gid)
        XCTAssertEqual(Set(aliceAfterLeave.members), [alice.pubkey, me])
        XCTAssertEqual(aliceAfterLeave.epoch, afterLeave["epoch"] as? Int)

        // Messages still flow at the converged epoch.
        _ = try await alice.send(group: gid, kind: 9, content: "just us now")
        try home.ok(["sync"])
        XCTAssertTrue(try home.messages(gid).contains { $0["text"] as? String == "just us now" })

        // Burrow leaves: it demotes itself, asks, proposes; Alice (admin) completes it.
        let leaving = try XCTUnwrap(try home.ok(["leave", gid])["group"] as? [String: Any])
        XCTAssertEqual(leaving["state"] as? String, "leaving")
        XCTAssertEqual(leaving["admins"] as? [String], [alice.pubkey])
        _ = try await alice.sync()
        try home.ok(["sync"])
        XCTAssertEqual(try home.group(gid)["state"] as? String, "left")
        let aliceFinal = try await alice.group(gid)
        XCTAssertEqual(aliceFinal.members, [alice.pubkey])

        // MDK's admin adds Burrow back (issue 22, item 2): the welcome to a group Burrow left is
        // a new invite; accepted, Burrow is at MDK's epoch and reads and writes again.
        _ = try await alice.addMembers(group: gid, invitees: [me])
        let back = try home.ok(["invite", "list", "--sync"])
        let invites = try XCTUnwrap(back["invites"] as? [[String: Any]])
        XCTAssertEqual(invites.map { $0["nostr_group_id"] as? String }, [gid])
        XCTAssertEqual((back["sync_errors"] as? [Any])?.count, 0, "\(back)")
        let rejoined = try XCTUnwrap(try home.ok(["invite", "accept", try XCTUnwrap(invites[0]["id"] as? String)])["group"] as? [String: Any])
        let aliceAgain = try await alice.group(gid)
        XCTAssertEqual(rejoined["state"] as? String, "active")
        XCTAssertEqual(rejoined["epoch"] as? Int, aliceAgain.epoch)
        _ = try await alice.send(group: gid, kind: 9, content: "welcome back")
        try home.ok(["chat", gid, "thanks for having me back"])
        try home.ok(["sync"])
        let texts = try home.messages(gid).compactMap { $0["text"] as? String }
        XCTAssertTrue(texts.contains("welcome back"))
        XCTAssertTrue(texts.contains("just us now"), "the history from before leaving stays")
        _ = try await alice.sync()
        let aliceHas = try await alice.messages(group: gid)
        XCTAssertTrue(aliceHas.contains { $0.sender == me && $0.content == "thanks for having me back" })
    }

    /// Burrow stops mid-conversation; MDK advances two epochs and keeps talking; Burrow's next
    /// sync catches up in order with nothing lost or doubled.
    func flowCatchUpAfterBeingAway() async throws {
        let alice = try await mdk("alice")
        let home = try burrow("burrow")
        let created = try await alice.createGroup(name: "Away", description: "", invitees: [try home.pubkey], admins: [alice.pubkey])
        let gid = created.nostrGroupID
        try home.acceptInvites()
        _ = try await alice.send(group: gid, kind: 9, content: "m1")
        try home.ok(["chat", gid, "b1"])
        _ = try await alice.sync()

        var expected = ["m1", "b1"]
        // A second between sends, so created_at (not same-second arrival order) decides the order.
        func tick() async throws { try await Task.sleep(for: .milliseconds(1100)) }
        for round in 0..<2 {
            try await tick()
            _ = try await alice.send(group: gid, kind: 9, content: "before commit \(round)")
            _ = try await alice.selfUpdate(group: gid)
            try await tick()
            _ = try await alice.send(group: gid, kind: 9, content: "after commit \(round)")
            expected += ["before commit \(round)", "after commit \(round)"]
        }
        _ = try await alice.updateGroupData(group: gid, name: "Away (renamed)")
        try await tick()
        _ = try await alice.send(group: gid, kind: 9, content: "after rename")
        expected.append("after rename")

        let report = try home.ok(["sync"])
        XCTAssertEqual((report["errors"] as? [Any])?.count ?? 0, 0, "\(report)")
        XCTAssertEqual(report["messages"] as? Int, 5)
        XCTAssertEqual(try home.messages(gid).compactMap { $0["text"] as? String }, expected)
        let again = try home.ok(["sync"])
        XCTAssertEqual(again["processed"] as? Int, 0)
        XCTAssertEqual(again["messages"] as? Int, 0)
        XCTAssertEqual(try home.messages(gid).count, expected.count)
        let view = try home.group(gid)
        XCTAssertEqual(view["name"] as? String, "Away (renamed)")
        let aliceEpoch = try await alice.group(gid).epoch
        XCTAssertEqual(view["epoch"] as? Int, aliceEpoch)
    }
}

/// The same flows with Burrow's own relay (Relays/RelayServer, NIP-42 for gift wraps) instead
/// of rust-nostr's LocalRelay: the node and MDK users get the same results.
final class MarmotOnBurrowRelayTests: MarmotInteropFlows {
    override class var usesBurrowRelay: Bool { true }

    func testMDKCreatesAndBurrowJoins() async throws { try await flowMDKCreatesAndBurrowJoins() }
    func testBurrowCreatesAndMDKJoins() async throws { try await flowBurrowCreatesAndMDKJoins() }
    func testCatchUpAfterBeingAway() async throws { try await flowCatchUpAfterBeingAway() }
}

/// Against rust-nostr's LocalRelay.
final class MarmotNodeInteropTests: MarmotInteropFlows {
    func testMDKCreatesAndBurrowJoins() async throws { try await flowMDKCreatesAndBurrowJoins() }
    func testBurrowCreatesAndMDKJoins() async throws { try await flowBurrowCreatesAndMDKJoins() }
    func testCatchUpAfterBeingAway() async throws { try await flowCatchUpAfterBeingAway() }
}
