import Feed
import Foundation
import Pigeon
import Store

/// The feed-keys exchange (feed.md 5.3) over Pigeon DMs: bodies of content kind 4 queued as DM
/// messages on the contact's session, and encrypted exactly as a text is; bodies received from an added contact update the exchange in the transaction
/// that stores the DM.
extension FeedService {
    static let feedKeysKind = 4
    /// `feed_keys_sent.sent_at` of a reply decided but not sent yet.
    static let replyDue: Int64 = -1

    /// A body from the contact whose DM session authenticated `peer` (steps 2–4). Refusals
    /// (`bad_feed_keys`, `identity_mismatch`, `bundle_outdated`…) change nothing.
    func receivedFeedKeys(from peer: [UInt8], body: [UInt8], _ tx: StoreTransaction) throws {
        let state = try directMessages.pigeon(tx)
        guard state.contacts.values.contains(where: { $0.identityKey.bytes == peer && $0.state == .added }) else { return }
        let identity = try identity(tx)
        let now = Self.nowMilliseconds()
        var exchange = try exchange(identity, tx, now: now)
        let wasEstablished = exchange.isEstablished(with: peer)
        let resent = Self.isResend(body, from: peer, exchange)
        let reply = try exchange.receive(body, from: peer, encapsulate: FeedKeyExchange.encapsulateFresh)
        if let reply {
            try tx.feedKeys.setSent(to: peer, body: reply.bytes, at: Self.replyDue)
        } else if resent, exchange.isEstablished(with: peer) {
            // The peer sends a ciphertext again only while it lacks ours (step 1's resend): our
            // body to it was lost. It gets ours again, at most once per resend interval.
            let ours = try exchange.body(for: peer, encapsulate: FeedKeyExchange.encapsulateFresh).bytes
            let last = try tx.feedKeys.lastSent(to: peer)
            if !(last?.body == ours && last.map { now - $0.at < Self.resendInterval } == true) {
                try tx.feedKeys.setSent(to: peer, body: ours, at: Self.replyDue)
            }
        }
        try saveExchange(exchange, identity, tx, now: now)
        if exchange.isEstablished(with: peer), !wasEstablished {
            let feedID = FeedKeys.feedID(identityKey: peer)
            // A contact's feed is followed from the first pair key, unless the user unfollowed it.
            if try tx.feeds.feed(feedID) == nil {
                try tx.feeds.setFeed(feedID: feedID, identityKey: peer, own: false, following: true)
            }
            keysChanged.withLock { $0 = true }
        }
    }

    /// A contact's `key_rotation` entry read before its feed-keys body arrived (6): the bundle it
    /// announces becomes the contact's current one, and the next feed-keys round sends the
    /// contact a body with an encapsulation to it. Our own rotations, a non-contact's and older
    /// bundles change nothing.
    func learnRotation(_ content: [UInt8], author: [UInt8], _ tx: StoreTransaction, now: Int64) throws {
        guard let parsed = try? CanonicalJSON.parse(content), let bundle = try? PQBundle.announced(by: parsed) else { return }
        let state = try directMessages.pigeon(tx)
        guard state.contacts.values.contains(where: { $0.identityKey.bytes == author && $0.state == .added }) else { return }
        let identity = try identity(tx)
        guard author != identity.identityKey else { return }
        var exchange = try exchange(identity, tx, now: now)
        guard (try? exchange.learn(bundle, from: author)) == true else { return }
        try saveExchange(exchange, identity, tx, now: now)
    }

    /// Whether a body carries a ciphertext we already hold from this peer (a resend).
    static func isResend(_ body: [UInt8], from peer: [UInt8], _ exchange: FeedKeyExchange) -> Bool {
        guard let decoded = try? FeedKeysBody.decode(body), let sent = decoded.encapsulation,
              let record = exchange.record(of: peer) else { return false }
        return record.inbound.contains { $0.mine == sent.target && $0.theirs == decoded.bundle.hash && $0.ciphertext == sent.ciphertext }
    }

