import Crypto
import Foundation
import Nostr
import TestSupport
import XCTest

/// Two admins, one Burrow and one MDK 0.8.0, commit in the same epoch round after round; a third
/// member (MDK, not an admin) receives the two commits in a random order. Every member must end
/// each round at the same epoch with the same ratchet tree, and a message from each reaches
/// the others.
///
/// The network is played by the test: Burrow reads and writes only its relay, the MDK users only
/// theirs, and the test carries events between them, so it decides who sees which commit first.
/// MDK 0.8.0 keeps no rollback point for a commit it merged itself, so its admin keeps its commit
/// pending until it knows the rival's (created_at, id) and then merges or clears it by MDK's own
/// rule (earliest created_at, then smallest id), as an MDK app that waits would. Burrow merges its
/// commit at once and must roll back when it lost (then apply a lost rename again on top of the
/// winner, one more commit everyone follows); the third member must roll back whenever the
/// loser reached it first.
final class CommitRaceTests: SeededTestCase {
    override var defaultSeed: UInt64 { 0xB0_5E_ED_05 }

    var root: URL!
    /// Burrow's relay and the MDK users' relay.
    var burrowRelay: RelayProcess!
    var mdkRelay: RelayProcess!
    var peers: [MDKPeer] = []

    override func setUp() async throws {
        try await super.setUp()
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-race-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "race passphrase".write(to: root.appendingPathComponent("pass"), atomically: true, encoding: .utf8)
        burrowRelay = try await RelayProcess.start(RelayProcess.Options(notesPerMinute: 100_000))
        mdkRelay = try await RelayProcess.start(RelayProcess.Options(notesPerMinute: 100_000))
    }

