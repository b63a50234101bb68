import Foundation
import MLS
import Marmot
import Nostr
import XCTest
import TestSupport

/// MarmotGroup without I/O: creation and joining, MDK's same-epoch race rule with rollback,
/// receiver-side admin policy, SelfRemove auto-commit, and the welcome size ceiling.
final class MarmotGroupTests: XCTestCase {
    let now: Int64 = 1_795_000_000
    var rng = SplitMix64(seed: 0x6D61_726D_6F74)

    typealias Member = MarmotTestMember

    func member() throws -> Member { try Member.make(now: now, using: &rng) }

    func join(_ welcome: MarmotGroup.OutgoingWelcome, _ member: Member) throws -> MarmotGroup {
        XCTAssertEqual(welcome.recipient, member.keys.publicKey)
        return try MarmotGroup.join(welcome: try WelcomeRumor.verify(welcome.rumor), keyPackage: member.bundle)
    }

    func deliver(_ event: Event, to group: inout MarmotGroup) throws -> GroupEventOutcome {
        try group.process(try group.decrypt(try GroupEvent.validate(event, now: now)))
    }

    /// Alice (admin) creates the group with Bob (admin) and Carol.
    func family() throws -> MarmotTestFamily {
        let family = try MarmotTestFamily.make(now: now, bobIsAdmin: true, using: &rng)
        XCTAssertEqual(family.a.epoch, 1)
        XCTAssertTrue(family.a.requiresSelfRemove)
        return family
    }

    func testJoinersSeeTheCreatorsGroup() throws {
        let f = try family()
        for g in [f.b, f.c] {
            XCTAssertEqual(g.epoch, 1)
            XCTAssertEqual(g.nostrGroupID, f.a.nostrGroupID)
            XCTAssertEqual(g.data.name, "Family")
            XCTAssertEqual(Set(g.members), [f.alice.keys.publicKey, f.bob.keys.publicKey, f.carol.keys.publicKey])
            XCTAssertEqual(Set(g.admins), [f.alice.keys.publicKey, f.bob.keys.publicKey])
            XCTAssertEqual(try g.exporterSecrets().first, try f.a.exporterSecrets().first)
        }
        var c = f.c
        let message = try c.seal(try InnerEvent.chat("hi", author: f.carol.keys.publicKey, createdAt: now), now: now, using: &rng)
        var a = f.a
        guard case .application(let inner, _) = try deliver(message, to: &a) else { return XCTFail("not an application message") }
        XCTAssertEqual(inner.sender, f.carol.keys.publicKey)
        XCTAssertEqual(inner.rumor.content, "hi")
    }

    /// Alice and Bob both commit at epoch 1. Whatever order members see them in, all end on
    /// the earlier one (created_at, then id): a member that applied the later one rolls back.
    func testSameEpochCommitsResolveToTheEarlierEverywhere() throws {
        var f = try family()
        var renamedA = f.a.data
        renamedA.name = "Alice's name"
        var renamedB = f.b.data
        renamedB.name = "Bob's name"
        let fromAlice = try f.a.updateData(renamedA, committer: f.alice.keys.publicKey, now: now, using: &rng)
        let fromBob = try f.b.updateData(renamedB, committer: f.bob.keys.publicKey, now: now + 1, using: &rng)
        try f.a.mergePendingCommit(published: fromAlice.event)
        try f.b.mergePendingCommit(published: fromBob.event)

        // Carol applies Bob's (later) first, then Alice's replaces it.
        guard case .commit(_, let none) = try deliver(fromBob.event, to: &f.c) else { return XCTFail() }
        XCTAssertNil(none)
        XCTAssertEqual(f.c.data.name, "Bob's name")
        guard case .commit(_, let replaced) = try deliver(fromAlice.event, to: &f.c) else { return XCTFail() }
        XCTAssertEqual(replaced, CommitOrder(fromBob.event))
        XCTAssertEqual(f.c.data.name, "Alice's name")

        // Bob merged his own: Alice's earlier commit replaces it too.
        guard case .commit(_, let bobReplaced) = try deliver(fromAlice.event, to: &f.b) else { return XCTFail() }
        XCTAssertEqual(bobReplaced, CommitOrder(fromBob.event))

        // Alice refuses Bob's as the loser.
        guard case .stale(epoch: 1) = try deliver(fromBob.event, to: &f.a) else { return XCTFail("Bob's commit is stale for Alice") }

        for g in [f.b, f.c] {
            XCTAssertEqual(g.epoch, 2)
            XCTAssertEqual(g.data.name, "Alice's name")
            XCTAssertEqual(try g.exporterSecrets().first, try f.a.exporterSecrets().first)
        }
        // And they talk at the winning epoch.
        let chat = try f.b.seal(try InnerEvent.chat("converged", author: f.bob.keys.publicKey, createdAt: now + 2), now: now + 2, using: &rng)
        guard case .application(let inner, _) = try deliver(chat, to: &f.c) else { return XCTFail() }
        XCTAssertEqual(inner.rumor.content, "converged")
    }

