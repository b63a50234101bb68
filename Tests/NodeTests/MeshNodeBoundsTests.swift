import Foundation
import Logging
import MLS
import Marmot
import Nostr
import Store
import Synchronization
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// Issue 19, the node's side of the mesh: what a stranger within radio range can make the node
/// publish, queue or admit. No relay runs: every home names an address nothing listens on, so
/// relay waits fail at once and groups work offline, as on the mesh.
final class MeshNodeBoundsTests: XCTestCase {
    var homes: [URL] = []
    var nodes: [BurrowNode] = []
    let timeout: Duration = .seconds(1)
    var rng = SystemRandomNumberGenerator()
    /// Nothing listens on port 9 (discard): a connection is refused at once.
    let deadRelay = "ws://127.0.0.1:9"

    override func tearDown() async throws {
        for node in nodes {
            await node.closeConnections()
            node.close()
        }
        for home in homes { try? FileManager.default.removeItem(at: home) }
    }

    func node() throws -> BurrowNode {
        let home = try makeShortHome()
        homes.append(home)
        try FileManager.default.removeItem(at: home)
        let node = try BurrowNode.initialize(home: home, passphrase: Array("mesh bounds".utf8), kdfMemoryMiB: 8, importing: nil)
        nodes.append(node)
        try node.addRelays([deadRelay])
        return node
    }

    /// Alice's group, made offline; Bob admitted through the nearby path and joined.
    func family() async throws -> (alice: BurrowNode, bob: BurrowNode, id: MLSGroupID) {
        let alice = try node(), bob = try node()
        let view = try await alice.createGroup(name: "Family", description: "", invitees: [], admins: [], timeout: timeout)
        let id = try alice.groupID(view.mlsGroupID)
        let keyPackage = try bob.stageKeyPackage().keyPackage
        let request = JoinRequest(groupID: id.hex, pubkey: bob.publicKey, keyPackage: keyPackage, name: nil)
        let (wrap, _) = try await alice.admitNearby(request, to: id, openedAt: BurrowNode.now() - 5, timeout: timeout)
        var report = SyncReport()
        bob.handleGiftWrap(wrap, report: &report)
        let invite = try XCTUnwrap(try bob.invites().first, "\(report.errors)")
        _ = try await bob.acceptInvite(invite.id, timeout: timeout, relaysRequired: false)
        return (alice, bob, id)
    }

    // MARK: Finding 9: bridge to relays only what the pipeline accepted

    /// Anyone nearby can sign a kind-445 with our group's `h` tag: it must not make us publish
    /// it to our relays. A group event the pipeline applied is bridged.
    func testOnlyAcceptedGroupEventsAreBridgedToRelays() async throws {
        let (alice, bob, id) = try await family()
        let nostrID = try bob.group(id.hex).nostrGroupID
        let junk = try Event.sign(kind: MarmotKind.groupEvent, content: StrictBase64Probe.valid(200),
                                  tags: [["h", nostrID], ["encoding", "base64"]], createdAt: BurrowNode.now() + 5,
                                  keys: Keys.generate(using: &rng), rng: &rng)
        let (junkReport, _) = await bob.handleMeshEvent(junk, timeout: timeout)
        XCTAssertFalse(junkReport.errors.isEmpty, "the pipeline refused it")
        XCTAssertEqual(bob.meshBridge.started, 0, "a refused event is not passed on to the relays")

        let staged = try alice.stageMessage(id) { try InnerEvent.chat("over the mesh", author: alice.publicKey, createdAt: $0) }
        let (report, _) = await bob.handleMeshEvent(staged.event, timeout: timeout)
        XCTAssertEqual(report.messages, 1, "\(report.errors)")
        XCTAssertEqual(bob.meshBridge.started, 1, "an applied group event of ours is bridged")
        // The same event again (a replay): already processed, not bridged twice.
        _ = await bob.handleMeshEvent(staged.event, timeout: timeout)
        XCTAssertEqual(bob.meshBridge.started, 1)
    }

