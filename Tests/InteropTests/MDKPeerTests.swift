import Foundation
import TestSupport
import XCTest

/// The MDK test peer on its own, before any Burrow node meets it: four MDK 0.8.0 users in four
/// processes, each with its own SQLCipher database and Nostr key, talking only through
/// rust-nostr's LocalRelay on 127.0.0.1. If these users cannot run a group's life among
/// themselves, nothing a Burrow test sees through the peer would mean anything.
final class MDKPeerTests: XCTestCase {
    private var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-mdk-peer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let dir = scratch!
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
    }

    private func startPeers(_ names: [String], relay: RelayProcess) async throws -> [MDKPeer] {
        try await withThrowingTaskGroup(of: (Int, MDKPeer).self) { group in
            for (index, name) in names.enumerated() {
                let directory = scratch.appendingPathComponent(name)
                group.addTask { (index, try await MDKPeer.start(relay: relay, directory: directory)) }
            }
            var peers: [Int: MDKPeer] = [:]
            for try await (index, peer) in group {
                addTeardownBlock { peer.terminate() }
                peers[index] = peer
            }
            return names.indices.compactMap { peers[$0] }
        }
    }

    /// Alice creates a group with Bob (30443 KeyPackage) and Carol (legacy 443), both join by
    /// gift-wrapped Welcome; chat both ways; a rename reaches Bob with the message sent right
    /// after it; Dave is added and Carol removed; Bob leaves by SelfRemove, which Alice
    /// auto-commits and Dave follows, and the remaining members end at one epoch and one tree.
    func testGroupLifeAmongMDKUsersThroughLocalRelay() async throws {
        let relay = try await RelayProcess.start()
        addTeardownBlock { relay.stop() }
        let peers = try await startPeers(["alice", "bob", "carol", "dave"], relay: relay)
        let (alice, bob, carol, dave) = (peers[0], peers[1], peers[2], peers[3])
        XCTAssertEqual(Set(peers.map(\.pubkey)).count, 4)
        XCTAssertEqual(alice.peer.hello["version"] as? String, "0.8.0")

        // KeyPackages: Bob 30443 only, Carol legacy 443 only, Dave both (30443 is preferred).
        let bobKP = try await bob.publishKeyPackage(kinds: [30443])
        let carolKP = try await carol.publishKeyPackage(kinds: [443])
        let daveKP = try await dave.publishKeyPackage(kinds: [30443, 443])
        XCTAssertEqual(Set(bobKP.keys), [30443, 10051, 10050])
        XCTAssertEqual(Set(carolKP.keys), [443, 10051, 10050])
        XCTAssertEqual(Set(daveKP.keys), [30443, 443, 10051, 10050])

        // Creation: one Welcome each, naming the KeyPackage event it consumed.
        let created = try await alice.createGroup(
            name: "Family", description: "MDK peers", invitees: [bob.pubkey, carol.pubkey], admins: [alice.pubkey])
        XCTAssertEqual(created.keyPackageEventIDs, [bobKP[30443], carolKP[443]].compactMap { $0 })
        XCTAssertEqual(created.welcomeWrapIDs.count, 2)
        let gid = created.mlsGroupID
        for (peer, wrapID) in zip([bob, carol], created.welcomeWrapIDs) {
            let report = try await peer.sync()
            XCTAssertEqual(report.welcomes.count, 1)
            let welcome = try XCTUnwrap(report.welcomes.first)
            XCTAssertNil(welcome.error)
            XCTAssertEqual(welcome.wrapperID, wrapID)
            XCTAssertEqual(welcome.mlsGroupID, gid)
            XCTAssertEqual(welcome.nostrGroupID, created.nostrGroupID)
            XCTAssertEqual(welcome.groupName, "Family")
            XCTAssertEqual(welcome.welcomer, alice.pubkey)
            XCTAssertTrue(welcome.accepted)
        }
        var states = [try await alice.group(gid), try await bob.group(gid), try await carol.group(gid)]
        for state in states {
            XCTAssertEqual(state.state, "active")
            XCTAssertEqual(state.epoch, 1)
            XCTAssertEqual(state.members, [alice.pubkey, bob.pubkey, carol.pubkey].sorted())
            XCTAssertEqual(state.admins, [alice.pubkey])
            XCTAssertEqual(state.relays, [relay.url])
            XCTAssertEqual(state.requiredProposals, ["self_remove"])  // every MDK KeyPackage offers SelfRemove
        }

        // Chat both ways; `group` also takes the nostr group id.
        let hello = try await alice.send(group: gid, kind: 9, content: "hello from alice")
        let reply = try await bob.send(group: created.nostrGroupID, kind: 9, content: "hi from bob", tags: [["client", "mdk-peer"]])
        let bobReads = try await bob.sync()
        XCTAssertEqual(bobReads.messages.map(\.content), ["hello from alice"])
        XCTAssertEqual(bobReads.messages.first?.sender, alice.pubkey)
        XCTAssertEqual(bobReads.messages.first?.rumorID, hello.rumorID)
        XCTAssertEqual(bobReads.messages.first?.eventID, hello.eventID)
        let aliceReads = try await alice.sync()
        XCTAssertEqual(aliceReads.kinds, ["application"])
        XCTAssertEqual(aliceReads.messages.first?.sender, bob.pubkey)
        XCTAssertEqual(aliceReads.messages.first?.content, "hi from bob")
        XCTAssertEqual(aliceReads.messages.first?.rumorID, reply.rumorID)
        XCTAssertEqual(aliceReads.messages.first?.tags, [["client", "mdk-peer"]])
        let carolReads = try await carol.sync()
        XCTAssertEqual(Set(carolReads.messages.map(\.rumorID)), [hello.rumorID, reply.rumorID])
        let stored = try await carol.messages(group: gid)
        XCTAssertEqual(Set(stored.map { "\($0.sender):\($0.content)" }),
                       ["\(alice.pubkey):hello from alice", "\(bob.pubkey):hi from bob"])

        // Rename, and a message right behind it (usually the same second: the peer orders by
        // live arrival within a second, so the commit still comes first).
        _ = try await alice.updateGroupData(group: gid, name: "Family & friends")
        let afterRename = try await alice.send(group: gid, kind: 9, content: "new name")
        let bobSeesRename = try await bob.sync()
        XCTAssertEqual(bobSeesRename.kinds, ["commit", "application"])
        XCTAssertEqual(bobSeesRename.messages.map(\.rumorID), [afterRename.rumorID])
        let bobRenamed = try await bob.group(gid)
        XCTAssertEqual(bobRenamed.name, "Family & friends")
        XCTAssertEqual(bobRenamed.epoch, 2)
        let carolSeesRename = try await carol.sync()
        XCTAssertEqual(carolSeesRename.kinds, ["commit", "application"])

        // Add Dave (his 30443 is chosen over the 443 twin), remove Carol.
        let added = try await alice.addMembers(group: gid, invitees: [dave.pubkey])
        XCTAssertEqual(added.keyPackageEventIDs, [daveKP[30443]].compactMap { $0 })
        let daveJoins = try await dave.sync()
        XCTAssertEqual(daveJoins.welcomes.map(\.mlsGroupID), [gid])
        let daveState = try await dave.group(gid)
        XCTAssertEqual(daveState.name, "Family & friends")
        for peer in [bob, carol] {
            let report = try await peer.sync()
            XCTAssertEqual(report.results.map(\.eventID), [added.commitEventID])
        }
        let removal = try await alice.removeMembers(group: gid, members: [carol.pubkey])
        let carolRemoved = try await carol.sync()
        XCTAssertEqual(carolRemoved.results.map(\.eventID), [removal])
        let carolState = try await carol.group(gid)
        XCTAssertEqual(carolState.state, "inactive")
        for peer in [bob, dave] {
            let report = try await peer.sync()
            XCTAssertEqual(report.kinds, ["commit"])
        }
        let daveAfterRemoval = try await dave.group(gid)
        XCTAssertEqual(daveAfterRemoval.members, [alice.pubkey, bob.pubkey, dave.pubkey].sorted())

        // Bob leaves with a SelfRemove proposal; Alice auto-commits it; Dave reads the proposal,
        // then Alice's commit for it, and follows that commit instead of racing with his own.
        let leave = try await bob.leaveGroup(group: gid)
        let aliceCommits = try await alice.sync()
        XCTAssertEqual(aliceCommits.results.map(\.eventID), [leave])
        let autoCommit = try XCTUnwrap(aliceCommits.results.first)
        XCTAssertEqual(autoCommit.kind, "proposal")
        XCTAssertEqual(autoCommit.commitOutcome, "published")
        let commitID = try XCTUnwrap(autoCommit.commitEventID)
        let daveFollows = try await dave.sync()
        XCTAssertEqual(daveFollows.results.map(\.eventID), [leave, commitID])
        XCTAssertEqual(daveFollows.kinds, ["proposal", "commit"])
        XCTAssertEqual(daveFollows.results.first?.commitOutcome, "superseded")
        let bobGone = try await bob.sync()
        XCTAssertEqual(bobGone.results.map(\.eventID), [commitID])
        let bobState = try await bob.group(gid)
        XCTAssertEqual(bobState.state, "inactive")
        let aliceQuiet = try await alice.sync()
        XCTAssertEqual(aliceQuiet.results.count, 0)

        // Members keep their own post-join self-update state; everything else must agree.
        states = [try await alice.group(gid), try await dave.group(gid)]
        for state in states {
            XCTAssertEqual(state.state, "active")
            XCTAssertEqual(state.epoch, 5)
            XCTAssertEqual(state.members, [alice.pubkey, dave.pubkey].sorted())
            XCTAssertEqual(state.admins, [alice.pubkey])
            XCTAssertEqual(state.name, "Family & friends")
            XCTAssertEqual(state.nostrGroupID, created.nostrGroupID)
        }
        let trees = [try await alice.ratchetTree(group: gid), try await dave.ratchetTree(group: gid)]
        XCTAssertEqual(trees[0], trees[1])
        XCTAssertEqual(Set(trees[0].leaves.map(\.identity)), [alice.pubkey, dave.pubkey])

        // One epoch, one key schedule: Dave's message opens at Alice's.
        let last = try await dave.send(group: gid, kind: 9, content: "still here")
        let aliceLast = try await alice.sync()
        XCTAssertEqual(aliceLast.messages.map(\.rumorID), [last.rumorID])
        XCTAssertEqual(aliceLast.messages.first?.sender, dave.pubkey)
    }

    /// MDK's admin rules through the peer: refusals come back as peer errors in MDK's own words
    /// and the peer keeps serving; a Welcome can wait for consent; a non-admin self-update is
    /// accepted; an admin is promoted, demotes itself, then leaves by SelfRemove, which a
    /// non-admin auto-commits.
    func testAdminRulesConsentSelfUpdateDemoteAndLeave() async throws {
        let relay = try await RelayProcess.start()
        addTeardownBlock { relay.stop() }
        let peers = try await startPeers(["alice", "bob", "dave"], relay: relay)
        let (alice, bob, dave) = (peers[0], peers[1], peers[2])

        await assertPeerFailure(try await alice.createGroup(name: "x", invitees: [bob.pubkey]), contains: "no KeyPackage event")
        _ = try await bob.publishKeyPackage(kinds: [443])
        await assertPeerFailure(
            try await alice.createGroup(name: "x", invitees: [bob.pubkey], keyPackageKind: 30443), contains: "no KeyPackage event")
        _ = try await dave.publishKeyPackage()
        let created = try await alice.createGroup(name: "Trio", invitees: [bob.pubkey, dave.pubkey])
        let gid = created.mlsGroupID

        // Consent: the Welcome waits until Bob accepts it, once.
        let pending = try await bob.sync(acceptWelcomes: false)
        let welcome = try XCTUnwrap(pending.welcomes.first)
        XCTAssertFalse(welcome.accepted)
        let bobPending = try await bob.group(gid)
        XCTAssertEqual(bobPending.state, "pending")
        let accepted = try await bob.acceptWelcome(wrapperID: welcome.wrapperID)
        XCTAssertEqual(accepted, gid)
        await assertPeerFailure(try await bob.acceptWelcome(wrapperID: welcome.wrapperID), contains: "no pending welcome")
        _ = try await dave.sync()

        // Only admins commit changes; an admin cannot simply leave.
        let adminsOnly = "only admins can perform this operation"
        await assertPeerFailure(try await bob.addMembers(group: gid, invitees: [dave.pubkey]), contains: adminsOnly)
        await assertPeerFailure(try await bob.removeMembers(group: gid, members: [dave.pubkey]), contains: adminsOnly)
        await assertPeerFailure(try await bob.updateGroupData(group: gid, name: "mine"), contains: adminsOnly)
        await assertPeerFailure(try await bob.selfDemote(group: gid), contains: adminsOnly)
        await assertPeerFailure(try await alice.leaveGroup(group: gid), contains: "Admins must self-demote before leaving")
        await assertPeerFailure(try await alice.group(String(repeating: "0", count: 64)), contains: "unknown group")

        // A non-admin's self-update is a commit the others accept.
        let update = try await bob.selfUpdate(group: gid)
        for peer in [alice, dave] {
            let report = try await peer.sync()
            XCTAssertEqual(report.results.map(\.eventID), [update])
            XCTAssertEqual(report.kinds, ["commit"])
        }

        // Promote Dave, Alice steps down; the last admin cannot.
        _ = try await alice.updateGroupData(group: gid, admins: [alice.pubkey, dave.pubkey])
        _ = try await alice.selfDemote(group: gid)
        for peer in [bob, dave] {
            let report = try await peer.sync()
            XCTAssertEqual(report.kinds, ["commit", "commit"])
            let state = try await peer.group(created.nostrGroupID)
            XCTAssertEqual(state.admins, [dave.pubkey])
        }
        await assertPeerFailure(try await dave.selfDemote(group: gid), contains: "last active admin")

        // Alice, no longer an admin, leaves; Bob (not an admin either) auto-commits it.
        let leave = try await alice.leaveGroup(group: gid)
        let bobCommits = try await bob.sync()
        XCTAssertEqual(bobCommits.results.map(\.eventID), [leave])
        XCTAssertEqual(bobCommits.results.first?.commitOutcome, "published")
        let commitID = try XCTUnwrap(bobCommits.results.first?.commitEventID)
        let daveFollows = try await dave.sync()
        XCTAssertEqual(daveFollows.results.map(\.eventID), [leave, commitID])
        XCTAssertEqual(daveFollows.results.map { $0.commitOutcome ?? $0.kind }, ["superseded", "commit"])
        let aliceGone = try await alice.sync()
        XCTAssertEqual(aliceGone.results.map(\.eventID), [commitID])
        let aliceState = try await alice.group(gid)
        XCTAssertEqual(aliceState.state, "inactive")
        await assertPeerFailure(try await alice.send(group: gid, kind: 9, content: "still there?"), contains: "own leaf not found")

        let states = [try await bob.group(gid), try await dave.group(gid)]
        XCTAssertEqual(states.map(\.epoch), [5, 5])
        XCTAssertEqual(states.map(\.members), [[bob.pubkey, dave.pubkey].sorted(), [bob.pubkey, dave.pubkey].sorted()])
        let trees = [try await bob.ratchetTree(group: gid), try await dave.ratchetTree(group: gid)]
        XCTAssertEqual(trees[0].treeHash, trees[1].treeHash)
    }

    private func assertPeerFailure<T>(
        _ body: @autoclosure () async throws -> T, contains text: String, file: StaticString = #filePath, line: UInt = #line
    ) async {
        do {
            _ = try await body()
            XCTFail("expected the peer to refuse", file: file, line: line)
        } catch PythonPeer.PeerError.failed(_, let error) {
            XCTAssertTrue(error.contains(text), error, file: file, line: line)
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
    }
}
