import Foundation
import Nostr
import RelayClient
import RelayServer
import XCTest
@_spi(StoreAccess) @testable import Node

/// Issue 19, finding 3, against Burrow's own relay (the mailbox of Docs/protocols/pigeon-dm.md 6.3): every
/// gift wrap to us that `sync` processed leaves the mailbox, whatever its outcome, so junk
/// cannot fill the recipient's quota.
final class MailboxCleanupTests: XCTestCase {
    func testEveryProcessedWrapLeavesOurMailboxWhateverItsOutcome() async throws {
        let root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-mbx-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        var configuration = RelayServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.dataDirectory = root.appendingPathComponent("relay").path
        let relay = try await RunningRelay.start(configuration)
        let node = try BurrowNode.initialize(home: root.appendingPathComponent("home"), passphrase: Array("mailbox".utf8),
                                             kdfMemoryMiB: 8, importing: nil)
        try node.addRelays([relay.url])
        let timeout: Duration = .seconds(5)

        var rng = SystemRandomNumberGenerator()
        let stranger = Keys.generate(using: &rng)
        let now = BurrowNode.now()
        // A kind-1590 rumor that is not a frame, a rumor of a kind nobody reads, a fake welcome.
        let junk = try [
            GiftWrap.wrap(rumor: Rumor(pubkey: stranger.publicKey, createdAt: now, kind: 1590, tags: [], content: "not base64!"),
                          sender: stranger, recipient: node.publicKey, now: now, rng: &rng),
            GiftWrap.wrap(rumor: Rumor(pubkey: stranger.publicKey, createdAt: now, kind: 7, tags: [], content: "x"),
                          sender: stranger, recipient: node.publicKey, now: now, rng: &rng),
            GiftWrap.wrap(rumor: Rumor(pubkey: stranger.publicKey, createdAt: now, kind: 444, tags: [], content: "AAAA"),
                          sender: stranger, recipient: node.publicKey, now: now, rng: &rng),
        ]
        let publisher = try RelayPool(urls: [relay.url], authKeys: nil)
        for wrap in junk {
            let results = await publisher.publish(wrap, timeout: timeout)
            XCTAssertTrue(results.contains(where: \.accepted), "\(results)")
        }
        await publisher.close()

        let reader = try RelayPool(urls: [relay.url], authKeys: node.keys)
        let mine = Filter(kinds: [Kind.giftWrap], tags: ["p": [node.publicKey.hex]])
        let before = try await reader.fetch(mine, timeout: timeout).events.count
        XCTAssertEqual(before, 3)
        let report = try await node.sync(timeout: timeout)
        XCTAssertGreaterThanOrEqual(report.errors.count, 2, "the refused wraps are reported with their reasons: \(report.errors)")
        let after = try await reader.fetch(mine, timeout: timeout).events.count
        XCTAssertEqual(after, 0, "junk wraps left the mailbox once processed")
        await reader.close()
        await node.gateway.closeConnections()
        node.close()
        await relay.close()
    }
}
