import Foundation
import MLS
import Marmot
import Nostr
import Store
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// Each class of hostile input reaching the node's pipeline is refused with a reason in
/// `sync`'s errors and changes no state: the group's MLS state and snapshots, the stored
/// messages and the invites are byte-for-byte what they were.
final class HostileInputTests: NodeRelayTestCase {
    var rng = SystemRandomNumberGenerator()

    /// Alice (admin) and Bob in one group; returns its mls_group_id hex.
    func family() async throws -> (alice: BurrowNode, bob: BurrowNode, group: String) {
        let alice = try node(), bob = try node()
        let view = try await group("Family", by: alice, with: [bob])
        _ = try await alice.groups.chat(view.mlsGroupID, text: "hello", timeout: timeout)
        _ = try await bob.sync(timeout: timeout)
        return (alice, bob, view.mlsGroupID)
    }

    /// Everything a hostile event could have changed.
    struct Fingerprint: Equatable {
        let mlsState: [[UInt8]]
        let snapshots: [[UInt8]]
        let messages: Int
        let invites: [[UInt8]]
    }

    func fingerprint(_ node: BurrowNode) throws -> Fingerprint {
        try node.store.transaction { tx in
            let groups = try tx.groups.list()
            return Fingerprint(
                mlsState: groups.map(\.mlsState),
                snapshots: try groups.flatMap { try tx.snapshots.list(mlsGroupID: $0.mlsGroupID).map(\.state) },
                messages: try tx.messages.count(),
                invites: try tx.invites.list().map(\.wrapperID))
        }
    }

    /// Feeds group events to the pipeline and returns the reasons it gave.
    func feed(_ events: [Event], to node: BurrowNode) -> [String] {
        var report = SyncReport()
        node.groups.processGroupEvents(events, report: &report)
        return report.errors.map(\.reason)
    }

    func groupEvent(_ content: String, group: [UInt8], signer: Keys? = nil) throws -> Event {
        // A few seconds ahead: unmistakably after Bob joined (older undecryptable events count as pre-join).
        try Event.sign(kind: MarmotKind.groupEvent, content: content, tags: [["h", Hex.encode(group)], ["encoding", "base64"]],
                       createdAt: BurrowNode.now() + 5, keys: signer ?? Keys.generate(using: &rng), rng: &rng)
    }

