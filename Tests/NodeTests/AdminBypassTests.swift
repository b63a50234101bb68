import Foundation
@testable import MLS
import Marmot
import Nostr
import Store
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// The review's admin bypasses and welcome spoofing (issue 11), played through nodes on a
/// relay: each attack is refused by the pipeline with a reason, and the real group goes on.
final class AdminBypassTests: NodeRelayTestCase {
    var rng = SystemRandomNumberGenerator()

    /// Alice (the admin), Bob and Carol in "Family"; returns the group's view.
    func family() async throws -> (alice: BurrowNode, bob: BurrowNode, carol: BurrowNode, group: GroupView) {
        let alice = try node(), bob = try node(), carol = try node()
        return (alice, bob, carol, try await group("Family", by: alice, with: [bob, carol]))
    }

    func loaded(_ node: BurrowNode, _ group: GroupView) throws -> MarmotGroup {
        try node.store.transaction { try node.groups.loadGroup(mlsGroupID: MLSGroupID(Hex.decode(group.mlsGroupID)), in: $0) }.group
    }

    /// Seals `message` in `group`'s current epoch and publishes it, as a patched client would.
    func publishForged(_ message: MLSMessage, in group: MarmotGroup, by node: BurrowNode) async throws {
        let secret = try group.mls.exporter(label: GroupEvent.exporterLabel, context: GroupEvent.exporterContext, length: 32)
        let event = try GroupEvent.seal(message: message, exporterSecret: secret, nostrGroupID: group.nostrGroupID.bytes,
                                        createdAt: BurrowNode.now(), rng: &rng)
        _ = try await node.gateway.publishAccepted(event, to: [relay.url], timeout: timeout)
    }

    func testSelfUpdateIntoTheAdminsIdentityIsRefused() async throws {
        let (alice, bob, carol, view) = try await family()
        let group = try loaded(carol, view)
        guard var template = group.mls.member(at: group.mls.ownLeafIndex)?.leafNode else { return XCTFail("no leaf") }
        template.credential = .basic(identity: alice.publicKey.bytes)
        var state = group.mls.state
        let commit = try state.createCommit(
            CommitParameters(forcePath: true, newSigner: try SignaturePrivateKey.generate(using: &rng), leafTemplate: template),
            configuration: group.mls.configuration, psks: PSKSources(external: [:], resumption: [:]), using: &rng)
        try await publishForged(commit.message, in: group, by: carol)

        let before = try loaded(bob, view).mls.serialized()
        let report = try await bob.sync(timeout: timeout)
        XCTAssertTrue(report.errors.contains { $0.reason.contains("credential changed") }, "\(report.errors)")
        XCTAssertEqual(try loaded(bob, view).mls.serialized(), before)
        XCTAssertEqual(try bob.groups.group(view.mlsGroupID).admins, [alice.publicKey.hex])
        // The group goes on: Alice's next message reaches Bob.
        _ = try await alice.groups.chat(view.mlsGroupID, text: "still here", timeout: timeout)
        _ = try await bob.sync(timeout: timeout)
        XCTAssertTrue(try bob.groups.messages(view.mlsGroupID, limit: nil).contains { $0.text == "still here" })
    }

    /// Carol proposes herself as admin; Alice's next add and Bob's auto-commit of Dave's leave
    /// carry neither her proposal nor anything else: everyone ends on one epoch, Alice the only admin.
    func testNonAdminProposalsAreNeverSweptIn() async throws {
        let (alice, bob, carol, view) = try await family()
        let carolGroup = try loaded(carol, view)
        var data = carolGroup.data
        data.admins.append(carol.publicKey.bytes)
        var extensions = carolGroup.mls.extensions
        extensions.set(try data.groupContextExtension())
        var carolMLS = carolGroup.mls
        let proposal = try carolMLS.propose(.groupContextExtensions(GroupContextExtensionsProposal(extensions: extensions)), using: &rng)
        try await publishForged(proposal, in: carolGroup, by: carol)

        let dave = try node()
        _ = try await dave.groups.publishKeyPackage(timeout: timeout)
        _ = try await alice.sync(timeout: timeout)
        let added = try await alice.groups.addMembers(view.mlsGroupID, keys: [dave.publicKey], timeout: timeout)
        XCTAssertEqual(added.admins, [alice.publicKey.hex])
        _ = try await dave.sync(timeout: timeout)
        _ = try await dave.groups.acceptInvite(try XCTUnwrap(try dave.groups.invites().first).id, timeout: timeout)

        // Dave leaves; Bob (not an admin) is first to commit the SelfRemove.
        _ = try await dave.groups.leave(view.mlsGroupID, timeout: timeout)
        _ = try await bob.sync(timeout: timeout)
        for member in [alice, carol, bob] { _ = try await member.sync(timeout: timeout) }
        let epochs = try [alice, bob, carol].map { try $0.groups.group(view.mlsGroupID).epoch }
        XCTAssertEqual(Set(epochs).count, 1, "one epoch everywhere: \(epochs)")
        for member in [alice, bob, carol] {
            let seen = try member.groups.group(view.mlsGroupID)
            XCTAssertEqual(seen.admins, [alice.publicKey.hex])
            XCTAssertFalse(seen.members.contains(dave.publicKey.hex))
        }
        _ = try await bob.groups.chat(view.mlsGroupID, text: "one branch", timeout: timeout)
        _ = try await alice.sync(timeout: timeout)
        XCTAssertTrue(try alice.groups.messages(view.mlsGroupID, limit: nil).contains { $0.text == "one branch" })
    }

