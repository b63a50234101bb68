import Foundation
import Marmot
import Mesh
import Nostr
import Pigeon
import Store
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// The one inbound pipeline without any relay (issue 21, item 2): each kind a stranger can
/// send — gift wraps holding a DM frame, a join request, a welcome or anything else; group
/// events; profiles; mesh events and mesh DM frames — goes through `receive`, which only
/// reads and writes the store. The node's relay is a TCP listener that counts connections:
/// none may be made while a unit is received.
final class InboundPipelineTests: XCTestCase {
    var homes: [URL] = []
    var nodes: [BurrowNode] = []
    var listener: Int32 = -1
    var rng = SplitMix64(seed: 0x1B0_0D)

    override func setUp() async throws {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(listener, 16), 0)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        relayURL = "ws://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
    }

    override func tearDown() async throws {
        for node in nodes { node.close() }
        for home in homes { try? FileManager.default.removeItem(at: home) }
        close(listener)
    }

    var relayURL = ""

    /// Connections made to the node's relay so far.
    func connectionsMade() -> Int {
        var count = 0
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return count }
            close(fd)
            count += 1
        }
    }

    func node() throws -> BurrowNode {
        let home = try makeShortHome()
        homes.append(home)
        try FileManager.default.removeItem(at: home)
        let node = try BurrowNode.initialize(home: home, passphrase: Array("inbound".utf8), kdfMemoryMiB: 8, importing: nil)
        nodes.append(node)
        try node.addRelays([relayURL])
        return node
    }

    var now: Int64 { Int64(Date().timeIntervalSince1970) }

    func wrap(_ rumorKind: Int, content: String, from sender: Keys, to recipient: BurrowNode) throws -> Event {
        let rumor = try Rumor(pubkey: sender.publicKey, createdAt: now, kind: rumorKind, tags: [], content: content)
        return try GiftWrap.wrap(rumor: rumor, sender: sender, recipient: recipient.publicKey, now: now, rng: &rng)
    }

    /// One unit through the pipeline as the process's writer (no mailbox here).
    func receive(_ node: BurrowNode, _ unit: InboundUnit) async -> InboundOutcome {
        await node.exclusively { node.receive(unit, as: $0) }
    }

    func deletions(_ outcome: InboundOutcome) -> [EventID] {
        outcome.effects.flatMap { effect -> [EventID] in if case .flushDMs(let ids) = effect { return ids } else { return [] } }
    }

    func bridged(_ outcome: InboundOutcome, to target: InboundEffect.BridgeTarget) -> [EventID] {
        outcome.effects.compactMap { effect -> EventID? in
            guard case .bridge(let event, let to) = effect else { return nil }
            switch (to, target) {
            case (.relays, .relays), (.mesh, .mesh): return event.id
            default: return nil
            }
        }
    }

    func testRoutesByKind() {
        XCTAssertEqual(InboundPipeline.route(rumorKind: NostrCarrier.rumorKind), .dmFrame)
        XCTAssertEqual(InboundPipeline.route(rumorKind: JoinRequestRumor.kind), .joinRequest)
        XCTAssertEqual(InboundPipeline.route(rumorKind: MarmotKind.welcome), .welcome)
        XCTAssertEqual(InboundPipeline.route(rumorKind: 14), .ignored(kind: 14))
    }

    /// Gift wraps: junk, an unknown rumor kind, a forged welcome, a join request for no group of
    /// ours, a garbage DM frame. Each is recorded once with its reason (never twice), leaves
    /// our mailbox, and lists nothing.
    func testHostileGiftWrapsAreRecordedOnceAndDeleted() async throws {
        let bob = try node()
        let stranger = Keys.generate(using: &rng)
        let junk = try Event.sign(kind: Kind.giftWrap, content: "not nip-44", tags: [["p", bob.publicKey.hex]], createdAt: now,
                                  keys: stranger, rng: &rng)
        let chatRumor = try wrap(14, content: "hi", from: stranger, to: bob)
        let forgedWelcome = try wrap(MarmotKind.welcome, content: "AAAA", from: stranger, to: bob)
        let bogusKeyPackage = try Event.sign(kind: MarmotKind.keyPackage, content: "00", tags: [], createdAt: now, keys: stranger, rng: &rng)
        let request = try JoinRequestRumor.build(
            JoinRequest(groupID: Hex.encode(rng.randomBytes(32)), pubkey: stranger.publicKey, keyPackage: bogusKeyPackage, name: "Mallory"),
            createdAt: now)
        let joinRequest = try GiftWrap.wrap(rumor: request, sender: stranger, recipient: bob.publicKey, now: now, rng: &rng)
        let badFrame = try wrap(NostrCarrier.rumorKind, content: Data([0x01, 0x02, 0x03]).base64EncodedString(), from: stranger, to: bob)
        let wraps = [junk, chatRumor, forgedWelcome, joinRequest, badFrame]

        let outcome = await receive(bob, .relayEvents(wraps))
        XCTAssertEqual(Set(deletions(outcome)), Set(wraps.map(\.id)), "every processed wrap leaves the mailbox")
        XCTAssertEqual(Set(outcome.report.errors.map(\.eventID)), Set([junk, forgedWelcome, joinRequest, badFrame].map(\.id.hex)))
        XCTAssertTrue(outcome.report.updates.allSatisfy { if case .error = $0 { return true } else { return false } },
                      "only the refusals are reported: \(outcome.report.updates)")
        let outcomes = try bob.store.transaction { tx in try wraps.map { try tx.processedEvents.get(eventID: $0.id.bytes)?.outcome } }
        XCTAssertEqual(outcomes[1], "ignored rumor kind 14")
        for (index, recorded) in outcomes.enumerated() where index != 1 {
            XCTAssertTrue(recorded?.hasPrefix("rejected: ") ?? false, "\(index): \(String(describing: recorded))")
        }
        XCTAssertTrue(try bob.groups.invites().isEmpty)
        XCTAssertTrue(try bob.groups.joinRequests(group: nil).isEmpty)

        let again = await receive(bob, .relayEvents(wraps))
        XCTAssertTrue(again.report.errors.isEmpty, "a processed wrap is not decided twice")
        XCTAssertEqual(Set(deletions(again)), Set(wraps.map(\.id)), "and still leaves the mailbox")
        XCTAssertEqual(connectionsMade(), 0, "receiving touched no relay")
    }

    /// Group events: junk for no group of ours is refused with a reason and never bridged; a
    /// recent group event from the relays is passed to the mesh, one from the mesh is passed
    /// to the relays only once applied.
    func testHostileGroupEventsAreRefusedAndNotBridgedToRelays() async throws {
        let bob = try node()
        let stranger = Keys.generate(using: &rng)
        let content = Data(rng.randomBytes(300)).base64EncodedString()
        let junk = try Event.sign(kind: MarmotKind.groupEvent, content: content, tags: [["h", Hex.encode(rng.randomBytes(32))]],
                                  createdAt: now, keys: stranger, rng: &rng)
        let fromRelays = await receive(bob, .relayEvents([junk]))
        XCTAssertTrue(fromRelays.report.errors.first?.reason.contains("no group of ours") ?? false, "\(fromRelays.report.errors)")
        XCTAssertFalse(fromRelays.resubscribe)
        XCTAssertEqual(bridged(fromRelays, to: .mesh), [junk.id], "a recent group event from relays goes on to the mesh")

        let fromMesh = await receive(bob, .meshEvent(junk))
        XCTAssertTrue(bridged(fromMesh, to: .relays).isEmpty, "what we did not apply is not ours to publish")
        XCTAssertTrue(fromMesh.report.errors.isEmpty, "an event already refused is not decided again")

        let old = try Event.sign(kind: MarmotKind.groupEvent, content: content, tags: [["h", Hex.encode(rng.randomBytes(32))]],
                                 createdAt: now - 2 * InboundPipeline.meshBridgeWindow, keys: stranger, rng: &rng)
        let oldOutcome = await receive(bob, .relayEvents([old]))
        XCTAssertTrue(bridged(oldOutcome, to: .mesh).isEmpty, "older group events stay off the mesh")
        XCTAssertEqual(connectionsMade(), 0)
    }

    /// Profiles: a relay may push anyone's kind 0; only the authors the live filter follows are kept.
    func testProfilesOfStrangersAreNotKept() async throws {
        let bob = try node()
        let stranger = Keys.generate(using: &rng)
        let profile = try Event.sign(kind: 0, content: #"{"name":"Mallory"}"#, tags: [], createdAt: now, keys: stranger, rng: &rng)
        _ = await receive(bob, .relayEvents([profile]))
        XCTAssertNil(try bob.store.transaction { try $0.profiles.get(pubkey: stranger.publicKey.bytes) })
        bob.profiles.liveProfileAuthors = [stranger.publicKey]
        _ = await receive(bob, .relayEvents([profile]))
        XCTAssertNotNil(try bob.store.transaction { try $0.profiles.get(pubkey: stranger.publicKey.bytes) }, "a followed author's is")
        let other = try Event.sign(kind: 7, content: "+", tags: [], createdAt: now, keys: stranger, rng: &rng)
        let otherOutcome = await receive(bob, .relayEvents([other]))
        XCTAssertTrue(otherOutcome.effects.isEmpty, "kinds we never read are dropped")
        XCTAssertEqual(connectionsMade(), 0)
    }

    /// Mesh DM frames: garbage from anyone in range is refused frame by frame with no reply;
    /// the queue holds at most 1,024 frames (the oldest go).
    func testMeshDMFramesAreBoundedAndJunkGetsNoReply() async throws {
        let bob = try node()
        let sender = MeshID(0x0102_0304_0506_0708)
        for index in 0..<1_030 { bob.meshBridge.enqueueMeshDM([0x01, UInt8(truncatingIfNeeded: index)] + rng.randomBytes(40), from: sender) }
        let outcome = await receive(bob, .meshDMFrames)
        XCTAssertEqual(outcome.report.errors.count, 1_024, "the queue keeps the newest 1,024 frames")
        XCTAssertFalse(outcome.effects.contains { if case .meshReplies = $0 { return true } else { return false } })
        let drained = await receive(bob, .meshDMFrames)
        XCTAssertTrue(drained.report.errors.isEmpty, "the queue is drained")
        XCTAssertEqual(connectionsMade(), 0)
    }
}
