import Foundation
import TestSupport
import XCTest

/// A family's node restored on a new machine, with real MDK 0.8.0 members (issue 25): the
/// restored node reads its history, and each group comes back the way the relays allow —
/// caught up and with our leaf's keys replaced, or re-added by an MDK admin after a join
/// request when the relays lost the history since the backup.
final class BackupRestoreInteropTests: MarmotInteropFlows {
    var backupPass: String { root.appendingPathComponent("backup-pass").path }
    let kdf = ["--kdf-memory-mib", "8", "--kdf-passes", "1"]

    private func familyWithBackup() async throws -> (alice: MDKPeer, bob: MDKPeer, home: BurrowHome, gid: String, file: String) {
        try "backup passphrase".write(toFile: backupPass, atomically: true, encoding: .utf8)
        let alice = try await mdk("alice"), bob = try await mdk("bob")
        let home = try burrow("laptop")
        let created = try await alice.createGroup(name: "Family", description: "", invitees: [try home.pubkey, bob.pubkey],
                                                  admins: [alice.pubkey])
        XCTAssertEqual(try home.acceptInvites().count, 1)
        _ = try await bob.sync()
        let gid = created.nostrGroupID
        _ = try await alice.send(group: gid, kind: 9, content: "before the backup")
        try home.ok(["sync"])
        try home.ok(["chat", gid, "laptop says hi"])
        let file = root.appendingPathComponent("family.backup").path
        let made = try home.ok(["backup", "create", file, "--backup-passphrase-file", backupPass] + kdf)
        XCTAssertEqual(made["groups"] as? Int, 1)
        XCTAssertEqual(made["group_messages"] as? Int, 2)
        return (alice, bob, home, gid, file)
    }

    private func restore(_ file: String) throws -> BurrowHome {
        let restored = BurrowHome(path: root.appendingPathComponent("new-laptop").path, passphraseFile: passFile)
        try restored.ok(["backup", "restore", file, "--backup-passphrase-file", backupPass, "--kdf-memory-mib", "8"])
        return restored
    }

    /// The relays still hold everything since the backup: the restored node catches up (a
    /// commit and messages it never saw), then replaces its leaf's keys; MDK follows it to the
    /// same epoch, and messages flow both ways.
    func testARestoredGroupCatchesUpFromItsRelaysAndReplacesItsKeys() async throws {
        let (alice, bob, home, gid, file) = try await familyWithBackup()
        let backupEpoch = try home.group(gid)["epoch"] as? Int
        _ = try await alice.send(group: gid, kind: 9, content: "after the backup")
        _ = try await bob.selfUpdate(group: gid)
        _ = try await alice.sync()
        _ = try await alice.send(group: gid, kind: 9, content: "after bob's update")

        let restored = try restore(file)
        XCTAssertEqual(try restored.messages(gid).compactMap { $0["text"] as? String }, ["before the backup", "laptop says hi"],
                       "the history is back before any sync")
        let report = try restored.ok(["sync"])
        let outcome = try XCTUnwrap((report["restored_groups"] as? [[String: Any]])?.first, "\(report)")
        XCTAssertEqual(outcome["stage"] as? String, "resumed", "\(outcome)")
        let texts = try restored.messages(gid).compactMap { $0["text"] as? String }
        XCTAssertEqual(texts, ["before the backup", "laptop says hi", "after the backup", "after bob's update"])
        let epoch = try XCTUnwrap(try restored.group(gid)["epoch"] as? Int)
        XCTAssertEqual(epoch, (backupEpoch ?? 0) + 2, "bob's update, then our own")
        XCTAssertEqual((try restored.ok(["sync"])["restored_groups"] as? [Any])?.count ?? 0, 0, "resumed once")

        _ = try await alice.sync()
        _ = try await bob.sync()
        let aliceState = try await alice.group(gid)
        let bobState = try await bob.group(gid)
        XCTAssertEqual(aliceState.epoch, epoch)
        XCTAssertEqual(bobState.epoch, epoch)
        try restored.ok(["chat", gid, "back on a new laptop"])
        _ = try await alice.sync()
        let atAlice = try await alice.messages(group: gid)
        XCTAssertTrue(atAlice.contains { $0.content == "back on a new laptop" })
        _ = try await bob.send(group: gid, kind: 9, content: "welcome back")
        try restored.ok(["sync"])
        XCTAssertTrue(try restored.messages(gid).contains { $0["text"] as? String == "welcome back" })
        // The old laptop's state is one epoch behind for good: its keys no longer open the group.
        _ = try home.run(["sync"])
        XCTAssertFalse(try home.messages(gid).contains { $0["text"] as? String == "welcome back" })
    }

