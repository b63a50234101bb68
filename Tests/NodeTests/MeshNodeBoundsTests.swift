import Foundation
import Logging
import MLS
import Marmot
import Mesh
import MeshLinks
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
            await node.gateway.closeConnections()
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
        let view = try await alice.groups.createGroup(name: "Family", description: "", invitees: [], admins: [], timeout: timeout)
        let id = try alice.groups.groupID(view.mlsGroupID)
        let keyPackage = try bob.groups.stageKeyPackage().keyPackage
        let request = JoinRequest(groupID: id.hex, pubkey: bob.publicKey, keyPackage: keyPackage, name: nil)
        let (wrap, _) = try await alice.groups.admitNearby(request, to: id, timeout: timeout)
        var report = SyncReport()
        bob.handleGiftWrap(wrap, report: &report)
        let invite = try XCTUnwrap(try bob.groups.invites().first, "\(report.errors)")
        _ = try await bob.groups.acceptInvite(invite.id, timeout: timeout, relaysRequired: false)
        return (alice, bob, id)
    }

    // MARK: Finding 9: bridge to relays only what the pipeline accepted

    /// Anyone nearby can sign a kind-445 with our group's `h` tag: it must not make us publish
    /// it to our relays. A group event the pipeline applied is bridged.
    func testOnlyAcceptedGroupEventsAreBridgedToRelays() async throws {
        let (alice, bob, id) = try await family()
        let nostrID = try bob.groups.group(id.hex).nostrGroupID
        let junk = try Event.sign(kind: MarmotKind.groupEvent, content: StrictBase64Probe.valid(200),
                                  tags: [["h", nostrID], ["encoding", "base64"]], createdAt: BurrowNode.now() + 5,
                                  keys: Keys.generate(using: &rng), rng: &rng)
        let (junkReport, _) = await bob.handleMeshEvent(junk, timeout: timeout)
        XCTAssertEqual(junkReport.messages, 0)
        XCTAssertFalse(junkReport.applied.contains(junk.id), "the pipeline did not apply it")
        XCTAssertEqual(bob.meshBridge.publisher.started, 0, "a refused event is not passed on to the relays")

        let staged = try alice.groups.stageMessage(id) { try InnerEvent.chat("over the mesh", author: alice.publicKey, createdAt: $0) }
        let (report, _) = await bob.handleMeshEvent(staged.event, timeout: timeout)
        XCTAssertEqual(report.messages, 1, "\(report.errors)")
        XCTAssertEqual(bob.meshBridge.publisher.started, 1, "an applied group event of ours is bridged")
        // The same event again (a replay): already processed, not bridged twice.
        _ = await bob.handleMeshEvent(staged.event, timeout: timeout)
        XCTAssertEqual(bob.meshBridge.publisher.started, 1)
    }

    /// At most `BridgePublisher.maxConcurrent` publishes run at once; the rest are refused and
    /// counted, and a slot frees when a publish ends.
    func testBridgePublishesAreBounded() async throws {
        let bridge = BridgePublisher()
        let released = Mutex(0)
        // Each publish waits until the test lets it end.
        let waiters = (0..<BridgePublisher.maxConcurrent).map { _ in AsyncStream<Void>.makeStream() }
        for (index, waiter) in waiters.enumerated() {
            XCTAssertTrue(bridge.launch {
                for await _ in waiter.stream { break }
                released.withLock { $0 += 1 }
            }, "publish \(index) starts")
        }
        XCTAssertFalse(bridge.launch {}, "no slot left")
        XCTAssertEqual(bridge.refused, 1)
        XCTAssertEqual(bridge.running, BridgePublisher.maxConcurrent)
        waiters[0].continuation.yield()
        let deadline = ContinuousClock.now + .seconds(5)
        while bridge.running == BridgePublisher.maxConcurrent, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertEqual(bridge.running, BridgePublisher.maxConcurrent - 1)
        XCTAssertEqual(released.withLock { $0 }, 1)
        XCTAssertTrue(bridge.launch {}, "a freed slot takes the next publish")
        for waiter in waiters { waiter.continuation.finish() }
    }

    // MARK: Finding 9: run's mesh inbox is bounded and its drops are counted

    /// `run` holds at most `capacity` deliveries; the rest are dropped and counted, and the
    /// consumer is woken once per batch, never missing one.
    func testMeshInboxIsBoundedAndWakesOncePerBatch() {
        let inbox = LiveInbox<Int>(capacity: 3)
        XCTAssertEqual(inbox.push(1), .wake)
        XCTAssertEqual(inbox.push(2), .queued)
        XCTAssertEqual(inbox.push(3), .queued)
        XCTAssertEqual(inbox.push(4), .dropped)
        XCTAssertEqual(inbox.dropped, 1)
        XCTAssertEqual(inbox.take(), 1)
        XCTAssertEqual(inbox.push(5), .queued, "the consumer is still draining")
        XCTAssertEqual([inbox.take(), inbox.take(), inbox.take()], [2, 3, 5])
        XCTAssertNil(inbox.take())
        XCTAssertEqual(inbox.push(6), .wake, "drained: the next delivery wakes it again")
        XCTAssertEqual(BurrowNode.meshInboxCapacity, 256)
    }

    /// A full queue above the router shows in `mesh status` as `dropped.queue_full`.
    func testMeshStatusCountsQueueDrops() async throws {
        let ports = try LoopbackPorts.free(2)
        let setup = try MeshSetup.parse(mesh: "udp:\(ports[0]),\(ports[1])")
        let mesh = try await MeshService.start(setup, dmIdentityKeys: [], logger: Logger(label: "test"))
        XCTAssertNil(mesh.status().counters.dropped[MeshService.queueFull])
        mesh.countDropped(MeshService.queueFull)
        mesh.countDropped(MeshService.queueFull)
        XCTAssertEqual(mesh.status().counters.dropped["queue_full"], 2)
        await mesh.stop()
    }

    /// A link's paced queue (mesh.md 7.4 budget, `LinkPacer`) holds at most 256 KiB: frames past
    /// it are dropped and counted, and what is queued leaves at the budget's pace, not at once.
    func testAPacedLinkQueueIsBoundedAndDrainsAtTheBudget() async throws {
        let ports = try LoopbackPorts.free(2)
        let sender = try await UDPLoopbackTransport.start(port: ports[0], peers: [UDPPeer(port: ports[1], mtu: 509)])
        let receiver = try await UDPLoopbackTransport.start(port: ports[1], peers: [UDPPeer(port: ports[0], mtu: 509)])
        var senderEvents = sender.events.makeAsyncIterator()
        guard case .linkUp(let link, _)? = await senderEvents.next() else { return XCTFail("no link") }
        let counted = Mutex(0)
        let counting = Task {
            for await event in receiver.events { if case .frame = event { counted.withLock { $0 += 1 } } }
        }
        let pacer = LinkPacer(transport: sender, logger: Logger(label: "test"))
        let frame = [UInt8](repeating: 0x5A, count: 509)
        // The burst (60 KiB: 120 full frames) goes at once.
        for _ in 0..<120 { pacer.transmit(frame, on: link) }
        try await Task.sleep(for: .milliseconds(300))
        let burst = counted.withLock { $0 }
        XCTAssertGreaterThanOrEqual(burst, 110)
        XCTAssertLessThanOrEqual(burst, 120)

        // With the budget spent, the queue holds 256 KiB (515 full frames); the rest is dropped.
        let fitting = LinkPacer.maximumQueuedBytes / 509
        for _ in 0..<(fitting + 100) { pacer.transmit(frame, on: link) }
        XCTAssertTrue((95...100).contains(pacer.dropped), "dropped \(pacer.dropped)")

        // Then 30 KiB a second (~60 frames): far from the 515 at once an unpaced link would send.
        try await Task.sleep(for: .seconds(1))
        let after = counted.withLock { $0 } - burst
        XCTAssertGreaterThanOrEqual(after, 30)
        XCTAssertLessThanOrEqual(after, 110, "the queue drains at the budget, not at once")
        pacer.linkDown(link)
        counting.cancel()
        await sender.stop()
        await receiver.stop()
    }

    /// Mesh warnings carry an error's kind, not its message (which can name a key).
    func testErrorKindDropsTheMessage() {
        XCTAssertEqual(MeshBridgeService.errorKind(NodeError.invalidInput("npub1abc is already a member")), "NodeError.invalidInput")
        XCTAssertFalse(MeshBridgeService.errorKind(MeshNodeError.join(code: "join_refused", message: "npub1abc")).contains("npub1"))
    }

    // MARK: Finding 10: a nearby join request is bound to the joiner

    /// A code-holder could hand in someone else's KeyPackage, fetched from relays. The mesh
    /// request carries no signature of its own (Docs/protocols/mesh.md 10.4), so the inviter takes only a
    /// KeyPackage made for this invite: signed by `pubkey` (credential and event) and created
    /// after the invite opened (less clock skew). An older one is refused, typed.
    /// 10.5: the KeyPackage must be a valid one by the request's `pubkey`; a code-holder naming
    /// someone else with its own KeyPackage (or the reverse) adds nobody.
    func testNearbyJoinRefusesAKeyPackageThatIsNotTheRequesters() async throws {
        let alice = try node(), bob = try node(), carol = try node()
        let view = try await alice.groups.createGroup(name: "Family", description: "", invitees: [], admins: [], timeout: timeout)
        let id = try alice.groups.groupID(view.mlsGroupID)
        let bobs = try bob.groups.stageKeyPackage().keyPackage
        let claimed = JoinRequest(groupID: id.hex, pubkey: carol.publicKey, keyPackage: bobs, name: nil)
        do {
            _ = try await alice.groups.admitNearby(claimed, to: id, timeout: timeout)
            XCTFail("a KeyPackage of another key was admitted")
        } catch let refusal as NearbyRefusal {
            XCTAssertEqual(refusal.code, .keyPackageInvalid)
            XCTAssertEqual(refusal.reason, .notTheRequestersKeyPackage)
        }
        let members = try alice.groups.group(id.hex).members
        XCTAssertFalse(members.contains(bob.publicKey.hex) || members.contains(carol.publicKey.hex), "nobody was added")

        let request = JoinRequest(groupID: id.hex, pubkey: bob.publicKey, keyPackage: bobs, name: nil)
        let (_, added) = try await alice.groups.admitNearby(request, to: id, timeout: timeout)
        XCTAssertTrue(added.members.contains(bob.publicKey.hex))
    }

    /// 10.5's first checks, made by the node on the plaintext the mesh hands up unread: not the
    /// join-request object, or a KeyPackage not signed by `pubkey`, is `key_package_invalid`;
    /// a request for another group is `join_refused`.
    func testNearbyRequestIsReadByTheNode() throws {
        var rng = SplitMix64(seed: 0x1080)
        let bob = Keys.generate(using: &rng), carol = Keys.generate(using: &rng)
        let keyPackage = try Event.sign(kind: 30443, content: "kp", tags: [["d", "0"]], createdAt: 1_795_000_000, keys: bob, rng: &rng)
        let group = String(repeating: "ab", count: 32)
        let request = JoinRequest(groupID: group, pubkey: bob.publicKey, keyPackage: keyPackage, name: "Bob")
        XCTAssertEqual(try GroupService.readNearbyRequest(request.json, group: group), request)
        func refusal(_ plaintext: [UInt8], group: String = group) -> NearbyRefusal? {
            do throws(NearbyRefusal) {
                _ = try GroupService.readNearbyRequest(plaintext, group: group)
                return nil
            } catch {
                return error
            }
        }
        XCTAssertEqual(refusal(Array("not json".utf8)), NearbyRefusal(.unreadable(.malformed("not a JSON object"))))
        XCTAssertEqual(refusal(Array("not json".utf8))?.code, .keyPackageInvalid)
        let claimed = JoinRequest(groupID: group, pubkey: carol.publicKey, keyPackage: keyPackage, name: nil)
        XCTAssertEqual(refusal(claimed.json)?.code, .keyPackageInvalid, "a KeyPackage signed by another key than pubkey")
        XCTAssertEqual(refusal(request.json, group: String(repeating: "cd", count: 32)), NearbyRefusal(.otherGroup))
        XCTAssertEqual(refusal(request.json, group: String(repeating: "cd", count: 32))?.code, .joinRefused)
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
