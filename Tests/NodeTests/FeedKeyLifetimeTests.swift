import Feed
import Foundation
@_spi(StoreAccess) @testable import Node
import Store
import XCTest

/// Feed key lifetimes (feed.md 5.3): a bundle is replaced at 30 days with a `key_rotation`
/// entry in the own feed, and the superseded ML-KEM seed is deleted 7 days later.
final class FeedKeyLifetimeTests: XCTestCase {
    private var root: URL!
    private var node: BurrowNode!
    private var feeds: FeedService { node.feeds }
    private let day: Int64 = 86_400_000

    override func setUp() async throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("bw-feedkeys-\(UUID().uuidString.prefix(8))")
        node = try BurrowNode.initialize(home: root, passphrase: Array("feed keys".utf8), kdfMemoryMiB: 8, importing: nil)
    }

    override func tearDown() async throws {
        node?.close()
        try? FileManager.default.removeItem(at: root)
    }

    func testABundleRotatesAt30DaysAndItsSeedGoesAWeekLater() throws {
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

    /// Group feed secrets (5.4) are kept until 30 days after their epoch ended: the group moved
    /// on, we were removed, or the group is gone. Erased secrets are not written again.
    func testGroupSecretsAreErased30DaysAfterTheirEpochEnded() throws {
        let start = FeedService.nowMilliseconds()
        let secret = { (byte: UInt8) in [UInt8](repeating: byte, count: 32) }
        try node.store.transaction { tx in
            for epoch: Int64 in [1, 2, 3] { try tx.feedKeys.putGroupSecret(audience: "group:family", epoch: epoch, secret: secret(UInt8(epoch))) }
            try tx.feedKeys.putGroupSecret(audience: "group:removed", epoch: 7, secret: secret(7))
            try tx.feedKeys.putGroupSecret(audience: "group:gone", epoch: 4, secret: secret(4))
        }
        func held(_ now: Int64) throws -> [String] {
            try node.store.transaction { tx in
                try feeds.expireGroupSecrets(current: ["group:family": 3, "group:removed": nil as UInt64?], tx, now: now)
                return try tx.feedKeys.groupSecrets().filter { !$0.secret.isEmpty }.map { "\($0.audience)/\($0.epoch)" }.sorted()
            }
        }
        func readable() throws -> [String: [UInt64]] {
            try node.store.transaction { tx in try feeds.reader(try feeds.identity(tx), tx).groupSecrets.mapValues { $0.keys.sorted() } }
        }

        let all = ["group:family/1", "group:family/2", "group:family/3", "group:gone/4", "group:removed/7"]
        XCTAssertEqual(try held(start), all, "an epoch that ended is kept")
        let expiry = try node.store.transaction { tx in Dictionary(uniqueKeysWithValues: try tx.feedKeys.groupSecrets().map { ("\($0.audience)/\($0.epoch)", $0.expiresAt) }) }
        XCTAssertEqual(expiry["group:family/3"], .some(nil), "the current epoch has not ended")
        for ended in ["group:family/1", "group:family/2", "group:gone/4", "group:removed/7"] {
            XCTAssertEqual(expiry[ended], start + 30 * day, "\(ended) ended now: 30 days from now")
        }
        XCTAssertEqual(try held(start + 29 * day), all, "a later look does not move the 30 days")
        XCTAssertEqual(try held(start + 31 * day), ["group:family/3"])
        XCTAssertEqual(try readable(), ["group:family": [3]], "the reader has only the current epoch's secret")

        // The MLS state may still retain an erased epoch: writing it again leaves it erased.
        try node.store.transaction { tx in try tx.feedKeys.putGroupSecret(audience: "group:family", epoch: 1, secret: secret(1)) }
        XCTAssertEqual(try held(start + 32 * day), ["group:family/3"])
    }
}
