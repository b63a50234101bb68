import Foundation
import MLS
import Marmot
import Nostr
import Store
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// `GroupPipeline` without a store or a relay: events made by real Marmot groups, decisions
/// checked one by one, hostile input included.
final class GroupPipelineTests: XCTestCase {
    let now: Int64 = 1_795_000_000
    var rng = SplitMix64(seed: 0x5049_5045)

    typealias Member = MarmotTestMember

    func member() throws -> Member { try Member.make(now: now, using: &rng) }

    /// Alice (admin) with Bob and Carol; each one's group.
    func family() throws -> MarmotTestFamily { try MarmotTestFamily.make(now: now, using: &rng) }

    func candidate(_ group: MarmotGroup, state: StoredGroup.State = .active, joinedAt: Int64 = 0) -> GroupPipeline.Candidate {
        let row = StoredGroup(mlsGroupID: group.mlsGroupID.bytes, nostrGroupID: group.nostrGroupID.bytes, state: state, mlsState: [],
                              createdAt: joinedAt, lastSelfUpdate: joinedAt, syncSince: joinedAt)
        return GroupPipeline.Candidate(group: LoadedGroup(row: row, group: group), joinedAt: { joinedAt })
    }

    func decide(_ event: Event, _ candidates: [GroupPipeline.Candidate], processed: Bool = false) -> GroupPipeline.Decision {
        GroupPipeline(now: now).decide(event, alreadyProcessed: processed) { _ in candidates }
    }

    func chat(_ text: String, from group: inout MarmotGroup, author: Member, at time: Int64? = nil) throws -> Event {
        try group.seal(try InnerEvent.chat(text, author: author.keys.publicKey, createdAt: time ?? now), now: time ?? now, using: &rng)
    }

    func rawEvent(_ content: String, h: [UInt8], kind: Int = MarmotKind.groupEvent, at time: Int64? = nil) throws -> Event {
        try Event.sign(kind: kind, content: content, tags: [["h", Hex.encode(h)], ["encoding", "base64"]], createdAt: time ?? now,
                       keys: Keys.generate(using: &rng), rng: &rng)
    }

    func reason(_ decision: GroupPipeline.Decision) -> String? {
        if case .reject(let reason, _) = decision { return reason }
        return nil
    }

    func testApplicationMessageIsApplied() throws {
        var f = try family()
        let event = try chat("hello", from: &f.a, author: f.alice)
        guard case .apply(let change) = decide(event, [candidate(f.b)]) else { return XCTFail("not applied") }
        XCTAssertEqual(change.message?.inner.rumor.content, "hello")
        XCTAssertEqual(change.message?.inner.sender, f.alice.keys.publicKey)
        XCTAssertFalse(change.epochChanged)
        XCTAssertTrue(change.effects.isEmpty)
        XCTAssertEqual(change.group.row.syncSince, now)
        guard case .skip = decide(event, [candidate(f.b)], processed: true) else { return XCTFail("a processed event is skipped") }
    }

