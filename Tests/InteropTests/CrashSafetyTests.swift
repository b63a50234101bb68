import Foundation
import TestSupport
import XCTest

/// `burrow` killed at every named failpoint (each must fire at least once) and at random
/// instants (SIGKILL), 100 times in all, against a live group with two MDK members: after each
/// restart and `sync`, every member is at one epoch and every message is stored exactly once
/// on every side. Failpoints are armed through `burrow-failpoint-probe` (the real `burrow`
/// ignores BURROW_TEST_FAILPOINT); a random kill counts only once the process held the home's
/// lock (had opened the store).
final class CrashSafetyTests: SeededTestCase {
    override var defaultSeed: UInt64 { 0xC2A5_0001 }

    var root: URL!
    var relay: RelayProcess!
    var peers: [MDKPeer] = []

    override func setUp() async throws {
        try await super.setUp()
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-crash-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "crash passphrase".write(to: root.appendingPathComponent("pass"), atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start(RelayProcess.Options(notesPerMinute: 100_000))
    }

    override func tearDown() async throws {
        for peer in peers { peer.terminate() }
        relay?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    func mdk(_ name: String) async throws -> MDKPeer {
        let dir = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let peer = try await MDKPeer.start(relay: relay, directory: dir)
        peers.append(peer)
        _ = try await peer.publishKeyPackage()
        return peer
    }

    func testKilledAtFailpointsAndRandomInstantsLosesAndDoublesNothing() async throws {
        let alice = try await mdk("alice"), bob = try await mdk("bob")
        let home = try BurrowHome.create(in: root, name: "burrow", relay: relay.url, passphraseFile: root.appendingPathComponent("pass").path)
        let me = try home.pubkey
        let gid = try await alice.createGroup(name: "Crashy", description: "", invitees: [me, bob.pubkey],
                                              admins: [alice.pubkey, me]).nostrGroupID
        try home.acceptInvites()
        _ = try await bob.sync()

        var rng = SplitMix64(seed: seed)
        var crashes = 0
        var killedBeforeTheStore = 0
        var fired: [String: Int] = [:]
        var ourTexts: Set<String> = []      // what Burrow may have sent (stored before any kill)
        var theirTexts: [String] = []       // what MDK sent
        var renames = 0

        /// Runs a command expecting it to die at `failpoint` (exit 86), or to finish if that
        /// failpoint is not on its path.
        func crash(_ args: [String], at failpoint: String) throws {
            let result = try home.run(args, environment: ["BURROW_TEST_FAILPOINT": failpoint], executable: BurrowProcess.failpointProbe)
            if result.status == 86 {
                crashes += 1
                fired[failpoint.split(separator: ":")[0].description, default: 0] += 1
            } else {
                XCTAssertEqual(result.status, 0, "\(args) at \(failpoint): \(result.stdout) \(result.stderr)")
            }
        }

        /// Starts a command and SIGKILLs it after a random delay.
        func kill(_ args: [String]) async throws {
            let process = try PeerProcess(executable: BurrowProcess.binary, arguments: args + [
                "--home", home.path, "--passphrase-file", home.passphraseFile, "--json", "--timeout", "5"])
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...400, using: &rng)))
            if process.isRunning {
                // Only a process that had opened the store could have left anything half done.
                if home.isLockHeld { crashes += 1 } else { killedBeforeTheStore += 1 }
            }
            process.kill()
        }

        /// After a restart: Burrow syncs (twice: its own recovery, then what others did about
        /// it), MDK syncs, and everyone agrees.
        func converge(_ label: String) async throws {
            try home.ok(["sync"])
            _ = try await alice.sync()
            _ = try await bob.sync()
            try home.ok(["sync"])
            let ours = try home.group(gid)
            let aliceState = try await alice.group(gid)
            let bobState = try await bob.group(gid)
            if ours["epoch"] as? Int != aliceState.epoch || aliceState.epoch != bobState.epoch || ours["name"] as? String != aliceState.name {
                let evidence = await RaceEvidence.collect(label: label, home: home, passphrase: "crash passphrase", group: gid,
                                                          peers: [("alice", alice), ("bob", bob)])
                let path = keepArtifact("converge-\(label.replacingOccurrences(of: " ", with: "-")).md", evidence)
                XCTFail("\(label): Burrow epoch \(ours["epoch"] ?? "?"), alice \(aliceState.epoch), bob \(bobState.epoch); evidence in \(path)")
            }
        }

