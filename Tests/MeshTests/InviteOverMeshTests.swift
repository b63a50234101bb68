import Marmot
@testable import Mesh
import Nostr
import TestSupport
import XCTest

/// A nearby invite carried by real routers over the simulated radio: the inviter two hops from
/// the joiner, the node's part (checking the request, the Marmot add and gift wrap) played by
/// the test. This is the wiring the node does.
final class InviteOverMeshTests: XCTestCase {
    func testJoinTwoHopsAwayOverTheRadio() throws {
        let start = MeshFixture.now
        let topology = Topology(nodeCount: 3, edges: [Topology.Edge(0, 1), Topology.Edge(1, 2)])
        var simulation = MeshSimulation(topology: topology, seed: 21, impairment: .init(loss: 0.05, latency: 5...30))
        simulation.keepContents = true
        simulation.run(until: start + 12_000)
        var rng = SplitMix64(seed: 8)
        let admin = Keys.generate(using: &rng), joinerKeys = Keys.generate(using: &rng)
        let inviteID = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let code = InviteCode.generate(using: &rng)

        // Inviter (node 0): the mesh key must not rotate while the invite is open.
        simulation.perform(on: 0) { router, _, _ in router.inviteOpen = true }
        var host = try InviteHost(
            inviteID: inviteID, code: code, groupID: "00112233445566778899aabbccddeeff", groupName: "Family",
            expiresAt: start + 300_000, meshKey: simulation.routers[0].identity.current, keys: admin,
            auxRand: [UInt8](repeating: 1, count: 32), now: simulation.now
        )
        var joiner: JoinSession?
        var joined: JoinDoneStatus?
        var welcomed = false
        var hostActions = host.tick(now: simulation.now)
        var joinerActions: [JoinSession.Action] = []
        let keyPackage = try Event.sign(kind: 30443, content: "kp", tags: [["d", "1"]], createdAt: Int64(start / 1000), keys: joinerKeys, rng: &rng)
        // The inviter's CPace scalars, apart so that they leave `rng`'s draws as they were.
        var scalars = SplitMix64(seed: 9)

        for _ in 0..<600 where joined == nil {
            // Carry out the state machines' actions through the routers.
            let pendingHost = hostActions
            hostActions = []
            for action in pendingHost {
                switch action {
                case .beacon(let payload):
                    try simulation.perform(on: 0) { router, now, out in try router.send(type: .inviteBeacon, recipient: nil, payload: payload, now: now, actions: &out) }
                case .send(let type, let to, let payload):
                    try simulation.perform(on: 0) { router, now, out in try router.send(type: type, recipient: to, payload: payload, now: now, actions: &out) }
                case .joinRequest(let plaintext, let peer):
                    // The mesh hands the request up unread; the node reads it and says so.
                    let request = try JoinRequest.decode(plaintext)
                    XCTAssertEqual(request.pubkey, joinerKeys.publicKey)
                    XCTAssertEqual(request.keyPackage, keyPackage)
                    hostActions += host.requestRead(from: peer)
                    let giftWrap = try Event.sign(kind: 1059, content: "welcome", tags: [["p", request.pubkey.hex]],
                                                  createdAt: Int64(simulation.now / 1000), keys: Keys.generate(using: &rng), rng: &rng)
                    for case .send(let type, let to, let payload) in host.welcome(giftWrap: giftWrap.jsonBytes, to: peer, now: simulation.now) {
                        XCTAssertEqual(type, .joinWelcome)
                        try simulation.perform(on: 0) { router, now, out in try router.send(type: type, recipient: to, payload: payload, now: now, actions: &out) }
                    }
                case .joined(_, let status): joined = status
                case .attempt, .closed: break
                }
            }
            for action in joinerActions {
                if case .challengeOpened(let info) = action {
                    // The node's part: the join request for the group the challenge named.
                    let request = JoinRequest(groupID: info.groupID, pubkey: joinerKeys.publicKey, keyPackage: keyPackage, name: nil)
                    for case .send(let type, let to, let payload) in joiner?.request(request.json, now: simulation.now) ?? [] {
                        try simulation.perform(on: 2) { router, now, out in try router.send(type: type, recipient: to, payload: payload, now: now, actions: &out) }
                    }
                } else if case .send(let type, let to, let payload) = action {
                    try simulation.perform(on: 2) { router, now, out in try router.send(type: type, recipient: to, payload: payload, now: now, actions: &out) }
                } else if case .welcome(_, let inviter, _) = action {
                    XCTAssertEqual(inviter, admin.publicKey)
                    welcomed = true
                    joinerActions = joiner?.welcomeProcessed(.accepted) ?? []
                    if case .send(let type, let to, let payload)? = joinerActions.first {
                        try simulation.perform(on: 2) { router, now, out in try router.send(type: type, recipient: to, payload: payload, now: now, actions: &out) }
                    }
                }
            }
            joinerActions = []

            simulation.run(until: simulation.now + 100)
            for delivery in simulation.takeInbox(of: 2) {
                switch delivery.content {
                case .beacon(let beacon, let hops) where joiner == nil:
                    XCTAssertEqual(hops, 2, "two hops: the relay lowered TTL 2 to 1")
                    XCTAssertEqual(beacon.inviter, admin.publicKey)
                    simulation.perform(on: 2) { router, _, _ in router.inviteOpen = true }
                    var session = JoinSession(beacon: beacon, inviter: delivery.packet.sender, myID: simulation.routers[2].identity.current.id,
                                              keyPackageID: keyPackage.id)
                    joinerActions += session.attempt(code: InviteCode.display(code), now: simulation.now, using: &rng)
                    joiner = session
                case .join(let message):
                    joinerActions += joiner?.receive(message, from: delivery.packet.sender, now: simulation.now) ?? []
                default: break
                }
            }
            for delivery in simulation.takeInbox(of: 0) {
                if case .join(let message) = delivery.content {
                    hostActions += host.receive(message, from: delivery.packet.sender, now: simulation.now, using: &scalars)
                }
            }
            hostActions += host.tick(now: simulation.now)
            joinerActions += joiner?.tick(now: simulation.now) ?? []
        }
        XCTAssertTrue(welcomed)
        XCTAssertEqual(joined, .accepted)
        XCTAssertFalse(host.isOpen)
        XCTAssertTrue(simulation.takeInbox(of: 1).allSatisfy { if case .join = $0.content { return false } else { return true } },
                      "the relay in the middle is not addressed")
    }
}
