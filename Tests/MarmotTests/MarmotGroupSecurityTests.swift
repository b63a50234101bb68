import Foundation
@testable import MLS
import Marmot
import Nostr
import XCTest
import TestSupport

/// The admin bypasses of the security review (issue 11): a credential changed by a
/// self-update, one identity holding two leaves, non-admin proposals swept into commits, and
/// welcomes whose author does not vouch for the group. Each is refused and changes nothing.
extension MarmotGroupTests {
    /// Seals `message` as a kind-445 event of `group`'s current epoch, bypassing its checks.
    func forge(_ message: MLSMessage, in group: MarmotGroup) throws -> Event {
        let secret = try group.mls.exporter(label: GroupEvent.exporterLabel, context: GroupEvent.exporterContext, length: 32)
        return try GroupEvent.seal(message: message, exporterSecret: secret, nostrGroupID: group.nostrGroupID.bytes, createdAt: now, rng: &rng)
    }

    /// `event` is refused by `group` with an error `matches` accepts, and the group is unchanged.
    func assertRefused(_ event: Event, by group: inout MarmotGroup, _ matches: (Error) -> Bool,
                       file: StaticString = #filePath, line: UInt = #line) {
        let before = group.mls.serialized()
        XCTAssertThrowsError(try deliver(event, to: &group), file: file, line: line) { error in
            XCTAssertTrue(matches(error), "unexpected \(error)", file: file, line: line)
        }
        XCTAssertEqual(group.mls.serialized(), before, "a refused event changed the group", file: file, line: line)
    }

    /// Carol (not an admin) self-updates into Alice's identity: Alice and Bob refuse it, so
    /// Carol is never judged an admin nor her messages stored as Alice's.
    func testSelfUpdateIntoAnAdminsIdentityIsRefused() throws {
        var f = try family()
        guard var template = f.c.mls.member(at: f.c.mls.ownLeafIndex)?.leafNode else { return XCTFail("no leaf") }
        template.credential = .basic(identity: f.alice.keys.publicKey.bytes)
        var state = f.c.mls.state
        let commit = try state.createCommit(
            CommitParameters(forcePath: true, newSigner: try SignaturePrivateKey.generate(using: &rng), leafTemplate: template),
            configuration: f.c.mls.configuration, psks: PSKSources(external: [:], resumption: [:]), using: &rng)
        let forged = try forge(commit.message, in: f.c)
        assertRefused(forged, by: &f.a) { ($0 as? MarmotError) == .mls(.credentialChanged(leaf: f.c.mls.ownLeafIndex.value)) }
        assertRefused(forged, by: &f.b) { ($0 as? MarmotError) == .mls(.credentialChanged(leaf: f.c.mls.ownLeafIndex.value)) }
        XCTAssertEqual(Set(f.a.admins), [f.alice.keys.publicKey, f.bob.keys.publicKey])
    }

    /// An admin's Add of a key that already holds a leaf, or of one key twice, is refused by
    /// receivers and never made by our own API.
    func testOneIdentityNeverHoldsTwoLeaves() throws {
        var f = try family()
        let carolAgain = try MarmotProfile.keyPackage(for: f.carol.keys.publicKey, now: now, using: &rng)
        XCTAssertThrowsError(try f.a.addMembers([try keyPackageEvent(carolAgain, keys: f.carol.keys)], committer: f.alice.keys.publicKey,
                                                now: now, using: &rng)) {
            XCTAssertEqual($0 as? MarmotError, .alreadyAMember(f.carol.keys.publicKey.hex))
        }
        var mls = f.a.mls
        let output = try mls.commit(adding: [try carolAgain.keyPackage.validate(at: UInt64(now))], storedProposals: .none, using: &rng)
        assertRefused(try forge(output.commit, in: f.a), by: &f.b) { ($0 as? MarmotError) == .duplicateIdentity(f.carol.keys.publicKey.hex) }

        // A welcome into a tree where one key holds two leaves is refused.
        let dave = try member()
        let daveAgain = try keyPackageEvent(try MarmotProfile.keyPackage(for: dave.keys.publicKey, now: now, using: &rng), keys: dave.keys)
        let eve = try member()
        XCTAssertThrowsError(try MarmotGroup.create(creator: eve.keys.publicKey, name: "Twice", description: "", admins: [],
                                                    relays: [try RelayURL("wss://relay.example.com")], invitees: [dave.event, daveAgain],
                                                    now: now, using: &rng)) {
            XCTAssertEqual($0 as? MarmotError, .duplicateIdentity(dave.keys.publicKey.hex))
        }
        var eveMLS = try MLSGroup.create(
            groupID: rng.randomBytes(16), credential: MarmotProfile.credential(for: eve.keys.publicKey),
            signer: SignaturePrivateKey.generate(using: &rng), capabilities: MarmotProfile.capabilities,
            lifetime: .standard(from: UInt64(now)), groupContextExtensions: f.a.mls.extensions, configuration: MarmotProfile.configuration,
            using: &rng)
        let twice = try eveMLS.addMembers([dave.event.keyPackage, daveAgain.keyPackage], using: &rng)
        let rumor = try WelcomeRumor.build(welcome: MLSMessage(body: .welcome(try XCTUnwrap(twice.welcome))), keyPackageEventID: dave.event.event.id,
                                           relays: [try RelayURL("wss://relay.example.com")], committer: eve.keys.publicKey, createdAt: now)
        XCTAssertThrowsError(try MarmotGroup.join(welcome: try WelcomeRumor.verify(rumor), keyPackage: dave.bundle)) {
            XCTAssertEqual($0 as? MarmotError, .duplicateIdentity(dave.keys.publicKey.hex))
        }
    }