    /// The relays lost the group's commit since the backup (the relay restarted empty): the
    /// restored node cannot catch up, so it sends a kind-1080 join request to the admin with a
    /// fresh KeyPackage; the MDK admin removes the old leaf and adds the new one; the restored
    /// node accepts the re-add by itself at its next sync, and messages flow again.
    func testARestoredGroupWhoseHistoryIsGoneAsksToBeReAdded() async throws {
        let (alice, bob, home, gid, file) = try await familyWithBackup()
        let me = try home.pubkey
        _ = try await alice.selfUpdate(group: gid)
        _ = try await bob.sync()
        try await relay?.restart()
        _ = try await alice.send(group: gid, kind: 9, content: "after the relay lost everything")

        let restored = try restore(file)
        let report = try restored.ok(["sync"])
        let outcome = try XCTUnwrap((report["restored_groups"] as? [[String: Any]])?.first, "\(report)")
        XCTAssertEqual(outcome["stage"] as? String, "rejoining", "\(outcome)")
        XCTAssertEqual((try restored.ok(["sync"])["restored_groups"] as? [Any])?.count ?? 0, 0, "asked once; waits for the admin")

        // The admin (MDK reads no kind 1080: the test acts on the request it would have shown)
        // removes the backup's leaf and adds the KeyPackage the request carried.
        _ = try await alice.removeMembers(group: gid, members: [me])
        _ = try await alice.addMembers(group: gid, invitees: [me])
        _ = try await bob.sync()
        let rejoined = try restored.ok(["sync"])
        let second = try XCTUnwrap((rejoined["restored_groups"] as? [[String: Any]])?.first, "\(rejoined)")
        XCTAssertEqual(second["stage"] as? String, "rejoined", "\(second)")
        let view = try restored.group(gid)
        XCTAssertEqual(view["state"] as? String, "active")
        let aliceEpoch = try await alice.group(gid).epoch
        XCTAssertEqual(view["epoch"] as? Int, aliceEpoch)
        XCTAssertEqual(Set(view["members"] as? [String] ?? []), [alice.pubkey, bob.pubkey, me])
        try restored.ok(["chat", gid, "re-added"])
        _ = try await alice.sync()
        let read = try await alice.messages(group: gid)
        XCTAssertTrue(read.contains { $0.content == "re-added" })
        _ = try await alice.send(group: gid, kind: 9, content: "glad you are back")
        try restored.ok(["sync"])
        let texts = try restored.messages(gid).compactMap { $0["text"] as? String }
        XCTAssertEqual(texts.prefix(2), ["before the backup", "laptop says hi"], "the history from the backup stays")
        XCTAssertTrue(texts.contains("glad you are back"), "\(texts)")
    }

    /// The same with a Burrow admin: the restored member's join request is listed as a
    /// `rejoin`; approving it removes the backup's leaf and adds the new KeyPackage in one
    /// commit, which the MDK member processes; all three end on one epoch and talk again.
    func testABurrowAdminReAddsARestoredMemberInOneCommitThatMDKFollows() async throws {
        try "backup passphrase".write(toFile: backupPass, atomically: true, encoding: .utf8)
        let bob = try await mdk("bob")
        let admin = try burrow("admin"), laptop = try burrow("laptop")
        let me = try laptop.pubkey
        let group = try XCTUnwrap(try admin.ok(["group", "create", "Family", "--invite", me, "--invite", bob.pubkey])["group"] as? [String: Any])
        let gid = try XCTUnwrap(group["nostr_group_id"] as? String)
        XCTAssertEqual(try laptop.acceptInvites().count, 1)
        _ = try await bob.sync()
        try admin.ok(["chat", gid, "before the backup"])
        try laptop.ok(["sync"])
        let file = root.appendingPathComponent("laptop.backup").path
        try laptop.ok(["backup", "create", file, "--backup-passphrase-file", backupPass] + kdf)
        try admin.ok(["group", "self-update", gid])
        _ = try await bob.sync()
        try await relay?.restart()
        // Bob (MDK) writes in the new epoch; his publish returns once the restarted relay holds it.
        _ = try await bob.send(group: gid, kind: 9, content: "after the relay lost everything")

        let restored = try restore(file)
        let first = try XCTUnwrap((try restored.ok(["sync"])["restored_groups"] as? [[String: Any]])?.first)
        XCTAssertEqual(first["stage"] as? String, "rejoining", "\(first)")
        let requests = try XCTUnwrap(try admin.ok(["invite", "requests", "--sync"])["requests"] as? [[String: Any]])
        let request = try XCTUnwrap(requests.first { $0["from"] as? String == me }, "\(requests)")
        XCTAssertEqual(request["rejoin"] as? Bool, true)
        let human = try admin.human(["invite", "requests"])
        XCTAssertTrue(human.stdout.contains("asks to be re-added"), human.stdout)
        let approved = try XCTUnwrap(try admin.ok(["invite", "approve", try XCTUnwrap(request["id"] as? String)])["group"] as? [String: Any])
        XCTAssertEqual(Set(approved["members"] as? [String] ?? []), [try admin.pubkey, bob.pubkey, me], "one leaf per person")

        let second = try XCTUnwrap((try restored.ok(["sync"])["restored_groups"] as? [[String: Any]])?.first)
        XCTAssertEqual(second["stage"] as? String, "rejoined", "\(second)")
        _ = try await bob.sync()
        let bobState = try await bob.group(gid)
        XCTAssertEqual(bobState.epoch, approved["epoch"] as? Int, "MDK followed the re-add commit")
        XCTAssertEqual(try restored.group(gid)["epoch"] as? Int, approved["epoch"] as? Int)
        try restored.ok(["chat", gid, "back again"])
        _ = try await bob.sync()
        let atBob = try await bob.messages(group: gid)
        XCTAssertTrue(atBob.contains { $0.content == "back again" })
        _ = try await bob.send(group: gid, kind: 9, content: "hello from MDK")
        try restored.ok(["sync"])
        // Sent within the same second: order among them is by event id, so look for each.
        XCTAssertTrue(try restored.messages(gid).contains { $0["text"] as? String == "hello from MDK" })
        try admin.ok(["sync"])
        let atAdmin = try admin.messages(gid).compactMap { $0["text"] as? String }
        XCTAssertTrue(atAdmin.contains("hello from MDK") && atAdmin.contains("back again"), "\(atAdmin)")
    }
}