    func testHostileGroupEventsChangeNothing() async throws {
        let (alice, bob, gid) = try await family()
        let nostrID = try XCTUnwrap(try Hex.decode(try bob.groups.group(gid).nostrGroupID, length: 32))
        let before = try fingerprint(bob)

        // A 445 for a group we do not have.
        XCTAssertTrue(feed([try groupEvent(StrictBase64Probe.valid(64), group: rng.randomBytes(32))], to: bob)
            .contains { $0.contains("no group of ours") })
        // Garbage and truncated content.
        XCTAssertEqual(feed([try groupEvent("!!! not base64 !!!", group: nostrID)], to: bob).count, 1)
        XCTAssertEqual(feed([try groupEvent(StrictBase64Probe.valid(10), group: nostrID)], to: bob).count, 1)
        // Well-formed but under no key of ours: held, reported, not applied.
        XCTAssertTrue(feed([try groupEvent(StrictBase64Probe.valid(400), group: nostrID)], to: bob).contains { $0.hasPrefix("held") })
        // Oversized.
        let oversized = feed([try groupEvent(StrictBase64Probe.valid(600_000), group: nostrID)], to: bob)
        XCTAssertTrue(oversized.contains { $0.contains("oversized") }, "\(oversized)")
        // An event that is not a 445 at all in the group pipeline.
        let note = try Event.sign(kind: 1, content: "hi", tags: [["h", Hex.encode(nostrID)]], createdAt: BurrowNode.now(),
                                  keys: Keys.generate(using: &rng), rng: &rng)
        XCTAssertEqual(feed([note], to: bob).count, 1)
        // Too old for the 45-day window.
        let old = try Event.sign(kind: MarmotKind.groupEvent, content: StrictBase64Probe.valid(64), tags: [["h", Hex.encode(nostrID)]],
                                 createdAt: BurrowNode.now() - 46 * 86_400, keys: Keys.generate(using: &rng), rng: &rng)
        XCTAssertTrue(feed([old], to: bob).contains { $0.contains("45-day") })
        XCTAssertEqual(try fingerprint(bob), before)

        // A replayed event: the chat Bob already has, fed again, is skipped silently.
        let fetched = try await bob.gateway.fetchEvents(Filter(kinds: [MarmotKind.groupEvent], tags: ["h": [Hex.encode(nostrID)]]),
                                                from: [relay.url], timeout: timeout)
        let chat = try XCTUnwrap(fetched.first)
        var report = SyncReport()
        bob.groups.processGroupEvents([chat, chat], report: &report)
        XCTAssertEqual(report.processed, 0)
        XCTAssertEqual(report.messages, 0)
        XCTAssertEqual(try fingerprint(bob), before)

        // A commit from a non-admin (Bob), made below the node's own checks, is refused by Alice.
        let carol = try node()
        _ = try await carol.groups.publishKeyPackage(timeout: timeout)
        let carolKP = try await bob.groups.fetchKeyPackage(for: carol.publicKey, timeout: timeout)
        let bobGroup = try bob.store.transaction { try bob.groups.loadGroup(mlsGroupID: MLSGroupID(Hex.decode(gid)), in: $0) }.group
        var mls = bobGroup.mls
        let output = try mls.addMembers([carolKP.keyPackage.keyPackage], using: &rng)
        let secret = try bobGroup.mls.exporter(label: GroupEvent.exporterLabel, context: GroupEvent.exporterContext, length: 32)
        let forged = try GroupEvent.seal(message: output.commit, exporterSecret: secret, nostrGroupID: nostrID,
                                         createdAt: BurrowNode.now(), rng: &rng)
        let aliceBefore = try fingerprint(alice)
        XCTAssertTrue(feed([forged], to: alice).contains { $0.contains("commit") }, "\(feed([forged], to: alice))")
        XCTAssertEqual(try fingerprint(alice), aliceBefore)

        // Forged signatures never become an Event the pipeline could take.
        var tampered = Array(chat.jsonString.utf8)
        if let index = tampered.lastIndex(of: UInt8(ascii: "a")) { tampered[index] = UInt8(ascii: "b") }
        XCTAssertThrowsError(try UnverifiedEvent(json: tampered).verified())
    }

    func testHostileWelcomesChangeNothing() async throws {
        let (alice, bob, gid) = try await family()
        let before = try fingerprint(bob)

        // The welcome Bob accepted, re-wrapped in a new gift wrap: a replay for an active group.
        let wraps = try await bob.gateway.fetchEvents(Filter(kinds: [Kind.giftWrap], tags: ["p": [bob.publicKey.hex]]), from: [relay.url], timeout: timeout)
        let firstWrap = try XCTUnwrap(wraps.first)
        let original = try GiftWrap.unwrap(firstWrap, recipient: bob.keys)
        let replay = try GiftWrap.wrap(rumor: original.rumor, sender: alice.keys, recipient: bob.publicKey, now: BurrowNode.now(), rng: &rng)
        var report = SyncReport()
        bob.handleGiftWrap(replay, report: &report)
        XCTAssertTrue(report.errors.contains { $0.reason.contains("duplicate welcome") }, "\(report.errors)")

        // A welcome naming a KeyPackage Bob never published (made for his key elsewhere).
        let foreignBundle = try MarmotProfile.keyPackage(for: bob.publicKey, now: BurrowNode.now(), using: &rng)
        let content = try KeyPackageEventContent(keyPackage: foreignBundle.keyPackage, relays: [try RelayURL(relay.url)], using: &rng)
        let foreignEvent = try KeyPackageEvent.verify(try content.sign(keys: bob.keys, createdAt: BurrowNode.now(), rng: &rng).event,
                                                      now: BurrowNode.now())
        let (_, welcomes) = try MarmotGroup.create(creator: alice.publicKey, name: "Trap", description: "", admins: [],
                                                   relays: [try RelayURL(relay.url)], invitees: [foreignEvent], now: BurrowNode.now(), using: &rng)
        let trap = try GiftWrap.wrap(rumor: welcomes[0].rumor, sender: alice.keys, recipient: bob.publicKey, now: BurrowNode.now(), rng: &rng)
        report = SyncReport()
        bob.handleGiftWrap(trap, report: &report)
        XCTAssertTrue(report.errors.contains { $0.reason.contains("never published") }, "\(report.errors)")

        // A gift wrap that is not for us, and one whose content is garbage.
        let notOurs = try GiftWrap.wrap(rumor: original.rumor, sender: alice.keys, recipient: alice.publicKey, now: BurrowNode.now(), rng: &rng)
        let garbage = try Event.sign(kind: Kind.giftWrap, content: "garbage", tags: [["p", bob.publicKey.hex]], createdAt: BurrowNode.now(),
                                     keys: Keys.generate(using: &rng), rng: &rng)
        report = SyncReport()
        bob.handleGiftWrap(notOurs, report: &report)
        bob.handleGiftWrap(garbage, report: &report)
        XCTAssertEqual(report.errors.count, 2)

        XCTAssertEqual(try fingerprint(bob), before)
        XCTAssertTrue(try bob.groups.invites().isEmpty, "no hostile welcome is listed")
        XCTAssertEqual(try bob.groups.group(gid).state, "active")
    }
}