    /// Carol (not an admin) proposes making herself an admin. Marmot ignores the proposal
    /// (it is not kept), so Alice's next add commits only the add; and an admin's commit
    /// carrying a non-admin's proposal by reference is refused.
    func testNonAdminProposalsAreNeverSweptIntoCommits() throws {
        var f = try family()
        let promote = try promotionProposal(by: &f.c, promoting: f.carol.keys.publicKey)
        guard case .proposalIgnored = try deliver(promote, to: &f.a) else { return XCTFail("Alice should ignore it") }
        XCTAssertTrue(f.a.mls.pendingProposals.isEmpty, "an ignored proposal is not kept")
        guard case .proposalIgnored = try deliver(promote, to: &f.b) else { return XCTFail("Bob should ignore it") }

        // Alice adds Dave: the commit holds the Add only, and Carol is no admin anywhere.
        let dave = try member()
        let add = try f.a.addMembers([dave.event], committer: f.alice.keys.publicKey, now: now, using: &rng)
        XCTAssertEqual(add.summary.proposals.map(\.proposal.proposalType), [.add])
        try f.a.mergePendingCommit(published: add.event)
        guard case .commit = try deliver(add.event, to: &f.b) else { return XCTFail("Bob follows Alice's add") }
        guard case .commit = try deliver(add.event, to: &f.c) else { return XCTFail("Carol follows Alice's add") }
        XCTAssertFalse(f.a.isAdmin(f.carol.keys.publicKey))
        XCTAssertFalse(f.b.isAdmin(f.carol.keys.publicKey))

        // Bob, bypassing Marmot, keeps Carol's next promotion and commits it by reference.
        let again = try promotionProposal(by: &f.c, promoting: f.carol.keys.publicKey)
        var bobMLS = f.b.mls
        guard case .proposal(let stored) = try bobMLS.process(try f.b.decrypt(try GroupEvent.validate(again, now: now)).message,
                                                               at: UInt64(now)) else { return XCTFail("not a proposal") }
        let sweep = try bobMLS.commit(storedProposals: .only([stored.reference]), using: &rng)
        // Receivers never kept the proposal, and the admin policy refuses such a commit anyway.
        _ = try deliver(again, to: &f.a)
        let before = f.a.mls.serialized()
        guard case .hold(.unknownProposal) = try deliver(try forge(sweep.commit, in: f.b), to: &f.a) else {
            return XCTFail("a commit naming a proposal Alice does not hold waits")
        }
        XCTAssertEqual(f.a.mls.serialized(), before)
        XCTAssertThrowsError(try AdminPolicy.authorize(sweep.summary, admins: f.a.data.admins, members: f.a.mls.members)) {
            guard case MarmotError.commitNotAuthorized(let reason) = $0 else { return XCTFail("\($0)") }
            XCTAssertTrue(reason.contains("non-admin's proposal"))
        }
    }