    /// A winning commit that arrives after three epochs of the losing branch were applied rolls
    /// the member back three epochs; the same commit re-wrapped in another event changes nothing.
    func testDeepRollbackAndRewrappedCommits() throws {
        var f = try family()
        var renamed = f.a.data
        renamed.name = "winner"
        let winner = try f.a.updateData(renamed, committer: f.alice.keys.publicKey, now: now, using: &rng)
        try f.a.mergePendingCommit(published: winner.event)
        var loser = try f.b.selfUpdate(now: now + 10, using: &rng)
        try f.b.mergePendingCommit(published: loser.event)
        _ = try deliver(loser.event, to: &f.c)
        for step in 1...2 {
            loser = try f.b.selfUpdate(now: now + 10 + Int64(step), using: &rng)
            try f.b.mergePendingCommit(published: loser.event)
            _ = try deliver(loser.event, to: &f.c)
        }
        XCTAssertEqual(f.c.epoch, 4)
        XCTAssertEqual(f.c.snapshots.map(\.state.epoch), [1, 2, 3])

        guard case .commit(_, let replaced) = try deliver(winner.event, to: &f.c) else { return XCTFail() }
        XCTAssertNotNil(replaced)
        XCTAssertEqual(f.c.epoch, 2)
        XCTAssertEqual(f.c.data.name, "winner")
        XCTAssertEqual(try f.c.exporterSecrets().first, try f.a.exporterSecrets().first)
        XCTAssertEqual(f.c.snapshots.map(\.state.epoch), [1])

        // Alice's commit again, sealed into a new event with a later created_at.
        let decrypted = try f.a.snapshots[0].state.exporter(label: GroupEvent.exporterLabel, context: GroupEvent.exporterContext, length: 32)
        let bytes = try XCTUnwrap(try? GroupEvent.validate(winner.event, now: now).decrypt(using: [decrypted]).messageBytes)
        let rewrapped = try GroupEvent.seal(messageBytes: bytes, exporterSecret: decrypted, nostrGroupID: f.a.nostrGroupID.bytes,
                                           createdAt: now - 5, rng: &rng)
        guard case .duplicate(epoch: 1) = try deliver(rewrapped, to: &f.c) else { return XCTFail("a re-wrapped commit is a duplicate") }
        XCTAssertEqual(f.c.epoch, 2)
        XCTAssertEqual(try f.c.exporterSecrets().first, try f.a.exporterSecrets().first)
    }

    /// Equal created_at: the smaller event id wins.
    func testTiesGoToTheSmallerEventID() throws {
        var f = try family()
        let one = try f.a.selfUpdate(now: now, using: &rng)
        let two = try f.b.selfUpdate(now: now, using: &rng)
        let (first, second) = one.event.id.hex < two.event.id.hex ? (one.event, two.event) : (two.event, one.event)
        _ = try deliver(second, to: &f.c)
        guard case .commit(_, let replaced) = try deliver(first, to: &f.c) else { return XCTFail() }
        XCTAssertEqual(replaced, CommitOrder(second))
        guard case .stale(epoch: 1) = try deliver(second, to: &f.c) else { return XCTFail("the loser again is stale") }
    }