/// A commit of ours that loses its epoch is rolled back and its intent applied again on top
/// of the winner; a member whose missed commits fell out of the 45-day window is told so.
final class LostCommitTests: NodeRelayTestCase {

    func testOwnLosingRenameIsRolledBackAndAppliedAgain() async throws {
        let alice = try node(), bob = try node()
        let created = try await group("Start", by: alice, with: [bob], admins: [bob.publicKey])
        let id = MLSGroupID(try Hex.decode(created.mlsGroupID))

        // Both admins commit at epoch 1 without seeing each other; Bob's is older, so it wins.
        let mine = try await alice.groups.commit(id, timeout: timeout, intent: .rename(name: "Alice's", description: nil)) { group, now, rng in
            var data = group.data
            data.name = "Alice's"
            return try group.updateData(data, committer: alice.publicKey, now: now, using: &rng)
        }
        XCTAssertEqual(mine.epoch, 2)
        _ = try await bob.groups.commit(id, timeout: timeout) { group, now, rng in
            var data = group.data
            data.name = "Bob's"
            return try group.updateData(data, committer: bob.publicKey, now: now - 10, using: &rng)
        }

        // Alice rolls back to Bob's branch, then renames again on top of it.
        _ = try await alice.sync(timeout: timeout)
        let afterAlice = try alice.groups.group(created.mlsGroupID)
        XCTAssertEqual(afterAlice.name, "Alice's")
        XCTAssertEqual(afterAlice.epoch, 3)
        _ = try await bob.sync(timeout: timeout)
        let afterBob = try bob.groups.group(created.mlsGroupID)
        XCTAssertEqual(afterBob.name, "Alice's")
        XCTAssertEqual(afterBob.epoch, 3)
        _ = try await bob.groups.chat(created.mlsGroupID, text: "same branch", timeout: timeout)
        _ = try await alice.sync(timeout: timeout)
        XCTAssertTrue(try alice.groups.messages(created.mlsGroupID, limit: nil).contains { $0.text == "same branch" })
    }

