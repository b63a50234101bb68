import Feed
import Foundation
import Nostr
import Pigeon
import Store

/// One feed entry as `feed read` and `run` show it: names, not keys; tombstoned and unreadable
/// entries marked, their contents never shown.
public struct FeedEntryView: Sendable, Equatable {
    /// The message id in hex (`replyTo` and `target` too).
    public let id: String
    /// The author's name: "you", the contact's name, else its display name or feed id prefix.
    public let author: String
    public let own: Bool
    public let sequence: Int64
    public let timestamp: Int64
    public let type: String
    public let audience: String
    /// `ok`, `no_key`, `opaque`, `decrypt_failed`, `bad_content`, `type_mismatch`, `tombstoned`.
    public let status: String
    public let body: String?
    public let replyTo: String?
    public let target: String?
    public let emoji: String?
    public let displayName: String?
    public let note: String?
    public let introduced: String?
}

/// A contact introduced in a followed feed (feed.md 6): who introduced them, the note, and
/// whether the keys the introduction staged are the ones on the card just added.
public struct FeedIntroductionView: Sendable, Equatable {
    public let by: String
    public let note: String?
    /// Whether the card's `S` is the introduction's `introduced_dh_key`.
    public let keysMatch: Bool
}

/// `feed status`: one line per feed.
public struct FeedStatusView: Sendable, Equatable {
    public let name: String
    public let feedID: String
    public let own: Bool
    public let following: Bool
    public let accepted: [Int64]?
    public let held: Int
    public let gaps: Int
    public let flagged: Bool
    public let evidence: Int
    public let lastSyncAt: Int64?
    /// Days since the pair key with this contact was established (nil: none yet).
    public let pairKeyAgeDays: Int64?
    public let displayName: String?
}

extension FeedService {
    static let relayCarrierSetting = "feed_relay_carrier"
    /// Set by a restore: the own feed is fetched back from contacts, and nothing is written to
    /// it until a contact's offer (or the relays) shows no newer entry (feed.md 7.3).
    static let catchingUpSetting = "feed_catching_up"

    func catchingUp(_ tx: StoreTransaction) throws -> Bool { try tx.settings.get(Self.catchingUpSetting) == "1" }

    /// The own feed caught up: writing is allowed again.
    func caughtUp() {
        do {
            try store.transaction { tx in
                guard try catchingUp(tx) else { return }
                try tx.settings.set(Self.catchingUpSetting, "0")
            }
            // The own chain was loaded only to take the feed back; the store has it now.
            chains.withLock { $0.removeAll() }
        } catch {
            logger.warning("the feed's catch-up was not recorded", metadata: ["error": "\(BurrowNode.describe(error))"])
        }
    }

    func relayCarrierOn(_ tx: StoreTransaction) throws -> Bool { try tx.settings.get(Self.relayCarrierSetting) == "on" }

    /// Names by feed id: "you", DM contact names, else display names, else `feed-` and 8 characters.
    func names(_ identity: Identity, _ tx: StoreTransaction) throws -> [[UInt8]: String] {
        var names: [[UInt8]: String] = [identity.feedID: "you"]
        for feed in try tx.feeds.feeds() where !feed.own {
            names[feed.feedID] = try tx.dmContacts.name(identity: feed.identityKey) ?? feed.displayName
                ?? "feed-" + String(Base64URL.encode(feed.feedID).prefix(8))
        }
        // Contacts whose feed is not held yet (someone introduced, then added) by name too.
        for contact in try tx.dmContacts.list() where !contact.name.hasPrefix(DirectMessageService.requestNamePrefix) {
            let feedID = FeedKeys.feedID(identityKey: contact.identity)
            if names[feedID] == nil { names[feedID] = contact.name }
        }
        return names
    }