    /// Step 1 and its resend: a body to every added contact that is owed one (a reply decided
    /// on receipt, or no pair key yet for our current bundle and theirs, resent after 24 h),
    /// queued as a DM message on the contact's session (none is started for it).
    /// Returns whether anything was queued.
    @discardableResult
    func queueFeedKeys() throws -> Bool {
        try store.transaction { tx in
            let identity = try identity(tx)
            let now = Self.nowMilliseconds()
            var exchange = try exchange(identity, tx, now: now)
            var state = try directMessages.pigeon(tx)
            var queued = false
            // Only on a session that is up (5.3 step 1): feed keys never start a handshake of
            // their own; the first message either way makes the session.
            for contact in state.contacts.values.sorted(by: { $0.identityKey < $1.identityKey })
            where contact.state == .added && state.currentSession(with: contact.identityKey) != nil {
                let peer = contact.identityKey.bytes
                let last = try tx.feedKeys.lastSent(to: peer)
                var body: [UInt8]
                if let last, last.at == Self.replyDue {
                    body = last.body
                } else if exchange.isEstablished(with: peer) {
                    continue
                } else {
                    body = try exchange.body(for: peer, encapsulate: FeedKeyExchange.encapsulateFresh).bytes
                    if let last, last.body == body, now - last.at < Self.resendInterval { continue }
                }
                let message = StoredDM(contact: peer, direction: .outgoing, msgID: DirectMessageService.randomMessageID(), sessionID: nil,
                                       kind: Self.feedKeysKind, sentAt: now, receivedAt: nil, body: body, status: .queued)
                guard try tx.dmMessages.insert(message) else { continue }
                state = try directMessages.encryptQueued(for: contact.identityKey, state: state, now: UInt64(now), tx)
                try tx.feedKeys.setSent(to: peer, body: body, at: now)
                queued = true
            }
            try saveExchange(exchange, identity, tx, now: now)
            try pruneKeys(tx, now: now)
            return queued
        }
    }

    /// Own ML-KEM seeds are deleted 7 days after their bundle was superseded, contacts' old
    /// bundles and superseded pair keys 30 days after (5.3): a later compromise of the store
    /// then opens no entry sealed under them.
    static let ownSeedLifetime: Int64 = 7 * 86_400_000

    func pruneKeys(_ tx: StoreTransaction, now: Int64) throws {
        for bundle in try tx.feedKeys.bundles() {
            guard let superseded = bundle.supersededAt else { continue }
            let lifetime = bundle.kemSeed == nil ? Self.keepSuperseded : Self.ownSeedLifetime
            guard superseded + lifetime < now else { continue }
            try tx.feedKeys.deleteEncapsulations(involving: bundle.hash)
            try tx.feedKeys.deleteBundle(hash: bundle.hash)
        }
        try tx.feedKeys.deletePairKeys(supersededBefore: now - Self.keepSuperseded)
    }

    /// After a batch of DMs: replies owed are queued, and entries that waited for a key opened.
    func afterDMBatch() {
        do {
            try queueFeedKeys()
            if keysChanged.withLock({ let was = $0; $0 = false; return was }) { try reopenWaiting() }
        } catch {
            logger.warning("feed keys not queued", metadata: ["error": "\(BurrowNode.describe(error))"])
        }
    }

    /// A removed contact (5.3): its pair keys and feed go, and a new bundle hides this node from
    /// it (a new presence key); the remaining contacts get the new bundle.
    func contactRemoved(_ peer: [UInt8]) throws {
        try store.transaction { tx in
            let identity = try identity(tx)
            let now = Self.nowMilliseconds()
            var exchange = try exchange(identity, tx, now: now)
            guard exchange.record(of: peer) != nil else { return }
            exchange.forget(peer)
            try tx.feedKeys.deletePairKeys(peerFeedID: FeedKeys.feedID(identityKey: peer))
            for bundle in try tx.feedKeys.bundles() where bundle.identityKey == peer {
                try tx.feedKeys.deleteEncapsulations(involving: bundle.hash)
                try tx.feedKeys.deleteBundle(hash: bundle.hash)
            }
            try tx.feeds.setFeed(feedID: FeedKeys.feedID(identityKey: peer), identityKey: peer, own: false, following: false)
            try rotate(&exchange, identity, reason: nil, tx, now: now)
        }
        chains.withLock { $0[FeedKeys.feedID(identityKey: peer)] = nil }
    }
}
