import Feed
import Foundation
import Store
import Synchronization

/// The node's feeds as a sync session sees them (feed.md 8.5): summaries and served envelopes
/// read from the store, chunks through `FeedService.receive` (one transaction each). The
/// sequences each chunk accepted are kept for `run`'s `feed` lines.
final class StoredFeedSync: FeedSyncStore, @unchecked Sendable {
    let service: FeedService
    let ownFeedID: [UInt8]
    let maximumPerFeed = FeedChain.defaultMaximumPerFeed
    let followedFeedIDs: [[UInt8]]
    /// The reader and the feeds chunks may be for, read once per round instead of per chunk.
    private lazy var prepared: FeedService.Prepared? = try? service.prepare()
    /// Accepted by chunks since the last `takeAccepted()`.
    private var acceptedSinceLast: [(feedID: [UInt8], sequence: UInt32)] = []

    init(service: FeedService) throws {
        self.service = service
        (ownFeedID, followedFeedIDs) = try service.store.transaction { tx in
            let identity = try service.identity(tx)
            let followed = try tx.feeds.feeds().filter { $0.following && !$0.own }.map(\.feedID)
            // A restored home asks for its own feed in every session until it is back (7.3).
            return (identity.feedID, try service.catchingUp(tx) ? [identity.feedID] + followed : followed)
        }
    }

    func summary(of feedID: [UInt8]) -> FeedSyncSummary {
        guard let summary = try? service.store.transaction({ try $0.feeds.summary(feedID: feedID) }) else {
            return FeedSyncSummary(accepted: nil, held: [])
        }
        return FeedSyncSummary(stored: summary)
    }

    func accepted(feedID: [UInt8], in range: ClosedRange<UInt32>) -> [ServedEnvelope] {
        let rows = (try? service.store.transaction { tx in
            try tx.feeds.messages(feedID: feedID, from: Int64(range.lowerBound), to: Int64(range.upperBound))
        }) ?? []
        return rows.compactMap { row in
            UInt32(exactly: row.sequence).map { ServedEnvelope(sequence: $0, type: row.type, messageID: row.messageID, bytes: row.envelope) }
        }
    }

    func receiveChunk(messageID: [UInt8], envelope: [UInt8], requested: Set<[UInt8]>) -> FeedChunkReceiver.Received {
        let received = service.receive(messageID: messageID, envelope: envelope, requested: requested, prepared: prepared)
        acceptedSinceLast += service.accepted(received)
        return received
    }

    func takeAccepted() -> [(feedID: [UInt8], sequence: UInt32)] {
        defer { acceptedSinceLast = [] }
        return acceptedSinceLast
    }
}

extension FeedSyncSummary {
    /// A store's summary, sequences within the feed's range (anything else is left out).
    init(stored: (accepted: ClosedRange<Int64>?, held: [Int64])) {
        let accepted = stored.accepted.flatMap { r in UInt32(exactly: r.lowerBound).flatMap { lo in UInt32(exactly: r.upperBound).map { lo...$0 } } }
        self.init(accepted: accepted, held: stored.held.compactMap { UInt32(exactly: $0) })
    }
}

extension FeedService {
    /// A contact the mesh can recognise: its presence key, the newest pair key with it (links
    /// are sealed with it) and the one before (also tried on receipt, 8.3).
    public struct PresenceContact: Sendable {
        let identityKey: [UInt8]
        let presenceKey: [UInt8]
        let pairKey: [UInt8]
        let previousPairKey: [UInt8]?
    }

    /// Contacts with an established pair key and a presence key (8.2), and our own `P`.
    public func presence() throws -> (own: [UInt8], contacts: [PresenceContact]) {
        try store.transaction { tx in
            let identity = try identity(tx)
            let exchange = try exchange(identity, tx)
            guard let bundle = exchange.currentBundle else { throw NodeError.internalError("no feed bundle") }
            let own = FeedKeys.presenceKey(identitySeed: identity.seed, createdAt: bundle.createdAt)
            let contacts: [PresenceContact] = exchange.contactKeys.compactMap { peer in
                guard exchange.isEstablished(with: peer), let record = exchange.record(of: peer), let presence = record.presenceKey,
                      let key = record.pairKeys.last?.key else { return nil }
                return PresenceContact(identityKey: peer, presenceKey: presence, pairKey: key, previousPairKey: record.pairKeys.dropLast().last?.key)
            }
            return (own, contacts)
        }
    }
}