    func view(_ row: StoredFeedMessage, names: [[UInt8]: String], ownFeedID: [UInt8], _ tx: StoreTransaction) throws -> FeedEntryView {
        let value = row.contentStatus == "ok" ? row.contentJSON.flatMap { try? CanonicalJSON.parse($0) } : nil
        func id(_ name: String) -> String? { value?[name]?.string }
        /// Message ids are shown in hex, as `id` is.
        func messageID(_ name: String) -> String? { id(name).flatMap { Base64URL.decode($0, count: 32) }.map { Hex.encode($0) } }
        var introduced: String?
        if let text = id("introduced_feed_id"), let feedID = Base64URL.decode(text, count: 32) {
            introduced = names[feedID] ?? "feed-" + String(text.prefix(8))
        }
        return FeedEntryView(
            id: Hex.encode(row.messageID), author: names[row.feedID] ?? "feed-" + String(Base64URL.encode(row.feedID).prefix(8)),
            own: row.feedID == ownFeedID, sequence: row.sequence, timestamp: row.timestamp, type: row.type,
            audience: row.audience.hasPrefix("group:") ? try groupName(row.audience, tx) : row.audience,
            status: row.contentStatus ?? "held", body: id("body"), replyTo: messageID("reply_to"), target: messageID("target_message"), emoji: id("emoji"),
            displayName: id("display_name"), note: id("note"), introduced: introduced)
    }

    /// `group:…` shown as the group's name when it is one of ours.
    func groupName(_ audience: String, _ tx: StoreTransaction) throws -> String {
        for row in try tx.groups.list() where FeedKeys.groupAudience(mlsGroupID: row.mlsGroupID) == audience {
            if let loaded = try? LoadedGroup(row) { return "group:" + loaded.group.data.name }
        }
        return "group"
    }

    func entryView(ownEnvelope envelope: Envelope, identity: Identity, _ tx: StoreTransaction) throws -> FeedEntryView {
        let names = try names(identity, tx)
        if envelope.fields.audience == "self", let row = try tx.feeds.journal(limit: 1).first {
            return try view(StoredFeedMessage(feedID: identity.feedID, sequence: row.sequence, messageID: row.messageID, timestamp: row.timestamp,
                                              type: row.type, audience: "self", envelope: row.envelope, accepted: true, contentStatus: "ok",
                                              contentJSON: row.contentJSON, receivedAt: 0), names: names, ownFeedID: identity.feedID, tx)
        }
        guard let row = try tx.feeds.message(id: envelope.messageID) else { throw NodeError.internalError("the entry was not stored") }
        return try view(row, names: names, ownFeedID: identity.feedID, tx)
    }

    /// `feed read`: accepted entries of the own feed, the journal and followed feeds, newest first.
    public func read(author: String?, since: Int64?, limit: Int) throws -> [FeedEntryView] {
        try store.transaction { tx in
            let identity = try identity(tx)
            let names = try names(identity, tx)
            var feedIDs = [identity.feedID] + (try tx.feeds.feeds().filter { $0.following && !$0.own }.map(\.feedID))
            var journal: [StoredFeedMessage] = []
            if let author {
                if ["you", "me", "self"].contains(author) {
                    feedIDs = [identity.feedID]
                } else {
                    feedIDs = [FeedKeys.feedID(identityKey: try contactIdentity(author, tx))]
                }
            }
            if feedIDs.contains(identity.feedID) {
                journal = try tx.feeds.journal(limit: limit).filter { $0.timestamp >= since ?? 0 }.map {
                    StoredFeedMessage(feedID: identity.feedID, sequence: $0.sequence, messageID: $0.messageID, timestamp: $0.timestamp, type: $0.type,
                                      audience: "self", envelope: $0.envelope, accepted: true, contentStatus: "ok", contentJSON: $0.contentJSON, receivedAt: 0)
                }
            }
            let rows = (try tx.feeds.recent(feedIDs: feedIDs, since: since, limit: limit) + journal)
                .sorted { ($0.timestamp, $0.sequence) > ($1.timestamp, $1.sequence) }.prefix(limit)
            return try rows.map { try view($0, names: names, ownFeedID: identity.feedID, tx) }
        }
    }