    func testHostileEventsAreRefusedWithAReason() throws {
        let f = try family()
        let id = f.b.nostrGroupID.bytes
        let valid = Data((0..<400).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }).base64EncodedString()
        XCTAssertTrue(reason(decide(try rawEvent(valid, h: rng.randomBytes(32)), [])).map { $0.contains("no group of ours") } ?? false)
        XCTAssertNotNil(reason(decide(try rawEvent("!!! not base64 !!!", h: id), [candidate(f.b)])))
        XCTAssertNotNil(reason(decide(try rawEvent(String(valid.prefix(12)), h: id), [candidate(f.b)])))
        XCTAssertNotNil(reason(decide(try rawEvent(valid, h: id, kind: 1), [candidate(f.b)])))
        let oversized = String(repeating: "A", count: GroupPipeline.maximumEventContent + 4)
        XCTAssertTrue(reason(decide(try rawEvent(oversized, h: id), [candidate(f.b)]))?.contains("oversized") ?? false)
        guard case .reject(let old, let tooOld) = decide(try rawEvent(valid, h: id, at: now - 46 * 86_400), [candidate(f.b)]) else {
            return XCTFail("too old is refused")
        }
        XCTAssertTrue(tooOld)
        XCTAssertTrue(old.contains("45-day"))
        // Well-formed but under no key of ours: held, and before our joining it counts as such.
        guard case .hold(_, let beforeJoin) = decide(try rawEvent(valid, h: id), [candidate(f.b, joinedAt: now - 10)]) else {
            return XCTFail("undecryptable events are held")
        }
        XCTAssertFalse(beforeJoin)
        guard case .hold(_, true) = decide(try rawEvent(valid, h: id, at: now - 100), [candidate(f.b, joinedAt: now - 10)]) else {
            return XCTFail("an undecryptable event from before we joined is marked so")
        }
    }

    func testNonAdminCommitIsRefusedAndOwnEchoRecorded() throws {
        var f = try family()
        let dave = try member()
        var carolMLS = f.c.mls
        let output = try carolMLS.addMembers([dave.event.keyPackage], using: &rng)
        let secret = try f.c.mls.exporter(label: GroupEvent.exporterLabel, context: GroupEvent.exporterContext, length: 32)
        let forged = try GroupEvent.seal(message: output.commit, exporterSecret: secret, nostrGroupID: f.c.nostrGroupID.bytes, createdAt: now, rng: &rng)
        XCTAssertTrue(reason(decide(forged, [candidate(f.a)]))?.contains("commit not authorized") ?? false)

        // Our own proposal back from a relay (our own messages are recorded when sent).
        let own = try f.c.leaveProposal(now: now, using: &rng)
        guard case .record("own echo", counted: false) = decide(own, [candidate(f.c)]) else { return XCTFail("own echo") }
    }

    func testSelfRemoveAsksForTheOwedCommit() throws {
        var f = try family()
        let leave = try f.c.leaveProposal(now: now, using: &rng)
        guard case .apply(let change) = decide(leave, [candidate(f.b)]) else { return XCTFail("a proposal is stored") }
        XCTAssertEqual(change.effects, [.commitOwed(mlsGroupID: f.b.mlsGroupID)])
        XCTAssertEqual(change.group.group.owedProposals.count, 1)
    }

    func testCommitsAheadStaleDuplicateAndLostRaces() throws {
        var f = try family()
        var renamedA = f.a.data
        renamedA.name = "Alice's"
        let fromAlice = try f.a.updateData(renamedA, committer: f.alice.keys.publicKey, now: now, using: &rng)
        try f.a.mergePendingCommit(published: fromAlice.event)
        let next = try chat("epoch 2", from: &f.a, author: f.alice)
        // Epoch 2 before the commit that opens it: held.
        guard case .hold = decide(next, [candidate(f.b)]) else { return XCTFail("held until its commit") }

        // Alice makes Bob admin; then Bob and Alice both rename at epoch 2; Bob's is later.
        var admins = f.a.data
        admins.admins.append(f.bob.keys.publicKey.bytes)
        let promote = try f.a.updateData(admins, committer: f.alice.keys.publicKey, now: now, using: &rng)
        try f.a.mergePendingCommit(published: promote.event)
        for event in [fromAlice.event, promote.event] {
            guard case .apply(let change) = decide(event, [candidate(f.b)]) else { return XCTFail("commit applied") }
            XCTAssertTrue(change.epochChanged)
            f.b = change.group.group
        }
        var early = f.a.data
        early.name = "early"
        var late = f.b.data
        late.name = "late"
        let fromBob = try f.b.updateData(late, committer: f.bob.keys.publicKey, now: now + 10, using: &rng)
        try f.b.mergePendingCommit(published: fromBob.event)
        let fromAliceAgain = try f.a.updateData(early, committer: f.alice.keys.publicKey, now: now + 5, using: &rng)
        try f.a.mergePendingCommit(published: fromAliceAgain.event)
        // Bob's own commit lost: the earlier one replaces it and his intent is to be retried.
        guard case .apply(let change) = decide(fromAliceAgain.event, [candidate(f.b)]) else { return XCTFail("the earlier commit wins") }
        XCTAssertEqual(change.effects, [.retryIntent(mlsGroupID: f.b.mlsGroupID, lost: fromBob.event.id)])
        XCTAssertEqual(change.group.group.data.name, "early")
        // Bob's again at Alice: stale. Alice's again, re-wrapped in a new event: a duplicate.
        guard case .record(let stale, counted: true) = decide(fromBob.event, [candidate(f.a)]), stale.contains("stale") else {
            return XCTFail("the later commit is stale")
        }
        let bobAfter = change.group.group
        let secret = try XCTUnwrap(try bobAfter.exporterSecrets().dropFirst().first)
        let opened = try GroupEvent.validate(fromAliceAgain.event, now: now).decrypt(using: [secret])
        let rewrapped = try GroupEvent.seal(messageBytes: opened.messageBytes, exporterSecret: secret, nostrGroupID: bobAfter.nostrGroupID.bytes,
                                            createdAt: now + 1, rng: &rng)
        guard case .record(let again, counted: false) = decide(rewrapped, [candidate(bobAfter)]), again.contains("again") else {
            return XCTFail("a re-wrapped commit is a duplicate")
        }
    }

    func testPendingRowsNeverShadowAndTheOpeningGroupWins() throws {
        var f = try family()
        let other = try family()
        let event = try chat("for Family", from: &f.a, author: f.alice)
        // A pending row under the same nostr_group_id (first in any order) and an active group
        // of another family renamed onto it: the event goes to the group whose keys open it.
        var shadow = candidate(other.b, state: .pending)
        shadow.group.row.nostrGroupID = f.b.nostrGroupID.bytes
        var impostor = candidate(other.c)
        impostor.group.row.nostrGroupID = f.b.nostrGroupID.bytes
        guard case .apply(let change) = decide(event, [shadow, impostor, candidate(f.b)]) else { return XCTFail("Family reads it") }
        XCTAssertEqual(change.group.row.mlsGroupID, f.b.mlsGroupID.bytes)
        guard case .skip = decide(event, [shadow]) else { return XCTFail("a pending invite alone waits for consent") }
    }
}