    /// Mallory (no member) welcomes Bob into a group of hers that reuses Family's
    /// nostr_group_id: the welcome is refused, and a pending row under that id (as an older
    /// Burrow could have stored) does not shadow Family.
    func testWelcomeReusingAGroupsNostrIDIsRefusedAndNeverShadowsIt() async throws {
        let (alice, bob, _, view) = try await family()
        let mallory = try node()
        let familyID = try Hex.decode(view.nostrGroupID)
        var (trap, _) = try MarmotGroup.create(creator: mallory.publicKey, name: "Family", description: "", admins: [],
                                               relays: [try RelayURL(relay.url)], invitees: [], now: BurrowNode.now(), using: &rng)
        var data = trap.data
        data.nostrGroupID = familyID
        let rename = try trap.updateData(data, committer: mallory.publicKey, now: BurrowNode.now(), using: &rng)
        try trap.mergePendingCommit(published: rename.event)
        XCTAssertEqual(trap.nostrGroupID.bytes, familyID)
        _ = try await bob.groups.publishKeyPackage(timeout: timeout)
        let bobKP = try await mallory.groups.fetchKeyPackage(for: bob.publicKey, timeout: timeout)
        let add = try trap.addMembers([bobKP.keyPackage], committer: mallory.publicKey, now: BurrowNode.now(), using: &rng)
        let wrap = try GiftWrap.wrap(rumor: add.welcomes[0].rumor, sender: mallory.keys, recipient: bob.publicKey,
                                     now: BurrowNode.now(), rng: &rng)
        _ = try await mallory.gateway.publishAccepted(wrap, to: [relay.url], timeout: timeout)

        let report = try await bob.sync(timeout: timeout)
        XCTAssertTrue(report.errors.contains { $0.reason.contains("reuses the nostr_group_id") }, "\(report.errors)")
        XCTAssertTrue(try bob.groups.invites().isEmpty)

        // A pending row under Family's id, sorted before it, is stepped over.
        try bob.store.transaction { tx in
            try tx.groups.save(StoredGroup(mlsGroupID: [UInt8](repeating: 0, count: 16), nostrGroupID: familyID, state: .pending,
                                           mlsState: trap.mls.serialized(), createdAt: BurrowNode.now(), lastSelfUpdate: 0, syncSince: 0))
        }
        _ = try await alice.groups.chat(view.mlsGroupID, text: "not frozen", timeout: timeout)
        let after = try await bob.sync(timeout: timeout)
        XCTAssertEqual(after.messages, 1, "\(after.errors)")
        XCTAssertTrue(try bob.groups.messages(view.mlsGroupID, limit: nil).contains { $0.text == "not frozen" })
    }

    /// A welcome whose author is not the GroupInfo's signer (re-authored by Mallory), or whose
    /// author is no admin of the group, is refused and never listed.
    func testWelcomeInviterMustSignTheGroupInfoAndBeAnAdmin() async throws {
        let alice = try node(), bob = try node(), mallory = try node()
        _ = try await bob.groups.publishKeyPackage(timeout: timeout)
        let bobKP = try await mallory.groups.fetchKeyPackage(for: bob.publicKey, timeout: timeout)
        // Alice's genuine welcome, re-authored and sealed by Mallory.
        let (_, genuine) = try MarmotGroup.create(creator: alice.publicKey, name: "Alice's", description: "", admins: [],
                                                  relays: [try RelayURL(relay.url)], invitees: [bobKP.keyPackage], now: BurrowNode.now(),
                                                  using: &rng)
        let original = try WelcomeRumor.verify(genuine[0].rumor)
        let reauthored = try WelcomeRumor.build(welcome: original.message, keyPackageEventID: original.keyPackageEventID,
                                                relays: original.relays, committer: mallory.publicKey, createdAt: BurrowNode.now())
        // Mallory's own group naming only Alice as admin.
        let (_, borrowed) = try MarmotGroup.create(creator: mallory.publicKey, name: "Borrowed", description: "", admins: [alice.publicKey],
                                                   relays: [try RelayURL(relay.url)], invitees: [bobKP.keyPackage], now: BurrowNode.now(),
                                                   using: &rng)
        for rumor in [reauthored, borrowed[0].rumor] {
            let wrap = try GiftWrap.wrap(rumor: rumor, sender: mallory.keys, recipient: bob.publicKey, now: BurrowNode.now(), rng: &rng)
            _ = try await mallory.gateway.publishAccepted(wrap, to: [relay.url], timeout: timeout)
        }
        let report = try await bob.sync(timeout: timeout)
        let reasons = report.errors.map(\.reason)
        XCTAssertTrue(reasons.contains { $0.contains("signed its GroupInfo") }, "\(reasons)")
        XCTAssertTrue(reasons.contains { $0.contains("not an admin") }, "\(reasons)")
        XCTAssertTrue(try bob.groups.invites().isEmpty)
        XCTAssertTrue(try bob.store.transaction { try $0.groups.list() }.isEmpty)
    }
}
