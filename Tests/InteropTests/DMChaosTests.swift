import Foundation
import Nostr
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// Two homes exchange 1,000 direct messages through rust-nostr's LocalRelay behind the chaos
/// proxy, which drops 20% of the events it delivers, delays and reorders a third of them and
/// duplicates some. Every message arrives exactly once, in its conversation, in order of
/// sending once sorted; frames overtaking each other exercise the ratchet's skipped keys.
final class DMChaosTests: SeededTestCase {
    override var defaultSeed: UInt64 { 13 }

    var relay: RelayProcess!
    var chaos: ChaosRelay!
    var homes: [URL] = []
    var nodes: [BurrowNode] = []

    override func setUp() async throws {
        try await super.setUp()
        relay = try await RelayProcess.start(RelayProcess.Options(notesPerMinute: 1_000_000))
        chaos = try await ChaosRelay.start(upstream: relay.url, options: ChaosRelay.Options(
            seed: Int(truncatingIfNeeded: seed % 1_000_000), drop: 0.2, duplicate: 0.1, delay: 0.33, maxDelayMilliseconds: 150))
    }

    override func tearDown() async throws {
        for node in nodes {
            await node.gateway.closeConnections()
            node.close()
        }
        chaos?.stop()
        relay?.stop()
        for home in homes { try? FileManager.default.removeItem(at: home) }
    }

    func makeNode() throws -> BurrowNode {
        let home = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-dm-\(UUID().uuidString.prefix(8))")
        homes.append(home)
        let node = try BurrowNode.initialize(home: home, passphrase: Array("dm chaos".utf8), kdfMemoryMiB: 8, importing: nil)
        nodes.append(node)
        try node.addRelays([chaos.url])
        return node
    }

    func testAThousandMessagesThroughALossyReorderingRelayArriveExactlyOnce() async throws {
        let timeout: Duration = .seconds(5)
        let alice = try makeNode(), bob = try makeNode()
        let aliceCard = try await alice.directMessages.contactCard(nickname: "Alice", relays: nil, timeout: timeout)
        let bobCard = try await bob.directMessages.contactCard(nickname: "Bob", relays: nil, timeout: timeout)
        _ = try alice.directMessages.addContact(card: bobCard.card, name: "Bob")
        _ = try bob.directMessages.addContact(card: aliceCard.card, name: "Alice")

        var sentByAlice: [String] = [], sentByBob: [String] = []
        let perSide = 500, batch = 50
        var round = 0
        while sentByAlice.count < perSide || sentByBob.count < perSide {
            for _ in 0..<batch where sentByAlice.count < perSide {
                let text = "a\(sentByAlice.count)"
                _ = try await alice.sendDM(to: "Bob", text: text, timeout: .milliseconds(200))
                sentByAlice.append(text)
            }
            for _ in 0..<batch where sentByBob.count < perSide {
                let text = "b\(sentByBob.count)"
                _ = try await bob.sendDM(to: "Alice", text: text, timeout: .milliseconds(200))
                sentByBob.append(text)
            }
            _ = try await bob.sync(timeout: timeout)
            _ = try await alice.sync(timeout: timeout)
            round += 1
        }
        // The proxy keeps dropping a fifth of what it delivers; what it dropped is still on the
        // relay, and every sync asks again.
        func received(_ node: BurrowNode) throws -> [String] {
            try node.directMessages.readDMs(contact: nil, limit: nil).filter { $0.direction == "in" }.map(\.text)
        }
        var syncs = 0
        while (try received(alice).count < perSide || received(bob).count < perSide), syncs < 40 {
            _ = try await bob.sync(timeout: timeout)
            _ = try await alice.sync(timeout: timeout)
            syncs += 1
        }
        let atAlice = try received(alice), atBob = try received(bob)
        XCTAssertEqual(atBob.count, perSide, "Bob got \(atBob.count) of \(perSide)")
        XCTAssertEqual(atAlice.count, perSide, "Alice got \(atAlice.count) of \(perSide)")
        XCTAssertEqual(Set(atBob), Set(sentByAlice), "exactly Alice's messages, each once")
        XCTAssertEqual(Set(atAlice), Set(sentByBob))
        XCTAssertEqual(atBob.count, Set(atBob).count, "no message twice")
        // Every message of ours was delivered (a receipt came back) or at least sent.
        let statuses = Set(try alice.directMessages.readDMs(contact: "Bob", limit: nil).filter { $0.direction == "out" }.map(\.status))
        XCTAssertTrue(statuses.isSubset(of: ["sent", "delivered"]), "\(statuses)")
        let stats = chaos.stats
        XCTAssertGreaterThan(stats["dropped"] ?? 0, 50, "the proxy dropped events: \(stats)")
        XCTAssertGreaterThan(stats["delayed"] ?? 0, 50, "the proxy reordered events: \(stats)")
        print("DM chaos: \(round) rounds, \(syncs) extra syncs; proxy \(stats)")
    }
}
