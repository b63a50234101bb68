import SQLite

/// A row of `feed_bundles`: a PQ bundle, ours (with its ML-KEM seed) or a contact's.
public struct StoredFeedBundle: Sendable, Equatable {
    public let hash: [UInt8]
    public let identityKey: [UInt8]
    public let bundle: [UInt8]
    public let createdAt: Int64
    /// Our own bundles' ML-KEM seed `d ‖ z`; nil for a contact's.
    public let kemSeed: [UInt8]?
    public var presenceKey: [UInt8]
    public var supersededAt: Int64?

    public init(hash: [UInt8], identityKey: [UInt8], bundle: [UInt8], createdAt: Int64, kemSeed: [UInt8]?, presenceKey: [UInt8], supersededAt: Int64?) {
        self.hash = hash
        self.identityKey = identityKey
        self.bundle = bundle
        self.createdAt = createdAt
        self.kemSeed = kemSeed
        self.presenceKey = presenceKey
        self.supersededAt = supersededAt
    }
}

/// One ML-KEM encapsulation between two bundles: made by us (`out`) or received (`in`).
public struct StoredFeedKEM: Sendable, Equatable {
    public let mine: [UInt8]
    public let theirs: [UInt8]
    public let outbound: Bool
    public let ciphertext: [UInt8]
    public let sharedSecret: [UInt8]

    public init(mine: [UInt8], theirs: [UInt8], outbound: Bool, ciphertext: [UInt8], sharedSecret: [UInt8]) {
        self.mine = mine
        self.theirs = theirs
        self.outbound = outbound
        self.ciphertext = ciphertext
        self.sharedSecret = sharedSecret
    }
}

public struct StoredPairKey: Sendable, Equatable {
    public let peerFeedID: [UInt8]
    public let mine: [UInt8]
    public let theirs: [UInt8]
    public let key: [UInt8]
    public let establishedAt: Int64
    public var supersededAt: Int64?

    public init(peerFeedID: [UInt8], mine: [UInt8], theirs: [UInt8], key: [UInt8], establishedAt: Int64, supersededAt: Int64?) {
        self.peerFeedID = peerFeedID
        self.mine = mine
        self.theirs = theirs
        self.key = key
        self.establishedAt = establishedAt
        self.supersededAt = supersededAt
    }
}

/// The feed's keys (feed.md 5.3, 5.4, 7.3): bundles, encapsulations, pair keys, group secrets,
/// and the last feed-keys body sent to each contact.
public struct FeedKeyRepository {
    let transaction: StoreTransaction

    public func bundles() throws -> [StoredFeedBundle] {
        try transaction.connection().query(
            "SELECT bundle_hash, identity_key, bundle, created_at, kem_seed, presence_key, superseded_at FROM feed_bundles ORDER BY created_at") {
            StoredFeedBundle(hash: $0.blob(0) ?? [], identityKey: $0.blob(1) ?? [], bundle: $0.blob(2) ?? [], createdAt: $0.int64(3),
                             kemSeed: $0.blob(4), presenceKey: $0.blob(5) ?? [], supersededAt: $0.isNull(6) ? nil : $0.int64(6))
        }
    }

