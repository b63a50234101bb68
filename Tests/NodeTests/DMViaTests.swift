import Foundation
import Logging
import Nostr
import Store
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// `dm send CONTACT --via nostr|mesh` chooses the way for that contact's frames only. The outbox
/// it flushes also holds other contacts' frames (a handshake owed to the relays, receipts,
/// queued messages), and those go the default way: onto the mesh when it is up *and* to the
/// relays, which alone make them `sent`.
final class DMViaTests: NodeRelayTestCase {
    /// Three homes; Alice holds Bob's and Carol's cards, they hold hers.
    func trio() async throws -> (alice: BurrowNode, bob: BurrowNode, carol: BurrowNode) {
        let alice = try node(), bob = try node(), carol = try node()
        let aliceCard = try await alice.directMessages.contactCard(nickname: "Alice", relays: nil, timeout: timeout)
        for (friend, name) in [(bob, "Bob"), (carol, "Carol")] {
            let card = try await friend.directMessages.contactCard(nickname: name, relays: nil, timeout: timeout)
            XCTAssertEqual(try alice.directMessages.addContact(card: card.card, name: nil).name, name)
            XCTAssertEqual(try friend.directMessages.addContact(card: aliceCard.card, name: nil).name, "Alice")
        }
        return (alice, bob, carol)
    }

    /// Alice's handshake to Carol is owed to the relays (they were down when she wrote); then she
    /// writes to Bob `--via mesh`. Bob's frames go by the mesh alone; Carol's still reach her
    /// relay, so Carol gets the message. Before, the flush `--via mesh` ran took every due frame
    /// to the mesh alone and marked Carol's `sent` though no relay held it: Carol never heard.
    func testViaMeshRoutesOnlyTheNamedContactsFrames() async throws {
        let (alice, bob, carol) = try await trio()
        // Alice's radio: a UDP link to a port nobody listens on. The mesh takes frames (it stores
        // and forwards them), but nobody is near.
        let ports = try LoopbackPorts.free(2)
        let mesh = try await MeshService.start(try MeshSetup.parse(mesh: "udp:\(ports[0]),\(ports[1])"),
                                               dmIdentityKeys: alice.directMessages.meshDMIdentityKeys(), logger: Logger(label: "test"))
        alice.meshBridge.attachMesh(mesh)
        addTeardownBlock { await mesh.stop() }

        relay.stop()
        let toCarol = try await alice.sendDM(to: "Carol", text: "hi Carol", timeout: .milliseconds(300))
        XCTAssertEqual(toCarol.status, "queued")
        let carolKey = try Hex.decode(try alice.directMessages.contact("Carol").identity)
        let owed = try alice.store.transaction { tx in try tx.dmOutbox.pending().filter { $0.contact == carolKey } }
        XCTAssertEqual(owed.count, 1, "handshake1 to Carol waits for a relay")
        XCTAssertTrue(owed.allSatisfy { $0.state == .pending })
        try await relay.restart()
        await alice.gateway.closeConnections()  // a fresh connection to the relay that is back

        let toBob = try await alice.sendDM(to: "Bob", text: "over the mesh", via: .mesh, timeout: .milliseconds(500))
        XCTAssertEqual(toBob.status, "queued", "Bob is not near: the handshake went out on the mesh, unanswered")
        let bobKey = try Hex.decode(try alice.directMessages.contact("Bob").identity)
        let owedToBob = try alice.store.transaction { tx in try tx.dmOutbox.pending().filter { $0.contact == bobKey } }
        XCTAssertTrue(owedToBob.isEmpty, "the mesh took Bob's handshake: \(owedToBob)")

        // Bob's frames stayed off the relays: his sync finds nothing from Alice to answer.
        let bobSync = try await bob.sync(timeout: timeout)
        XCTAssertTrue(bobSync.errors.isEmpty, "\(bobSync.errors)")
        let bobFrames = try bob.store.transaction { tx in
            try [StoredDMFrame.State.pending, .sent, .failed].map { try tx.dmOutbox.count(state: $0) }.reduce(0, +)
        }
        XCTAssertEqual(bobFrames, 0, "--via mesh kept Bob's handshake off the relays: Bob answered nothing")

        // Carol's handshake reached her relay: the handshake completes and the message arrives.
        _ = try await carol.sync(timeout: timeout)  // handshake1 → handshake2
        _ = try await alice.sync(timeout: timeout)  // handshake2 → handshake3 + the message
        _ = try await carol.sync(timeout: timeout)
        XCTAssertEqual(try carol.directMessages.readDMs(contact: "Alice", limit: nil).map(\.text), ["hi Carol"],
                       "Carol's frames went to the relays, not to the mesh alone")
        XCTAssertEqual(try alice.directMessages.readDMs(contact: "Carol", limit: nil).first?.status, "sent")
    }
}