    override func tearDown() async throws {
        for peer in peers { peer.terminate() }
        burrowRelay?.stop()
        mdkRelay?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    func mdk(_ name: String) async throws -> MDKPeer {
        let dir = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let peer = try await MDKPeer.start(relay: mdkRelay, directory: dir)
        peers.append(peer)
        _ = try await peer.publishKeyPackage()
        return peer
    }

    /// How the two commits of a round are timed against each other.
    enum Timing: CaseIterable { case mdkEarlier, burrowEarlier, sameSecond }

    /// In which order the third member gets them: one sync each, or both in one sync (in the
    /// given order of arrival on its relay).
    enum Delivery: CaseIterable { case burrowThenMDK, mdkThenBurrow, togetherBurrowFirst, togetherMDKFirst }

    func testSameEpochCommitsFromBurrowAndMDKConvergeInAnyDeliveryOrder() async throws {
        var rng = SplitMix64(seed: seed)
        let alice = try await mdk("alice"), carol = try await mdk("carol")
        let home = try BurrowHome.create(in: root, name: "burrow", relay: burrowRelay.url,
                                         passphraseFile: root.appendingPathComponent("pass").path)
        let me = try home.pubkey
        let onBurrow = [burrowRelay.url], onMDK = [mdkRelay.url]

        /// Carries events from one side's relay to the other's (alice's process does the
        /// transport; it records nothing).
        func carry(_ filter: [String: Any], from: [String], to: [String], except: Set<String> = []) async throws -> [String] {
            let events = try await alice.relayFetch(relays: from, filter: filter).filter { !except.contains(try eventID($0)) }
            return try await alice.relayPublish(relays: to, events: events)
        }

        // Setup: Burrow's KeyPackage reaches the MDK side; alice's welcome reaches Burrow. The
        // group's relay is Burrow's, so Burrow reads nothing else.
        _ = try await carry(["kinds": [30443, 10051, 10050], "authors": [me]], from: onBurrow, to: onMDK)
        let gid = try await alice.createGroup(name: "Race", invitees: [me, carol.pubkey], admins: [alice.pubkey, me],
                                              relays: onBurrow).nostrGroupID
        _ = try await carry(["kinds": [1059], "#p": [me]], from: onMDK, to: onBurrow)
        XCTAssertEqual(try home.acceptInvites().count, 1)
        _ = try await carol.sync()

        /// Carries every group event of the last minutes the other side lacks, both ways,
        /// except `held` ones (a commit whose delivery the round decides).
        func exchange(holding held: Set<String> = []) async throws {
            let recent: [String: Any] = ["kinds": [445], "#h": [gid], "since": Int(Date().timeIntervalSince1970) - 600]
            _ = try await carry(recent, from: onBurrow, to: onMDK, except: held)
            _ = try await carry(recent, from: onMDK, to: onBurrow, except: held)
        }
        let groupEvents: [String: Any] = ["kinds": [445], "#h": [gid]]
        var seenOnBurrowRelay = Set(try await alice.relayFetch(relays: onBurrow, filter: groupEvents).map(eventID))

        var log: [String] = []
        var sameSecond = 0, burrowWins = 0, reapplications = 0
        var expectedTexts: [String] = []
        let rounds = 24
        for round in 1...rounds {
            let epoch = try XCTUnwrap(try home.group(gid)["epoch"] as? Int)
            let timing = Timing.allCases.randomElement(using: &rng)!
            let delivery = Delivery.allCases.randomElement(using: &rng)!
            let burrowRenames = Bool.random(using: &rng), aliceRenames = Bool.random(using: &rng)

            // 1. Both admins commit on this epoch; alice's commit stays pending and unpublished.
            func burrowCommits() throws {
                if burrowRenames { try home.ok(["group", "rename", gid, "burrow \(round)"]) } else { try home.ok(["group", "self-update", gid]) }
            }
            func aliceCommits() async throws -> MDKPeer.StagedCommit {
                try await alice.stageCommit(group: gid, name: aliceRenames ? "alice \(round)" : nil)
            }
            let staged: MDKPeer.StagedCommit
            switch timing {
            case .mdkEarlier:
                staged = try await aliceCommits()
                try await sleepIntoNextSecond()
                try burrowCommits()
            case .burrowEarlier:
                try burrowCommits()
                try await sleepIntoNextSecond()
                staged = try await aliceCommits()
            case .sameSecond:
                try await sleepIntoNextSecond()
                try burrowCommits()
                staged = try await aliceCommits()
            }
            let burrowEvents = try await alice.relayFetch(relays: onBurrow, filter: groupEvents)
                .filter { !seenOnBurrowRelay.contains(try eventID($0)) }
            XCTAssertEqual(burrowEvents.count, 1, "round \(round): Burrow published one commit")
            let burrowCommit = try XCTUnwrap(burrowEvents.first)
            let burrowOrder = (try createdAt(burrowCommit), try eventID(burrowCommit))
            let mdkOrder = (staged.createdAt, staged.eventID)
            let burrowWon = burrowOrder < mdkOrder
            if burrowOrder.0 == mdkOrder.0 { sameSecond += 1 }
            if burrowWon { burrowWins += 1 }
            // A rename of Burrow's that lost is applied again on top of the winner (one more
            // commit); a lost self-update is simply dropped.
            let reapplied = !burrowWon && burrowRenames
            let expectedEpoch = epoch + (reapplied ? 2 : 1)
            if reapplied { reapplications += 1 }
            let expectedName: String? = burrowRenames ? "burrow \(round)" : (aliceRenames && !burrowWon ? "alice \(round)" : nil)

            // 2. Alice settles her pending commit by MDK's rule before she reads anything.
            if burrowWon { try await alice.clearPendingCommit(group: gid) } else { try await alice.mergePendingCommit(group: gid) }

            // 3. Carol gets the two commits in the round's order.
            func publishMDK() async throws { _ = try await alice.publish(event: staged.event) }
            func carryBurrow() async throws { _ = try await alice.relayPublish(relays: onMDK, events: [burrowCommit]) }
            switch delivery {
            case .burrowThenMDK:
                try await carryBurrow(); _ = try await carol.sync()
                try await publishMDK(); _ = try await carol.sync()
            case .mdkThenBurrow:
                try await publishMDK(); _ = try await carol.sync()
                try await carryBurrow(); _ = try await carol.sync()
            case .togetherBurrowFirst:
                try await carryBurrow(); try await publishMDK(); _ = try await carol.sync()
            case .togetherMDKFirst:
                try await publishMDK(); try await carryBurrow(); _ = try await carol.sync()
            }
            _ = try await alice.sync()

            // 4. Burrow gets alice's commit, alone or together with what the MDK side already
            // sent in the new epoch; everyone talks; everyone reads.
            let talkFirst = Bool.random(using: &rng)
            if talkFirst {
                _ = try await alice.send(group: gid, kind: 9, content: "alice says \(round)")
                _ = try await carol.send(group: gid, kind: 9, content: "carol says \(round)")
            }
            try await exchange()
            let report = try home.ok(["sync"])
            XCTAssertEqual((report["errors"] as? [Any])?.count ?? 0, 0, "round \(round): \(report)")
            if !talkFirst {
                _ = try await alice.send(group: gid, kind: 9, content: "alice says \(round)")
                _ = try await carol.send(group: gid, kind: 9, content: "carol says \(round)")
            }
            // MDK orders one second's events by arrival and fails a message read before its
            // epoch's commit for good: Burrow's message follows its re-applied commit a second later.
            if reapplied { try await sleepIntoNextSecond() }
            try home.ok(["chat", gid, "burrow says \(round)"])
            try await exchange()
            try home.ok(["sync"])
            _ = try await alice.sync()
            _ = try await carol.sync()
            seenOnBurrowRelay = Set(try await alice.relayFetch(relays: onBurrow, filter: groupEvents).map(eventID))
            expectedTexts += ["alice says \(round)", "carol says \(round)", "burrow says \(round)"]

            // 5. One epoch, one tree, one name everywhere; the round's messages everywhere.
            let label = "round \(round) (\(timing), \(delivery), \(burrowWon ? "Burrow" : "MDK") won)"
            log.append(label)
            let ours = try home.group(gid)
            let aliceState = try await alice.group(gid), carolState = try await carol.group(gid)
            XCTAssertEqual(ours["epoch"] as? Int, expectedEpoch, label)
            XCTAssertEqual(aliceState.epoch, expectedEpoch, label)
            XCTAssertEqual(carolState.epoch, expectedEpoch, label)
            XCTAssertEqual(aliceState.name, carolState.name, label)
            XCTAssertEqual(ours["name"] as? String, aliceState.name, label)
            if let expectedName { XCTAssertEqual(aliceState.name, expectedName, label) }
            XCTAssertEqual(Set(ours["members"] as? [String] ?? []), [me, alice.pubkey, carol.pubkey], label)

            let tree = try home.ok(["group", "tree", gid])
            let serialized = try XCTUnwrap(tree["ratchet_tree"] as? String, label)
            let fingerprint = Hex.encode(Array(SHA256.hash(data: try Hex.decode(serialized))))
            let aliceTree = try await alice.ratchetTree(group: gid), carolTree = try await carol.ratchetTree(group: gid)
            XCTAssertEqual(fingerprint, aliceTree.treeHash, "\(label): SHA-256 of Burrow's serialized tree is MDK's tree_hash")
            XCTAssertEqual(aliceTree.treeHash, carolTree.treeHash, label)
            XCTAssertEqual(serialized, aliceTree.serializedTree, label)
            XCTAssertEqual(Set(aliceTree.leaves.map(\.identity)), [me, alice.pubkey, carol.pubkey], label)

            let burrowTexts = try home.messages(gid).compactMap { $0["text"] as? String }
            let aliceTexts = try await alice.messages(group: gid).map(\.content)
            let carolTexts = try await carol.messages(group: gid).map(\.content)
            for text in ["alice says \(round)", "carol says \(round)", "burrow says \(round)"] {
                XCTAssertEqual(burrowTexts.filter { $0 == text }.count, 1, "\(label): Burrow has \(text) once")
                XCTAssertEqual(aliceTexts.filter { $0 == text }.count, 1, "\(label): alice has \(text) once")
                XCTAssertEqual(carolTexts.filter { $0 == text }.count, 1, "\(label): carol has \(text) once")
            }
        }

        // Nothing lost or doubled over the whole run, on every member.
        let burrowIDs = try home.messages(gid).compactMap { $0["id"] as? String }
        XCTAssertEqual(burrowIDs.count, Set(burrowIDs).count)
        XCTAssertEqual(burrowIDs.count, expectedTexts.count)
        let aliceTexts = try await alice.messages(group: gid).map(\.content)
        XCTAssertEqual(aliceTexts.sorted(), expectedTexts.sorted())
        // Carol is checked round by round only: MDK 0.8.0's SQLite storage restores a rollback
        // snapshot by deleting the group row, and the messages table's ON DELETE CASCADE takes
        // her whole history with it (every round she rolled back in starts her history afresh).
        let carolTexts = try await carol.messages(group: gid).map(\.content)
        XCTAssertEqual(carolTexts.count, Set(carolTexts).count)
        XCTAssertTrue(Set(carolTexts).isSubset(of: Set(expectedTexts)))
        print("CommitRaceTests: \(rounds) rounds, \(sameSecond) in the same second, Burrow won \(burrowWins), "
              + "a lost rename of Burrow's applied again \(reapplications) times")
        for line in log { print("  \(line)") }
        // Both rules get exercised: created_at decides some rounds, the event id others.
        XCTAssertGreaterThan(burrowWins, 0)
        XCTAssertLessThan(burrowWins, rounds)
    }

    /// Sleeps until just past the start of the next wall-clock second.
    func sleepIntoNextSecond() async throws {
        let now = Date().timeIntervalSince1970
        let wait = (now.rounded(.down) + 1 - now) + 0.02
        try await Task.sleep(for: .milliseconds(Int(wait * 1000)))
    }
}

private func eventJSON(_ json: String) throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
        throw CocoaError(.coderReadCorrupt)
    }
    return object
}

private func eventID(_ json: String) throws -> String {
    guard let id = try eventJSON(json)["id"] as? String else { throw CocoaError(.coderValueNotFound) }
    return id
}

private func createdAt(_ json: String) throws -> Int {
    guard let value = try eventJSON(json)["created_at"] as? Int else { throw CocoaError(.coderValueNotFound) }
    return value
}