    /// At most `MeshBridge.maxConcurrent` publishes run at once; the rest are refused and
    /// counted, and a slot frees when a publish ends.
    func testBridgePublishesAreBounded() async throws {
        let bridge = MeshBridge()
        let released = Mutex(0)
        // Each publish waits until the test lets it end.
        let waiters = (0..<MeshBridge.maxConcurrent).map { _ in AsyncStream<Void>.makeStream() }
        for (index, waiter) in waiters.enumerated() {
            XCTAssertTrue(bridge.launch {
                for await _ in waiter.stream { break }
                released.withLock { $0 += 1 }
            }, "publish \(index) starts")
        }
        XCTAssertFalse(bridge.launch {}, "no slot left")
        XCTAssertEqual(bridge.refused, 1)
        XCTAssertEqual(bridge.running, MeshBridge.maxConcurrent)
        waiters[0].continuation.yield()
        let deadline = ContinuousClock.now + .seconds(5)
        while bridge.running == MeshBridge.maxConcurrent, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertEqual(bridge.running, MeshBridge.maxConcurrent - 1)
        XCTAssertEqual(released.withLock { $0 }, 1)
        XCTAssertTrue(bridge.launch {}, "a freed slot takes the next publish")
        for waiter in waiters { waiter.continuation.finish() }
    }

    // MARK: Finding 10: a nearby join request is bound to the joiner

    /// A code-holder could hand in someone else's KeyPackage, fetched from relays. The mesh
    /// request carries no signature of its own (mesh.md 10.4), so the inviter takes only a
    /// KeyPackage made for this invite: signed by `pubkey` (credential and event) and created
    /// after the invite opened (less clock skew). An older one is refused, typed.
    func testNearbyJoinRefusesAKeyPackageOlderThanTheInvite() async throws {
        let alice = try node(), bob = try node()
        let view = try await alice.createGroup(name: "Family", description: "", invitees: [], admins: [], timeout: timeout)
        let id = try alice.groupID(view.mlsGroupID)
        let opened = BurrowNode.now()
        // Bob's KeyPackage as relays would hold it: published an hour before the invite.
        let published = try bob.stageKeyPackage(now: opened - 3600).keyPackage
        let replayed = JoinRequest(groupID: id.hex, pubkey: bob.publicKey, keyPackage: published, name: nil)
        do {
            _ = try await alice.admitNearby(replayed, to: id, openedAt: opened, timeout: timeout)
            XCTFail("a KeyPackage older than the invite was admitted")
        } catch let refusal as NearbyRefusal {
            XCTAssertEqual(refusal.code, .keyPackageInvalid)
            XCTAssertEqual(refusal.reason, .notMadeForThisInvite)
        }
        XCTAssertFalse(try alice.group(id.hex).members.contains(bob.publicKey.hex), "nobody was added")

        // One made for the invite (as `join nearby` stages it) is admitted.
        let fresh = try bob.stageKeyPackage().keyPackage
        let request = JoinRequest(groupID: id.hex, pubkey: bob.publicKey, keyPackage: fresh, name: nil)
        let (_, added) = try await alice.admitNearby(request, to: id, openedAt: opened, timeout: timeout)
        XCTAssertTrue(added.members.contains(bob.publicKey.hex))
    }

    // MARK: Finding 11: no key in errors and warnings

    /// `no_route` names no key: the user knows whom they wrote to, a log or a screenshot need not.
    func testNoRouteNamesNoKey() async throws {
        let alice = try node(), bob = try node()
        do {
            _ = try await alice.sendDM(to: bob.publicKey.npub, text: "hi", via: .mesh, timeout: timeout)
            XCTFail("no mesh runs here")
        } catch let error as NodeError {
            guard case .noRoute(let message) = error else { return XCTFail("\(error)") }
            XCTAssertFalse(message.contains("npub1"), message)
            XCTAssertFalse(message.contains(bob.publicKey.hex), message)
            XCTAssertFalse(message.contains(String(bob.publicKey.npub.dropFirst(5).prefix(12))), message)
        }
    }
}