    /// Back after a long absence: thousands of events are caught up in order, each once, in
    /// windows of at most `catchUpBatch` events.
    func testCatchUpOnThousandsOfEventsInBoundedWindows() async throws {
        let alice = try node(), bob = try node()
        let created = try await group("Busy", by: alice, with: [bob])
        // At most 200 a second: NIP-01 cannot page through more events of one second than a
        // relay returns per query (LocalRelay: 500), so no real backlog is that dense.
        let count = 2_500
        var second = BurrowNode.now()
        var inSecond = 0
        for index in 0..<count {
            if inSecond == 200 {
                while BurrowNode.now() == second { try await Task.sleep(for: .milliseconds(20)) }
            }
            if BurrowNode.now() != second { second = BurrowNode.now(); inSecond = 0 }
            inSecond += 1
            _ = try await alice.groups.send(MLSGroupID(try Hex.decode(created.mlsGroupID)), rumor: {
                try InnerEvent.chat("message \(index)", author: alice.publicKey, createdAt: $0)
            }, timeout: timeout)
        }
        let report = try await bob.sync(timeout: timeout)
        XCTAssertEqual(report.messages, count)
        XCTAssertTrue(report.errors.isEmpty, "\(report.errors.prefix(3))")
        XCTAssertLessThanOrEqual(bob.groups.largestCatchUpBatch, GroupService.catchUpBatch)
        let texts = try bob.groups.messages(created.mlsGroupID, limit: nil).compactMap(\.text)
        XCTAssertEqual(texts.count, count)
        XCTAssertEqual(Set(texts).count, count)
        let again = try await bob.sync(timeout: timeout)
        XCTAssertEqual(again.messages, 0)
    }

    /// Of three relays, one serves forged copies of the group's events and one missed them
    /// (stale): the truthful one decides, every message arrives once, the forgeries never
    /// reach the pipeline.
    func testALyingAndAStaleRelayAreOutvoted() async throws {
        let alice = try node(), bob = try node()
        let created = try await group("Relays", by: alice, with: [bob])
        for index in 1...3 { _ = try await alice.groups.chat(created.mlsGroupID, text: "truth \(index)", timeout: timeout) }

        let events = try await alice.gateway.fetchEvents(Filter(kinds: [MarmotKind.groupEvent], tags: ["h": [created.nostrGroupID]]),
                                                 from: [relay.url], timeout: timeout)
        let genuine = try XCTUnwrap(events.first)
        let forged = genuine.jsonString.replacingOccurrences(of: "\"content\":\"", with: "\"content\":\"AAAA")
        var steps: [[String: Any]] = []
        for _ in 0..<12 {
            steps += [["await": "REQ"], ["text": "[\"EVENT\",\"%SUB%\",\(forged)]"], ["text": "[\"EOSE\",\"%SUB%\"]"]]
        }
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-liar-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: steps).write(to: script)
        defer { try? FileManager.default.removeItem(at: script) }
        let liar = try PeerProcess(executable: Fixtures.venvPython,
                                   arguments: [Fixtures.peerScript("hostile_ws.py").path, "--script", script.path, "--lifetime", "120"])
        defer { liar.stop() }
        let liarURL = String(try await liar.waitForLine(prefix: "READY ", timeout: .seconds(20)).dropFirst("READY ".count))
        let stale = try await RelayProcess.start(RelayProcess.Options(notesPerMinute: 10_000))
        defer { stale.stop() }
        try bob.addRelays([stale.url, liarURL])

