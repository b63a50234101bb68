import Feed
import Foundation
import Nostr
import RelayClient
import Store

/// The relay carrier (feed.md 9), off by default: own envelopes published as kind-1591 events
/// signed by our Nostr key; followed feeds fetched by their `f` tags. The event's signer is not
/// trusted: each envelope goes through 4.4 for the feed its tag names, then the chain.
extension FeedService {
    /// Publishes envelopes (never journal entries). A failure is logged: the mesh still carries them.
    func publishToRelays(_ envelopes: [Envelope], timeout: Duration) async {
        do {
            let urls = try relays()
            for envelope in envelopes where envelope.fields.audience != "self" {
                let event = try FeedRelayCarrier.event(for: envelope, keys: keys, createdAt: Self.now())
                _ = try await gateway.publishAccepted(event, to: urls, timeout: timeout)
            }
        } catch {
            logger.warning("a feed entry was not published to the relays", metadata: ["error": "\(BurrowNode.describe(error))"])
        }
    }

    /// Fetches the followed feeds' events and takes their envelopes in; returns the entries
    /// that became readable, for `run`'s `feed` lines. Nothing happens with the carrier off.
    public func fetchFromRelays(timeout: Duration) async throws -> [FeedEntryView] {
        let (followed, restoring) = try store.transaction { tx -> ([StoredFeed]?, Bool) in
            _ = try identity(tx)
            guard try relayCarrierOn(tx) else { return (nil, false) }
            let restoring = try catchingUp(tx)
            return (try tx.feeds.feeds().filter { $0.following && !$0.own || $0.own && restoring }, restoring)
        }
        guard let followed, !followed.isEmpty else { return [] }
        try recordGroupSecrets()
        let follows = Dictionary(followed.map { ($0.feedID, $0.identityKey) }, uniquingKeysWith: { a, _ in a })
        let filter = Filter(kinds: [FeedRelayCarrier.kind], tags: ["f": followed.map { Base64URL.encode($0.feedID) }])
        let events = try await gateway.fetch(filter, timeout: timeout)
        // Newest first within a feed, as peers send: a follower extends its range downward.
        var envelopes: [Envelope] = []
        for event in events {
            do { envelopes.append(try FeedRelayCarrier.open(event.jsonBytes, follows: follows)) } catch {
                logger.notice("a feed event was refused", metadata: ["reason": "\(error.rawValue)"])
            }
        }
        envelopes.sort { a, b in
            a.fields.feedID == b.fields.feedID ? a.fields.sequence > b.fields.sequence : a.fields.feedID.lexicographicallyPrecedes(b.fields.feedID)
        }
        let taken = try take(envelopes.map(\.bytes), requested: Set(follows.keys))
        // The relays gave back what they hold of our own feed: writing may go on from there.
        if restoring { caughtUp() }
        return taken
    }

    /// Takes envelopes of followed feeds in, one transaction each; returns the entries that
    /// are now readable (accepted with content, newly).
    func take(_ envelopes: [[UInt8]], requested: Set<[UInt8]>) throws -> [FeedEntryView] {
        var fresh: [(feedID: [UInt8], sequence: UInt32)] = []
        for bytes in envelopes {
            let received = receive(messageID: FeedKeys.messageID(of: bytes), envelope: bytes, requested: requested)
            fresh += accepted(received)
            if case .failure(let error) = received.result {
                logger.notice("a feed envelope was refused", metadata: ["reason": "\(error.rawValue)"])
            }
        }
        return try readable(fresh)
    }

    /// The sequences an outcome accepted: the envelope's own and those its cascade released.
    func accepted(_ received: FeedChunkReceiver.Received) -> [(feedID: [UInt8], sequence: UInt32)] {
        guard let (feedID, sequence) = received.position else { return [] }
        var out: [(feedID: [UInt8], sequence: UInt32)] = []
        if case .success(.accepted) = received.result { out.append((feedID, sequence)) }
        for release in received.released { if case .success(.accepted) = release.result { out.append((feedID, release.sequence)) } }
        return out
    }

    /// Views of the given entries that are readable now, oldest first.
    /// Whether any of these entries is a group entry held without its epoch's secret: the
    /// group may be new here (a join a moment ago), so its secrets are worth recording now.
    func waitForGroupSecret(_ entries: [(feedID: [UInt8], sequence: UInt32)]) throws -> Bool {
        guard !entries.isEmpty else { return false }
        return try store.transaction { tx in
            try entries.contains { entry in
                guard let row = try tx.feeds.message(feedID: entry.feedID, sequence: Int64(entry.sequence)) else { return false }
                return row.contentStatus == "no_key" && row.audience.hasPrefix("group:")
            }
        }
    }

    func readable(_ entries: [(feedID: [UInt8], sequence: UInt32)]) throws -> [FeedEntryView] {
        guard !entries.isEmpty else { return [] }
        return try store.transaction { tx in
            let identity = try identity(tx)
            let names = try names(identity, tx)
            return try entries.compactMap { try tx.feeds.message(feedID: $0.feedID, sequence: Int64($0.sequence)) }
                .filter { $0.contentStatus == "ok" }.sorted { ($0.timestamp, $0.sequence) < ($1.timestamp, $1.sequence) }
                .map { try view($0, names: names, ownFeedID: identity.feedID, tx) }
        }
    }
}
