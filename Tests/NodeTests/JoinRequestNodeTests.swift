import Foundation
import MLS
import Marmot
import Nostr
import Store
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// The inviter's side of kind-1080 join requests: what is admitted, what is refused with a
/// reason (changing nothing), duplicates, and a newer request replacing an older one.
final class JoinRequestNodeTests: NodeRelayTestCase {
    var rng = SystemRandomNumberGenerator()

    /// Feeds one gift wrap to `node` as `sync` and `run` do; returns its report.
    func feed(_ wrap: Event, to node: BurrowNode) -> SyncReport {
        var report = SyncReport()
        node.handleGiftWrap(wrap, report: &report)
        return report
    }

    func wrap(_ rumor: Rumor, from sender: Keys, to recipient: BurrowNode) throws -> Event {
        try GiftWrap.wrap(rumor: rumor, sender: sender, recipient: recipient.publicKey, now: BurrowNode.now(), rng: &rng)
    }

    func requestRumor(group: String, from joiner: Keys, keyPackage: Event, name: String? = nil, at time: Int64) throws -> Rumor {
        try JoinRequestRumor.build(JoinRequest(groupID: group, pubkey: joiner.publicKey, keyPackage: keyPackage, name: name), createdAt: time)
    }

    func pendingIDs(_ node: BurrowNode) throws -> [String] { try node.groups.joinRequests().map(\.id) }

    func testAdmissionDuplicatesSupersedingAndRefusals() async throws {
        let alice = try node(), bob = try node(), carol = try node()
        let family = try await alice.groups.createGroup(name: "Family", description: "", invitees: [], admins: [], timeout: timeout)
        // Carol's group, where Alice is a member but not an admin.
        _ = try await alice.groups.publishKeyPackage(timeout: timeout)
        let carols = try await carol.groups.createGroup(name: "Carol's", description: "", invitees: [alice.publicKey], admins: [], timeout: timeout)
        _ = try await alice.sync(timeout: timeout)
        _ = try await alice.groups.acceptInvite(try XCTUnwrap(try alice.groups.invites().first).id, timeout: timeout)
        let kp = try await bob.groups.publishKeyPackage(timeout: timeout).keyPackageEvent
        let now = BurrowNode.now()

        // A valid request: admitted, reported for `run`, listed.
        let first = try requestRumor(group: family.mlsGroupID, from: bob.keys, keyPackage: kp, name: "Bob", at: now)
        let firstWrap = try wrap(first, from: bob.keys, to: alice)
        let admitted = feed(firstWrap, to: alice)
        XCTAssertEqual(admitted.errors, [])
        XCTAssertEqual(admitted.processed, 1)
        guard case .joinRequest(let view)? = admitted.updates.first else { return XCTFail("no join request update: \(admitted.updates)") }
        XCTAssertEqual(view.id, first.id.hex)
        XCTAssertEqual(view.mlsGroupID, family.mlsGroupID)
        XCTAssertEqual(view.nostrGroupID, family.nostrGroupID)
        XCTAssertEqual(view.groupName, "Family")
        XCTAssertEqual(view.from, bob.publicKey.hex)
        XCTAssertEqual(view.name, "Bob")
        XCTAssertEqual(view.keyPackage, kp.id.hex)
        XCTAssertEqual(view.createdAt, now)
        XCTAssertEqual(try pendingIDs(alice), [first.id.hex])
        XCTAssertEqual(try alice.groups.joinRequests(group: "Family").count, 1)
        XCTAssertEqual(try alice.groups.joinRequests(group: "Carol's").count, 0)

        // The same rumor in another wrap, and the same wrap again: nothing new, no error.
        for copy in [firstWrap, try wrap(first, from: bob.keys, to: alice)] {
            let again = feed(copy, to: alice)
            XCTAssertEqual(again.errors, [])
            XCTAssertTrue(again.updates.isEmpty)
        }
        XCTAssertEqual(try pendingIDs(alice), [first.id.hex])

        // A newer request from Bob for the same group replaces it; an older one arriving late does not.
        let newer = try requestRumor(group: family.mlsGroupID, from: bob.keys, keyPackage: kp, at: now + 1)
        XCTAssertEqual(feed(try wrap(newer, from: bob.keys, to: alice), to: alice).errors, [])
        let older = try requestRumor(group: family.mlsGroupID, from: bob.keys, keyPackage: kp, at: now - 60)
        let late = feed(try wrap(older, from: bob.keys, to: alice), to: alice)
        XCTAssertEqual(late.errors, [])
        XCTAssertTrue(late.updates.isEmpty)
        XCTAssertEqual(try pendingIDs(alice), [newer.id.hex])
        XCTAssertEqual(try alice.store.transaction { try $0.joinRequests.count() }, 1, "one row per joiner and group: the older is gone")

        // Refusals: each recorded with its reason, none stored.
        func refusal(_ rumor: Rumor, sealedBy sender: Keys) throws -> String {
            let report = feed(try wrap(rumor, from: sender, to: alice), to: alice)
            XCTAssertTrue(report.updates.allSatisfy { if case .error = $0 { return true } else { return false } })
            return report.errors.map(\.reason).joined(separator: "; ")
        }
        let mallory = Keys.generate(using: &rng)
        let onBobsBehalf = try Rumor(pubkey: mallory.publicKey, createdAt: now, kind: 1080, content: String(decoding: JoinRequest(
            groupID: family.mlsGroupID, pubkey: bob.publicKey, keyPackage: kp, name: nil).json, as: UTF8.self))
        XCTAssertTrue(try refusal(onBobsBehalf, sealedBy: mallory).contains("not the key that sealed it"))
        let unknownGroup = try requestRumor(group: Hex.encode(rng.randomBytes(32)), from: bob.keys, keyPackage: kp, at: now)
        XCTAssertTrue(try refusal(unknownGroup, sealedBy: bob.keys).contains("is not one of our active groups"))
        let notOurs = try requestRumor(group: carols.mlsGroupID, from: bob.keys, keyPackage: kp, at: now)
        XCTAssertTrue(try refusal(notOurs, sealedBy: bob.keys).contains("we do not administer group \(carols.mlsGroupID)"))
        let aliceKP = try await alice.groups.publishKeyPackage(timeout: timeout).keyPackageEvent
        let member = try requestRumor(group: family.mlsGroupID, from: alice.keys, keyPackage: aliceKP, at: now)
        XCTAssertTrue(try refusal(member, sealedBy: alice.keys).contains("already a member"))
        let fakeKP = try Event.sign(kind: 30443, content: "kp", tags: [["d", "0"]], createdAt: now, keys: bob.keys, rng: &rng)
        let badPackage = try requestRumor(group: family.mlsGroupID, from: bob.keys, keyPackage: fakeKP, at: now + 2)
        XCTAssertTrue(try refusal(badPackage, sealedBy: bob.keys).contains("KeyPackage is invalid"))
        let longName = try requestRumor(group: family.mlsGroupID, from: bob.keys, keyPackage: kp, name: String(repeating: "n", count: 257), at: now + 3)
        XCTAssertTrue(try refusal(longName, sealedBy: bob.keys).contains("name is over 256 bytes"))
        let garbage = try Rumor(pubkey: bob.publicKey, createdAt: now, kind: 1080, content: "{\"type\":\"join-request\"")
        XCTAssertTrue(try refusal(garbage, sealedBy: bob.keys).contains("not a join request"))
        XCTAssertEqual(try pendingIDs(alice), [newer.id.hex], "refusals store nothing")

        // Rejecting drops it; its id is then unknown, and a copy arriving later is not listed again.
        XCTAssertEqual(try alice.groups.rejectJoinRequest(String(newer.id.hex.prefix(10))).state, "rejected")
        XCTAssertEqual(try pendingIDs(alice), [])
        XCTAssertThrowsError(try alice.groups.rejectJoinRequest(newer.id.hex)) { error in
            guard case .unknownRequest? = error as? JoinRequestFailure else { return XCTFail("\(error)") }
        }
        XCTAssertTrue(feed(try wrap(newer, from: bob.keys, to: alice), to: alice).updates.isEmpty)
        XCTAssertEqual(try pendingIDs(alice), [])
        XCTAssertThrowsError(try alice.groups.rejectJoinRequest("zz")) { error in
            guard case .unknownRequest? = error as? JoinRequestFailure else { return XCTFail("\(error)") }
        }
    }