        let report = try await bob.sync(timeout: timeout)
        XCTAssertTrue(report.errors.isEmpty, "\(report.errors)")
        XCTAssertEqual(report.messages, 3)
        let texts = try bob.groups.messages(created.mlsGroupID, limit: nil).compactMap(\.text)
        XCTAssertEqual(texts.filter { $0.hasPrefix("truth") }.sorted(), ["truth 1", "truth 2", "truth 3"])
        XCTAssertTrue(liar.lines.contains { $0.hasPrefix("RECV [\"REQ\"") }, "the lying relay was asked")
    }

    /// Retention: five rollback snapshots and five past epochs at most; after a sync the
    /// write-ahead log is checkpointed and truncated (no stale copies of deleted secrets).
    func testRetentionWindowsAndTruncatedLog() async throws {
        let alice = try node(), bob = try node()
        _ = try await bob.groups.publishKeyPackage(timeout: timeout)
        let created = try await alice.groups.createGroup(name: "Keep", description: "", invitees: [bob.publicKey], admins: [], timeout: timeout)
        for _ in 0..<8 { _ = try await alice.groups.selfUpdate(created.mlsGroupID, timeout: timeout) }
        let id = MLSGroupID(try Hex.decode(created.mlsGroupID))
        let (snapshots, retained) = try alice.store.transaction { tx in
            (try tx.snapshots.list(mlsGroupID: id.bytes), try alice.groups.loadGroup(mlsGroupID: id, in: tx).group.mls.retainedEpochs)
        }
        XCTAssertEqual(snapshots.count, MarmotGroup.snapshotRetention)
        XCTAssertEqual(snapshots.map(\.epoch), [4, 5, 6, 7, 8])
        XCTAssertLessThanOrEqual(retained.count, 6)
        XCTAssertEqual(retained.max(), 9)
        _ = try await alice.sync(timeout: timeout)
        let wal = alice.home.appendingPathComponent("store.db-wal")
        let size = (try? FileManager.default.attributesOfItem(atPath: wal.path)[.size] as? NSNumber)?.intValue ?? 0
        XCTAssertEqual(size, 0, "the log was truncated")
    }

    func testMissedCommitsPastTheWindowMarkTheGroupStale() async throws {
        let alice = try node(), bob = try node()
        let created = try await group("Window", by: alice, with: [bob])
        let nostrID = try Hex.decode(created.nostrGroupID)
        var rng = SystemRandomNumberGenerator()
        // A commit older than 45 days (refused), and what came after it (unplaceable).
        let old = try Event.sign(kind: MarmotKind.groupEvent, content: StrictBase64Probe.valid(200), tags: [["h", created.nostrGroupID]],
                                 createdAt: BurrowNode.now() - 50 * 86_400, keys: Keys.generate(using: &rng), rng: &rng)
        let later = try Event.sign(kind: MarmotKind.groupEvent, content: StrictBase64Probe.valid(300), tags: [["h", Hex.encode(nostrID)]],
                                   createdAt: BurrowNode.now() + 5, keys: Keys.generate(using: &rng), rng: &rng)
        var report = SyncReport()
        bob.groups.processGroupEvents([old, later], report: &report)
        XCTAssertTrue(report.errors.contains { $0.reason.contains("re-add") }, "\(report.errors)")
        XCTAssertEqual(try bob.groups.group(created.mlsGroupID).state, "stale")
    }
}

/// Base64 of `count` random-looking bytes (valid encoding, meaningless content).
enum StrictBase64Probe {
    static func valid(_ count: Int) -> String {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }).base64EncodedString()
    }
}

/// Nodes in short temporary homes on one LocalRelay, closed and removed after each test.
class NodeRelayTestCase: XCTestCase {
    var relay: RelayProcess!
    var homes: [URL] = []
    var nodes: [BurrowNode] = []
    let timeout: Duration = .seconds(5)

    override func setUp() async throws {
        relay = try await RelayProcess.start(RelayProcess.Options(notesPerMinute: 10_000))
    }

    override func tearDown() async throws {
        for node in nodes {
            await node.gateway.closeConnections()
            node.close()
        }
        relay?.stop()
        for home in homes { try? FileManager.default.removeItem(at: home) }
    }

    func node() throws -> BurrowNode {
        let home = try makeShortHome()
        homes.append(home)
        try FileManager.default.removeItem(at: home)
        let node = try BurrowNode.initialize(home: home, passphrase: Array("node test".utf8), kdfMemoryMiB: 8, importing: nil)
        nodes.append(node)
        try node.addRelays([relay.url])
        return node
    }

    /// `admin` creates NAME with `members`, who publish a KeyPackage first, then sync and accept
    /// the welcome: every member is in at the creation epoch.
    func group(_ name: String, by admin: BurrowNode, with members: [BurrowNode], admins: [PublicKey] = []) async throws -> GroupView {
        for member in members { _ = try await member.groups.publishKeyPackage(timeout: timeout) }
        let view = try await admin.groups.createGroup(name: name, description: "", invitees: members.map(\.publicKey), admins: admins,
                                               timeout: timeout)
        for member in members {
            _ = try await member.sync(timeout: timeout)
            _ = try await member.groups.acceptInvite(try XCTUnwrap(try member.groups.invites().first).id, timeout: timeout)
        }
        return view
    }
}