        // Each command template ("#" becomes the round number) and the failpoint to die at.
        let failpoints: [([String], String)] = [
            (["chat", gid, "fp message #"], "message.stored"),
            (["chat", gid, "fp message #"], "message.published"),
            (["group", "rename", gid, "renamed #"], "commit.stored"),
            (["group", "rename", gid, "renamed #"], "commit.published"),
            (["group", "rename", gid, "renamed #"], "commit.merged"),
            (["group", "self-update", gid], "commit.published"),
            (["sync"], "sync.fetched"),
            (["sync"], "groupevent.processed"),
            (["sync"], "groupevent.processed:2"),
            (["keypackage", "publish"], "keypackage.stored"),
            (["group", "create", "spare #", "--invite", bob.pubkey], "outbox.published"),
            (["group", "create", "spare #", "--invite", bob.pubkey], "welcome.published"),
            (["sync"], "giftwrap.processed"),
        ]
        // The schedule covers every group failpoint the program has (DMCrashSafetyTests the `dm.` ones,
        // PassphraseChangeTests the `passphrase.` ones).
        let groupFailpoints = try BurrowProcess.failpointNames().filter { !$0.hasPrefix("dm.") && !$0.hasPrefix("passphrase.") }
        XCTAssertEqual(Set(failpoints.map { String($0.1.split(separator: ":")[0]) }), Set(groupFailpoints))
        var round = 0
        while crashes < 100 && round < 400 {
            round += 1
            // MDK keeps talking (and sometimes commits) between crashes.
            let text = "mdk \(round)"
            _ = try await alice.send(group: gid, kind: 9, content: text)
            theirTexts.append(text)
            if round % 7 == 0 {
                renames += 1
                _ = try await alice.updateGroupData(group: gid, name: "alice rename \(renames)")
            }
            if round % 2 == 0 {
                let (template, failpoint) = failpoints[(round / 2) % failpoints.count]
                let command = template.map { $0.replacingOccurrences(of: "#", with: String(round)) }
                if command.first == "chat" { ourTexts.insert(command[2]) }
                // A welcome from MDK waits for the sync that dies while handling it.
                if failpoint == "giftwrap.processed" { _ = try await alice.createGroup(name: "invite \(round)", description: "", invitees: [me]) }
                try crash(command, at: failpoint)
            } else {
                let command = round % 3 == 0 ? ["sync"] : ["chat", gid, "killed \(round)"]
                if command.first == "chat" { ourTexts.insert(command[2]) }
                try await kill(command)
            }
            try await converge("round \(round)")
        }
        XCTAssertGreaterThanOrEqual(crashes, 100)
        let names = try BurrowProcess.failpointNames().filter { !$0.hasPrefix("dm.") && !$0.hasPrefix("passphrase.") }
        XCTAssertEqual(names.count, 11)
        for name in names { XCTAssertGreaterThan(fired[name, default: 0], 0, "failpoint \(name) never fired") }
        print("CrashSafetyTests: \(crashes) kills after the store opened (\(fired.values.reduce(0, +)) at failpoints: "
              + fired.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
              + "), \(killedBeforeTheStore) random kills before it, not counted; \(round) rounds")

        // Every message exactly once everywhere: each of MDK's on Burrow; each of Burrow's that
        // Burrow stored is on MDK exactly once, and nothing Burrow never stored appears.
        let stored = try home.messages(gid)
        let storedIDs = stored.compactMap { $0["id"] as? String }
        XCTAssertEqual(storedIDs.count, Set(storedIDs).count)
        let storedTexts = stored.compactMap { $0["text"] as? String }
        for text in theirTexts { XCTAssertEqual(storedTexts.filter { $0 == text }.count, 1, text) }
        let ourStored = Set(stored.filter { $0["sender"] as? String == me }.compactMap { $0["text"] as? String })
        XCTAssertTrue(ourStored.isSubset(of: ourTexts))
        for (name, peer) in [("alice", alice), ("bob", bob)] {
            let seen = try await peer.messages(group: gid).filter { $0.sender == me && $0.kind == 9 }.map(\.content)
            if Set(seen) != ourStored {
                let evidence = await RaceEvidence.collect(label: "messages at \(name)", home: home, passphrase: "crash passphrase", group: gid,
                                                          peers: [("alice", alice), ("bob", bob)])
                let path = keepArtifact("messages-\(name).md", evidence + "\n\nonly at \(name): \(Set(seen).subtracting(ourStored).sorted())"
                                        + "\nonly at Burrow: \(ourStored.subtracting(seen).sorted())")
                XCTFail("what \(name) has from Burrow is not what Burrow stored; evidence in \(path)")
            }
            XCTAssertEqual(seen.count, Set(seen).count, "no message doubled")
        }
    }
}