    /// Receivers enforce MDK's policy: a non-admin's add commit is refused and changes nothing.
    func testNonAdminCommitsAreRefusedByReceivers() throws {
        var f = try family()
        let dave = try member()
        XCTAssertThrowsError(try f.c.addMembers([dave.event], committer: f.carol.keys.publicKey, now: now, using: &rng)) {
            XCTAssertEqual($0 as? MarmotError, .notAdmin)
        }
        // Carol bypasses her own check with the MLS layer and seals the commit herself.
        var mls = f.c.mls
        let output = try mls.addMembers([dave.event.keyPackage], using: &rng)
        let secret = try f.c.mls.exporter(label: GroupEvent.exporterLabel, context: GroupEvent.exporterContext, length: 32)
        let forged = try GroupEvent.seal(message: output.commit, exporterSecret: secret, nostrGroupID: f.c.nostrGroupID.bytes,
                                         createdAt: now, rng: &rng)
        let before = try f.a.exporterSecrets()
        XCTAssertThrowsError(try deliver(forged, to: &f.a)) { error in
            guard case MarmotError.commitNotAuthorized = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try f.a.exporterSecrets(), before)
        XCTAssertEqual(f.a.epoch, 1)

        // A non-admin's pure self-update is allowed.
        let update = try f.c.selfUpdate(now: now, using: &rng)
        guard case .commit(let summary, _) = try deliver(update.event, to: &f.a) else { return XCTFail() }
        XCTAssertTrue(summary.isPureSelfUpdate)
    }

    /// Carol's SelfRemove: every member that receives it owes a commit; the committed removal
    /// makes Carol's group inactive.
    func testSelfRemoveIsCommittedByAReceiver() throws {
        var f = try family()
        let proposal = try f.c.leaveProposal(now: now, using: &rng)
        guard case .proposalToCommit = try deliver(proposal, to: &f.a) else { return XCTFail("Alice should commit it") }
        guard case .proposalToCommit = try deliver(proposal, to: &f.b) else { return XCTFail("Bob should commit it") }
        let commit = try f.a.commitOwedProposals(now: now, using: &rng)
        try f.a.mergePendingCommit(published: commit.event)
        _ = try deliver(commit.event, to: &f.b)
        guard case .commit(let summary, _) = try deliver(commit.event, to: &f.c) else { return XCTFail() }
        XCTAssertTrue(summary.removedSelf)
        XCTAssertFalse(f.c.isActive)
        XCTAssertEqual(Set(f.a.members), [f.alice.keys.publicKey, f.bob.keys.publicKey])
        XCTAssertEqual(try f.b.exporterSecrets().first, try f.a.exporterSecrets().first)
        // An admin must demote itself before leaving.
        XCTAssertThrowsError(try f.a.leaveProposal(now: now, using: &rng))
    }

    /// A welcome for a large group no longer fits NIP-44's plaintext cap (from ≈82 members with
    /// MDK's KeyPackages, which carry GREASE values; 140 is past it for ours): wrapping it fails,
    /// which the node reports as welcome_too_large before anything is stored.
    func testWelcomeForTooManyMembersDoesNotFitAGiftWrap() throws {
        let creator = try member()
        let invitees = try (0..<140).map { _ in try member().event }
        let (_, welcomes) = try MarmotGroup.create(
            creator: creator.keys.publicKey, name: "Big", description: "", admins: [], relays: [try RelayURL("wss://r.example")],
            invitees: invitees, now: now, using: &rng)
        XCTAssertThrowsError(try GiftWrap.wrap(rumor: welcomes[0].rumor, sender: creator.keys, recipient: welcomes[0].recipient,
                                               now: now, rng: &rng)) { error in
            guard case NostrError.nip44PlaintextLength = error else { return XCTFail("\(error)") }
        }
    }
}