    public func putBundle(_ b: StoredFeedBundle) throws {
        try transaction.connection().execute(
            """
            INSERT OR REPLACE INTO feed_bundles (bundle_hash, identity_key, bundle, created_at, kem_seed, presence_key, superseded_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [.blob(b.hash), .blob(b.identityKey), .blob(b.bundle), .integer(b.createdAt), b.kemSeed.map { .blob($0) } ?? .null,
                  .blob(b.presenceKey), b.supersededAt.map { .integer($0) } ?? .null])
    }

    public func deleteBundle(hash: [UInt8]) throws {
        try transaction.connection().execute("DELETE FROM feed_bundles WHERE bundle_hash = ?", [.blob(hash)])
    }

    public func encapsulations() throws -> [StoredFeedKEM] {
        try transaction.connection().query("SELECT mine, theirs, direction, ct, ss FROM feed_kem") {
            StoredFeedKEM(mine: $0.blob(0) ?? [], theirs: $0.blob(1) ?? [], outbound: $0.text(2) == "out", ciphertext: $0.blob(3) ?? [],
                          sharedSecret: $0.blob(4) ?? [])
        }
    }

    public func putEncapsulation(_ k: StoredFeedKEM) throws {
        try transaction.connection().execute(
            "INSERT OR REPLACE INTO feed_kem (mine, theirs, direction, ct, ss) VALUES (?, ?, ?, ?, ?)",
            [.blob(k.mine), .blob(k.theirs), .text(k.outbound ? "out" : "in"), .blob(k.ciphertext), .blob(k.sharedSecret)])
    }

    public func deleteEncapsulations(involving hash: [UInt8]) throws {
        try transaction.connection().execute("DELETE FROM feed_kem WHERE mine = ? OR theirs = ?", [.blob(hash), .blob(hash)])
    }

    public func pairKeys() throws -> [StoredPairKey] {
        try transaction.connection().query(
            "SELECT peer_feed_id, mine, theirs, key, established_at, superseded_at FROM feed_pair_keys ORDER BY established_at") {
            StoredPairKey(peerFeedID: $0.blob(0) ?? [], mine: $0.blob(1) ?? [], theirs: $0.blob(2) ?? [], key: $0.blob(3) ?? [],
                          establishedAt: $0.int64(4), supersededAt: $0.isNull(5) ? nil : $0.int64(5))
        }
    }

    public func putPairKey(_ k: StoredPairKey) throws {
        try transaction.connection().execute(
            """
            INSERT OR REPLACE INTO feed_pair_keys (peer_feed_id, mine, theirs, key, established_at, superseded_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """, [.blob(k.peerFeedID), .blob(k.mine), .blob(k.theirs), .blob(k.key), .integer(k.establishedAt),
                  k.supersededAt.map { .integer($0) } ?? .null])
    }

    public func deletePairKeys(peerFeedID: [UInt8]) throws {
        try transaction.connection().execute("DELETE FROM feed_pair_keys WHERE peer_feed_id = ?", [.blob(peerFeedID)])
    }

    /// Drops what expired: superseded pair keys and contacts' bundles after `keepUntil`.
    public func deletePairKeys(supersededBefore time: Int64) throws {
        try transaction.connection().execute("DELETE FROM feed_pair_keys WHERE superseded_at IS NOT NULL AND superseded_at < ?", [.integer(time)])
    }

    public func groupSecrets() throws -> [(audience: String, epoch: Int64, secret: [UInt8], expiresAt: Int64?)] {
        try transaction.connection().query("SELECT audience, epoch, secret, expires_at FROM feed_group_secrets") {
            (audience: $0.text(0) ?? "", epoch: $0.int64(1), secret: $0.blob(2) ?? [], expiresAt: $0.isNull(3) ? nil : $0.int64(3))
        }
    }

    /// Starts an ended epoch's 30 days (5.4).
    public func setGroupSecretExpiry(audience: String, epoch: Int64, at time: Int64) throws {
        try transaction.connection().execute(
            "UPDATE feed_group_secrets SET expires_at = ? WHERE audience = ? AND epoch = ?", [.integer(time), .text(audience), .integer(epoch)])
    }

    /// Erases the secrets past their time. The row stays, secret empty, so an epoch the MLS
    /// state still retains is not written again with a fresh 30 days.
    public func eraseGroupSecrets(expiredBefore time: Int64) throws {
        try transaction.connection().execute(
            "UPDATE feed_group_secrets SET secret = x'' WHERE expires_at IS NOT NULL AND expires_at < ? AND length(secret) > 0", [.integer(time)])
    }

    public func putGroupSecret(audience: String, epoch: Int64, secret: [UInt8]) throws {
        try transaction.connection().execute(
            "INSERT OR IGNORE INTO feed_group_secrets (audience, epoch, secret) VALUES (?, ?, ?)", [.text(audience), .integer(epoch), .blob(secret)])
    }

    public func lastSent(to peer: [UInt8]) throws -> (body: [UInt8], at: Int64)? {
        try transaction.connection().queryFirst("SELECT body, sent_at FROM feed_keys_sent WHERE peer_identity = ?", [.blob(peer)]) {
            (body: $0.blob(0) ?? [], at: $0.int64(1))
        }
    }

    public func setSent(to peer: [UInt8], body: [UInt8], at time: Int64) throws {
        try transaction.connection().execute(
            "INSERT OR REPLACE INTO feed_keys_sent (peer_identity, body, sent_at) VALUES (?, ?, ?)", [.blob(peer), .blob(body), .integer(time)])
    }
}