    /// `feed status`: the own feed and each known feed.
    public func status() throws -> [FeedStatusView] {
        try store.transaction { tx in
            let identity = try identity(tx)
            let names = try names(identity, tx)
            let pairKeys = try tx.feedKeys.pairKeys()
            let now = Self.nowMilliseconds()
            return try tx.feeds.feeds().sorted { ($0.own ? 0 : 1, names[$0.feedID] ?? "") < ($1.own ? 0 : 1, names[$1.feedID] ?? "") }.map { feed in
                let summary = try tx.feeds.summary(feedID: feed.feedID)
                let syncSummary = FeedSyncSummary(stored: summary)
                let newest = pairKeys.filter { $0.peerFeedID == feed.feedID && $0.supersededAt == nil }.map(\.establishedAt).max()
                return FeedStatusView(
                    name: names[feed.feedID] ?? "?", feedID: Base64URL.encode(feed.feedID), own: feed.own, following: feed.following,
                    accepted: summary.accepted.map { [$0.lowerBound, $0.upperBound] }, held: summary.held.count, gaps: syncSummary.gaps.count,
                    flagged: feed.flagged, evidence: try tx.feeds.evidence(feedID: feed.feedID).count, lastSyncAt: feed.lastSyncAt,
                    pairKeyAgeDays: newest.map { max(0, now - $0) / 86_400_000 }, displayName: feed.displayName)
            }
        }
    }

    /// `feed follow|unfollow CONTACT`. Unfollowing drops the contact's stored entries (an
    /// unfollowed feed is never verified or stored, 4.4).
    public func follow(_ contact: String, _ following: Bool) throws -> FeedStatusView {
        let feedID = try store.transaction { tx -> [UInt8] in
            _ = try identity(tx)
            let peer = try contactIdentity(contact, tx)
            let feedID = FeedKeys.feedID(identityKey: peer)
            try tx.feeds.setFeed(feedID: feedID, identityKey: peer, own: false, following: following)
            if !following {
                for row in try tx.feeds.messages(feedID: feedID, held: true) { try tx.feeds.delete(feedID: feedID, sequence: row.sequence) }
            }
            return feedID
        }
        chains.withLock { $0[feedID] = nil }
        guard let view = try status().first(where: { $0.feedID == Base64URL.encode(feedID) }) else {
            throw NodeError.internalError("the feed vanished")
        }
        return view
    }

    /// `feed relay on|off`: whether the relay carrier publishes and fetches (9, off by default).
    public func setRelayCarrier(_ on: Bool) throws {
        try store.transaction { try $0.settings.set(Self.relayCarrierSetting, on ? "on" : "off") }
    }

    public func relayCarrier() throws -> Bool { try store.transaction { try relayCarrierOn($0) } }
}

extension FeedService {
    /// The introductions of the person with `identityKey` in the feeds we hold (6: "an
    /// introduction only pre-stages keys"): a card added later is checked against the keys the
    /// introducer staged, so a family sees whether the person they add is the one introduced.
    public func introductions(ofCard text: String) throws -> [FeedIntroductionView] {
        let card = try ContactCard(text: text.trimmingCharacters(in: .whitespacesAndNewlines))
        return try introductions(of: card.identityKey.bytes, staticKey: card.staticKey.bytes)
    }

    public func introductions(of identityKey: [UInt8], staticKey: [UInt8]) throws -> [FeedIntroductionView] {
        try store.transaction { tx in
            let identity = try identity(tx)
            let names = try names(identity, tx)
            let feedID = FeedKeys.feedID(identityKey: identityKey)
            return try tx.feeds.readable(type: "contact_introduction").compactMap { row -> FeedIntroductionView? in
                guard row.feedID != identity.feedID, let json = row.contentJSON, let value = try? CanonicalJSON.parse(json),
                      value["introduced_feed_id"]?.string.flatMap({ Base64URL.decode($0, count: 32) }) == feedID,
                      let staged = value["introduced_dh_key"]?.string.flatMap({ Base64URL.decode($0, count: 32) }) else { return nil }
                return FeedIntroductionView(by: names[row.feedID] ?? "feed-" + String(Base64URL.encode(row.feedID).prefix(8)),
                                            note: value["note"]?.string, keysMatch: staged == staticKey)
            }
        }
    }
}
