import Feed
import Foundation
@_spi(StoreAccess) @testable import Node
import Store
import XCTest

/// Feed key lifetimes (feed.md 5.3): a bundle is replaced at 30 days with a `key_rotation`
/// entry in the own feed, and the superseded ML-KEM seed is deleted 7 days later.
final class FeedKeyLifetimeTests: XCTestCase {
    func testABundleRotatesAt30DaysAndItsSeedGoesAWeekLater() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("bw-feedkeys-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let node = try BurrowNode.initialize(home: root, passphrase: Array("feed keys".utf8), kdfMemoryMiB: 8, importing: nil)
        defer { node.close() }
        let feeds = node.feeds
        let day: Int64 = 86_400_000
        let start = FeedService.nowMilliseconds()

        let first = try node.store.transaction { tx in try feeds.exchange(try feeds.identity(tx), tx, now: start).currentBundle }
        let again = try node.store.transaction { tx in try feeds.exchange(try feeds.identity(tx), tx, now: start + 29 * day).currentBundle }
        XCTAssertEqual(first?.hash, again?.hash, "a bundle younger than 30 days stays")

        let rotated = try node.store.transaction { tx in try feeds.exchange(try feeds.identity(tx), tx, now: start + 31 * day).currentBundle }
        XCTAssertNotEqual(rotated?.hash, first?.hash, "at 30 days a new bundle is made")
        XCTAssertGreaterThan(rotated?.createdAt ?? 0, first?.createdAt ?? .max)
        let (own, entries) = try node.store.transaction { tx in
            (try tx.feedKeys.bundles().filter { $0.kemSeed != nil }, try tx.feeds.messages(feedID: try feeds.identity(tx).feedID))
        }
        XCTAssertEqual(own.count, 2)
        XCTAssertEqual(own.first { $0.hash == first?.hash }?.supersededAt, start + 31 * day)
        XCTAssertEqual(entries.map(\.type), ["key_rotation"], "the rotation is announced in the own feed")
        XCTAssertEqual(entries.first?.contentStatus, "ok")

        try node.store.transaction { tx in try feeds.pruneKeys(tx, now: start + 37 * day) }
        XCTAssertEqual(try node.store.transaction { try $0.feedKeys.bundles().count }, 2, "the old seed is kept 7 days")
        try node.store.transaction { tx in try feeds.pruneKeys(tx, now: start + 39 * day) }
        let left = try node.store.transaction { try $0.feedKeys.bundles() }
        XCTAssertEqual(left.map(\.hash), [rotated?.hash].compactMap { $0 }, "then it is deleted")
    }
}