    /// A GroupContextExtensions proposal from `group`'s member adding `key` to the admins.
    func promotionProposal(by group: inout MarmotGroup, promoting key: PublicKey) throws -> Event {
        var data = group.data
        data.admins.append(key.bytes)
        var extensions = group.mls.extensions
        extensions.set(try data.groupContextExtension())
        var mls = group.mls
        let proposal = try mls.propose(.groupContextExtensions(GroupContextExtensionsProposal(extensions: extensions)), using: &rng)
        return try forge(proposal, in: group)
    }

    /// Carol's SelfRemove arrives at Bob after an ignored rename proposal of hers: Bob's auto-commit
    /// carries the SelfRemove only, so everyone (admins included) accepts it.
    func testAutoCommitCarriesOnlyTheOwedSelfRemove() throws {
        var f = try family()
        var data = f.c.data
        data.name = "Carol's name"
        var extensions = f.c.mls.extensions
        extensions.set(try data.groupContextExtension())
        var carolMLS = f.c.mls
        let rename = try forge(try carolMLS.propose(.groupContextExtensions(GroupContextExtensionsProposal(extensions: extensions)),
                                                    using: &rng), in: f.c)
        _ = try deliver(rename, to: &f.b)
        let leave = try f.c.leaveProposal(now: now, using: &rng)
        guard case .proposalToCommit = try deliver(leave, to: &f.b) else { return XCTFail("Bob owes the commit") }
        XCTAssertEqual(f.b.owedProposals.count, 1)
        let commit = try f.b.commitOwedProposals(now: now, using: &rng)
        XCTAssertEqual(commit.summary.proposals.map(\.proposal), [.selfRemove])
        try f.b.mergePendingCommit(published: commit.event)
        _ = try deliver(rename, to: &f.a)
        _ = try deliver(leave, to: &f.a)
        guard case .commit(let summary, _) = try deliver(commit.event, to: &f.a) else { return XCTFail("Alice accepts it") }
        XCTAssertFalse(summary.extensionsChanged)
        XCTAssertEqual(f.a.epoch, f.b.epoch)
        XCTAssertEqual(f.a.data.name, "Family")
        XCTAssertEqual(try f.a.exporterSecrets().first, try f.b.exporterSecrets().first)
    }

    /// A welcome binds its author: the seal's signer must have signed the GroupInfo and be an
    /// admin. A re-authored welcome, or one from a non-admin creator, is refused.
    func testWelcomeAuthorMustBeTheSignerAndAnAdmin() throws {
        let eve = try member(), mallory = try member(), dave = try member()
        let (_, welcomes) = try MarmotGroup.create(
            creator: eve.keys.publicKey, name: "Real", description: "", admins: [], relays: [try RelayURL("wss://relay.example.com")],
            invitees: [dave.event], now: now, using: &rng)
        XCTAssertNoThrow(try join(welcomes[0], dave))
        // The same welcome re-authored by Mallory (as if her seal carried it).
        let original = try WelcomeRumor.verify(welcomes[0].rumor)
        let reauthored = try WelcomeRumor.build(welcome: original.message, keyPackageEventID: original.keyPackageEventID,
                                                relays: original.relays, committer: mallory.keys.publicKey, createdAt: now)
        XCTAssertThrowsError(try MarmotGroup.join(welcome: try WelcomeRumor.verify(reauthored), keyPackage: dave.bundle)) {
            guard case MarmotError.welcomeInviterMismatch(let reason) = $0 else { return XCTFail("\($0)") }
            XCTAssertTrue(reason.contains("signed its GroupInfo"))
        }
        // Eve creates a group naming only Mallory as admin and invites Dave herself.
        let (_, notAdmin) = try MarmotGroup.create(
            creator: eve.keys.publicKey, name: "Borrowed", description: "", admins: [mallory.keys.publicKey],
            relays: [try RelayURL("wss://relay.example.com")], invitees: [dave.event], now: now, using: &rng)
        XCTAssertThrowsError(try join(notAdmin[0], dave)) {
            guard case MarmotError.welcomeInviterMismatch(let reason) = $0 else { return XCTFail("\($0)") }
            XCTAssertTrue(reason.contains("admin"))
        }
    }

    func keyPackageEvent(_ bundle: KeyPackageBundle, keys: Keys) throws -> VerifiedKeyPackageEvent {
        let content = try KeyPackageEventContent(keyPackage: bundle.keyPackage, relays: [try RelayURL("wss://relay.example.com")], using: &rng)
        return try KeyPackageEvent.verify(try content.sign(keys: keys, createdAt: now, rng: &rng).event, now: now)
    }
}