    /// Approval is the normal add: Bob gets a welcome for the KeyPackage he sent and joins.
    func testApprovalAddsTheJoinerWithItsKeyPackage() async throws {
        let alice = try node(), bob = try node()
        let family = try await alice.groups.createGroup(name: "Family", description: "", invitees: [], admins: [], timeout: timeout)
        let sent = try await bob.groups.requestToJoin(groupID: family.mlsGroupID.uppercased(), inviter: alice.publicKey, name: "Bob", timeout: timeout)
        XCTAssertEqual(sent.groupID, family.mlsGroupID)
        XCTAssertEqual(sent.inviter, alice.publicKey.hex)
        XCTAssertEqual(sent.relays, [relay.url])
        _ = try await alice.sync(timeout: timeout)
        let pending = try alice.groups.joinRequests()
        XCTAssertEqual(pending.map(\.id), [sent.requestID])
        XCTAssertEqual(pending.first?.keyPackage, sent.keyPackage)

        let view = try await alice.groups.approveJoinRequest(sent.requestID, timeout: timeout)
        XCTAssertEqual(Set(view.members), [alice.publicKey.hex, bob.publicKey.hex])
        XCTAssertEqual(try alice.groups.joinRequests(), [])
        _ = try await bob.sync(timeout: timeout)
        let invite = try XCTUnwrap(try bob.groups.invites().first)
        XCTAssertEqual(invite.from, alice.publicKey.hex)
        XCTAssertEqual(invite.nostrGroupID, family.nostrGroupID)
        let joined = try await bob.groups.acceptInvite(invite.id, timeout: timeout)
        XCTAssertEqual(joined.epoch, view.epoch)

        // Asking again once a member is refused locally.
        do {
            _ = try await bob.groups.requestToJoin(groupID: family.mlsGroupID, inviter: alice.publicKey, name: nil, timeout: timeout)
            XCTFail("a member asked to join")
        } catch NodeError.invalidInput(let message) {
            XCTAssertTrue(message.contains("already a member"), message)
        }
    }
}
