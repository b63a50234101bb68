import Foundation
import Marmot
import Nostr
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// Welcome spoofing (issue 11, findings 3 and 4) through the real program: Mallory, who is in
/// no group, gift-wraps welcomes to Bob — one into a group reusing Family's nostr_group_id,
/// one re-authored from a genuine welcome, one from a group where she is no admin. `burrow
/// sync` refuses each with a reason, `invite list` stays empty, and Family goes on.
extension CLIMarmotTests {
    func testSpoofedWelcomesAreRefusedAndFamilyGoesOn() async throws {
        let alice = try makeHome("alice"), bob = try makeHome("bob")
        let (a, b) = (try alice.pubkey, try bob.pubkey)
        let created = try XCTUnwrap(try alice.ok(["group", "create", "Family", "--invite", b])["group"] as? [String: Any])
        let gid = try XCTUnwrap(created["nostr_group_id"] as? String)
        _ = try join(bob)

        // Mallory forges with the libraries, from a node of her own on the same relay.
        let malloryHome = root.appendingPathComponent("mallory")
        let mallory = try BurrowNode.initialize(home: malloryHome, passphrase: Array("mallory".utf8), kdfMemoryMiB: 8, importing: nil)
        defer { mallory.close() }
        try mallory.addRelays([relay.url])
        var rng = SystemRandomNumberGenerator()
        let bobKey = try PublicKey(hex: b)
        let relays = [try RelayURL(relay.url)]
        try bob.ok(["keypackage", "publish"])
        let bobKP = try await mallory.groups.fetchKeyPackage(for: bobKey, timeout: .seconds(5)).keyPackage

        var (trap, _) = try MarmotGroup.create(creator: mallory.publicKey, name: "Family", description: "", admins: [], relays: relays,
                                               invitees: [], now: BurrowNode.now(), using: &rng)
        var data = trap.data
        data.nostrGroupID = try Hex.decode(gid)
        let rename = try trap.updateData(data, committer: mallory.publicKey, now: BurrowNode.now(), using: &rng)
        try trap.mergePendingCommit(published: rename.event)
        let reused = try trap.addMembers([bobKP], committer: mallory.publicKey, now: BurrowNode.now(), using: &rng).welcomes[0].rumor

        let aliceKey = try PublicKey(hex: a)
        let (_, genuine) = try MarmotGroup.create(creator: aliceKey, name: "Alice's", description: "", admins: [], relays: relays,
                                                  invitees: [bobKP], now: BurrowNode.now(), using: &rng)
        let original = try WelcomeRumor.verify(genuine[0].rumor)
        let reauthored = try WelcomeRumor.build(welcome: original.message, keyPackageEventID: original.keyPackageEventID,
                                                relays: original.relays, committer: mallory.publicKey, createdAt: BurrowNode.now())
        let (_, borrowed) = try MarmotGroup.create(creator: mallory.publicKey, name: "Borrowed", description: "", admins: [aliceKey],
                                                   relays: relays, invitees: [bobKP], now: BurrowNode.now(), using: &rng)
        for rumor in [reused, reauthored, borrowed[0].rumor] {
            let wrap = try GiftWrap.wrap(rumor: rumor, sender: mallory.keys, recipient: bobKey, now: BurrowNode.now(), rng: &rng)
            _ = try await mallory.gateway.publishAccepted(wrap, to: [relay.url], timeout: .seconds(5))
        }

        let sync = try bob.run(["sync"])
        XCTAssertEqual(sync.status, 0, sync.stdout + sync.stderr)
        // Logs name no group and no member: the refusals are in the report, not in stderr.
        for secret in ["Family", "Borrowed", a, mallory.publicKey.hex, gid] {
            XCTAssertFalse(sync.stderr.contains(secret), "stderr names \(secret): \(sync.stderr)")
        }
        let report = try sync.json()
        let reasons = try XCTUnwrap(report["errors"] as? [[String: Any]]).compactMap { $0["reason"] as? String }
        XCTAssertEqual(reasons.count, 3, "\(reasons)")
        XCTAssertTrue(reasons.contains { $0.contains("reuses the nostr_group_id") }, "\(reasons)")
        XCTAssertTrue(reasons.contains { $0.contains("signed its GroupInfo") }, "\(reasons)")
        XCTAssertTrue(reasons.contains { $0.contains("not an admin") }, "\(reasons)")
        XCTAssertEqual((try bob.ok(["invite", "list"])["invites"] as? [Any])?.count, 0)
        XCTAssertEqual((try bob.ok(["group", "list"])["groups"] as? [Any])?.count, 1)

        try alice.ok(["chat", gid, "still one family"])
        XCTAssertEqual(try bob.ok(["sync"])["messages"] as? Int, 1)
        let messages = try XCTUnwrap(try bob.ok(["messages", gid])["messages"] as? [[String: Any]])
        XCTAssertTrue(messages.contains { $0["text"] as? String == "still one family" }, "\(messages)")
    }
}
