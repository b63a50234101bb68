import Crypto
import Feed
import Foundation
import Logging
import Nostr
import Pigeon
import Store
import Synchronization

/// Feeds (feed.md): the own feed and journal, the feeds of followed contacts, the PQ pair keys
/// exchanged over Pigeon DMs, sync sessions on the mesh and the relay carrier. The sans-I/O
/// core is `Sources/Feed`; this service keeps its state in the store, one transaction per
/// accepted envelope with every change it caused.
///
/// Followed chains are kept in memory once loaded (`chains`), as `FeedChain` values whose
/// changes are written through; a failed write drops the cached chain so the next use reloads
/// what the store holds.
public final class FeedService: ContextualService {
    let context: NodeContext
    let gateway: RelayGateway
    let directMessages: DirectMessageService
    let groups: GroupService
    let chains = Mutex<[[UInt8]: FeedChain]>([:])
    /// Set when a pair key was established: entries waiting for a key are opened again.
    let keysChanged = Mutex(false)
    /// Entries that became readable when a key arrived after them, not shown yet (`run` and
    /// `sync` print them as they print new entries), newest kept.
    let reopened = Mutex<[(feedID: [UInt8], sequence: UInt32)]>([])
    static let maximumReopened = 1024

    /// Bundles live 30 days (5.3); superseded pair keys and group secrets are kept 30 days.
    static let bundleLifetime: Int64 = 30 * 86_400_000
    static let keepSuperseded: Int64 = 30 * 86_400_000
    /// A feed-keys body is sent again after 24 h until the pair key exists (5.3 step 1).
    static let resendInterval: Int64 = 86_400_000
    /// Recipients of one contacts entry besides the author (5.2: at most 512 slots).
    static let maximumRecipients = 511

    init(context: NodeContext, gateway: RelayGateway, directMessages: DirectMessageService, groups: GroupService) {
        self.context = context
        self.gateway = gateway
        self.directMessages = directMessages
        self.groups = groups
    }

    static func nowMilliseconds() -> Int64 { Int64(max(0, Date().timeIntervalSince1970 * 1000)) }

    // MARK: The identity

    /// The feed's keys from the Pigeon identity: `I` signs, `S` is the classical half, `J`
    /// seals the author's own copies (feed.md 2).
    struct Identity {
        let seed: [UInt8]
        let identityKey: [UInt8]
        let staticKey: Curve25519.KeyAgreement.PrivateKey
        var feedID: [UInt8] { FeedKeys.feedID(identityKey: identityKey) }
        var journalKey: [UInt8] { FeedKeys.journalKey(identitySeed: seed) }
        var signing: Curve25519.Signing.PrivateKey { get throws { try Curve25519.Signing.PrivateKey(rawRepresentation: seed) } }
    }

    func identity(_ tx: StoreTransaction) throws -> Identity {
        let state = try directMessages.pigeon(tx)
        let seed = state.local.identityKey.seedBytes
        let staticKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: state.local.staticKey.rawBytes)
        let identity = Identity(seed: seed, identityKey: state.local.identityKey.publicKey.bytes, staticKey: staticKey)
        if try tx.feeds.feed(identity.feedID) == nil {
            try tx.feeds.setFeed(feedID: identity.feedID, identityKey: identity.identityKey, own: true, following: false)
        }
        return identity
    }

    // MARK: Keys in the store

    /// The feed-keys exchange as the store keeps it, with a current own bundle (made on first
    /// use and when the current one is 30 days old).
    func exchange(_ identity: Identity, _ tx: StoreTransaction, now: Int64 = nowMilliseconds()) throws -> FeedKeyExchange {
        let rows = try tx.feedKeys.bundles()
        var own: [(bundle: PQBundle, kemSeed: [UInt8])] = []
        var theirs: [[UInt8]: [StoredFeedBundle]] = [:]
        for row in rows {
            if let seed = row.kemSeed {
                own.append((try decodeStored(row.bundle), seed))
            } else {
                theirs[row.identityKey, default: []].append(row)
            }
        }
        var byHash: [[UInt8]: [UInt8]] = [:]
        for (peer, list) in theirs { for row in list { byHash[row.hash] = peer } }
        var records: [[UInt8]: FeedKeyExchange.ContactRecord] = [:]
        for (peer, list) in theirs {
            guard let newest = list.max(by: { $0.createdAt < $1.createdAt }) else { continue }
            records[peer] = .init(bundle: try decodeStored(newest.bundle), presenceKey: newest.presenceKey, inbound: [], outbound: [], pairKeys: [])
        }
        for kem in try tx.feedKeys.encapsulations() {
            guard let peer = byHash[kem.theirs] else { continue }
            let e = FeedKeyExchange.Encapsulation(mine: kem.mine, theirs: kem.theirs, ciphertext: kem.ciphertext, sharedSecret: kem.sharedSecret)
            if kem.outbound { records[peer]?.outbound.append(e) } else { records[peer]?.inbound.append(e) }
        }
        let peersByFeed = Dictionary(theirs.keys.map { (FeedKeys.feedID(identityKey: $0), $0) }, uniquingKeysWith: { a, _ in a })
        for key in try tx.feedKeys.pairKeys() {
            guard let peer = peersByFeed[key.peerFeedID] else { continue }
            records[peer]?.pairKeys.append(.init(mine: key.mine, theirs: key.theirs, key: key.key))
        }
        var exchange = FeedKeyExchange(identitySeed: identity.seed, staticKey: identity.staticKey, own: own, contacts: records)
        if let current = exchange.currentBundle, Int64(clamping: current.createdAt) + Self.bundleLifetime > now {
            return exchange
        }
        try rotate(&exchange, identity, reason: "scheduled_rotation", tx, now: now)
        return exchange
    }

    private func decodeStored(_ bytes: [UInt8]) throws -> PQBundle {
        do { return try PQBundle.decode(bytes) } catch { throw StoreError.storeCorrupt("a stored feed bundle does not decode") }
    }

    /// A new own bundle (5.3 rotation); a later one than the first is announced in the own feed
    /// with a `key_rotation` entry, and sent to every contact by the next feed-keys round.
    func rotate(_ exchange: inout FeedKeyExchange, _ identity: Identity, reason: String?, _ tx: StoreTransaction, now: Int64) throws {
        let previous = exchange.currentBundle
        var seed = [UInt8](repeating: 0, count: 64)
        var rng = SystemRandomNumberGenerator()
        for i in seed.indices { seed[i] = UInt8.random(in: 0...255, using: &rng) }
        let createdAt = UInt64(max(now, Int64(clamping: previous?.createdAt ?? 0) + 1))
        let bundle = try exchange.rotate(createdAt: createdAt, kemSeed: seed)
        try saveExchange(exchange, identity, tx, now: now)
        if let previous {
            var old = try tx.feedKeys.bundles().first { $0.hash == previous.hash }
            old?.supersededAt = now
            if let old { try tx.feedKeys.putBundle(old) }
        }
        if previous != nil {
            var members: [FeedJSONMember] = [
                FeedJSONMember("created_at", .integer(Int64(clamping: bundle.createdAt))),
                FeedJSONMember("new_dh_key", .string(Base64URL.encode(bundle.staticKey))),
                FeedJSONMember("new_identity_key", .string(Base64URL.encode(bundle.identityKey))),
                FeedJSONMember("new_pq_key", .string(Base64URL.encode(bundle.encapsulationKey))),
                FeedJSONMember("previous_key_sig", .string(Base64URL.encode(Array(bundle.bytes.suffix(64))))),
                FeedJSONMember("type", .string("key_rotation")),
            ]
            if let reason { members.append(FeedJSONMember("reason", .string(reason))) }
            let content = FeedJSON.object(members)
            _ = try author(type: "key_rotation", content: content, audience: .contacts, identity: identity, exchange: exchange, tx, now: now)
        }
    }

    /// Writes the exchange's records: own bundles, each contact's bundle and presence key, the
    /// encapsulations, and pair keys not stored yet (with the time they were established).
    func saveExchange(_ exchange: FeedKeyExchange, _ identity: Identity, _ tx: StoreTransaction, now: Int64) throws {
        let stored = try tx.feedKeys.bundles()
        let storedHashes = Set(stored.map(\.hash))
        for (bundle, seed) in exchange.ownBundles where !storedHashes.contains(bundle.hash) {
            try tx.feedKeys.putBundle(StoredFeedBundle(
                hash: bundle.hash, identityKey: bundle.identityKey, bundle: bundle.bytes, createdAt: Int64(clamping: bundle.createdAt),
                kemSeed: seed, presenceKey: FeedKeys.presenceKey(identitySeed: identity.seed, createdAt: bundle.createdAt), supersededAt: nil))
        }
        let storedPairs = Set(try tx.feedKeys.pairKeys().map { $0.mine + $0.theirs })
        for peer in exchange.contactKeys {
            guard let record = exchange.record(of: peer) else { continue }
            if let bundle = record.bundle, let presence = record.presenceKey,
               var held = stored.first(where: { $0.hash == bundle.hash && $0.kemSeed == nil }), held.presenceKey != presence {
                // A bundle first learnt from a key_rotation entry gets its P from the body.
                held.presenceKey = presence
                try tx.feedKeys.putBundle(held)
            }
            if let bundle = record.bundle, !storedHashes.contains(bundle.hash) {
                for var older in stored where older.identityKey == peer && older.supersededAt == nil {
                    older.supersededAt = now
                    try tx.feedKeys.putBundle(older)
                }
                try tx.feedKeys.putBundle(StoredFeedBundle(
                    hash: bundle.hash, identityKey: peer, bundle: bundle.bytes, createdAt: Int64(clamping: bundle.createdAt), kemSeed: nil,
                    presenceKey: record.presenceKey ?? [], supersededAt: nil))
            }
            for e in record.inbound {
                try tx.feedKeys.putEncapsulation(.init(mine: e.mine, theirs: e.theirs, outbound: false, ciphertext: e.ciphertext, sharedSecret: e.sharedSecret))
            }
            for e in record.outbound {
                try tx.feedKeys.putEncapsulation(.init(mine: e.mine, theirs: e.theirs, outbound: true, ciphertext: e.ciphertext, sharedSecret: e.sharedSecret))
            }
            let peerFeed = FeedKeys.feedID(identityKey: peer)
            for key in record.pairKeys where !storedPairs.contains(key.mine + key.theirs) {
                // Earlier pair keys with this contact are superseded by the new one.
                for var old in try tx.feedKeys.pairKeys() where old.peerFeedID == peerFeed && old.supersededAt == nil {
                    old.supersededAt = now
                    try tx.feedKeys.putPairKey(old)
                }
                try tx.feedKeys.putPairKey(.init(peerFeedID: peerFeed, mine: key.mine, theirs: key.theirs, key: key.key, establishedAt: now,
                                                 supersededAt: nil))
            }
        }
    }

    /// What this node opens contents with: its journal key, every pair key it holds (newest
    /// first per author) and the group feed secrets it kept.
    func reader(_ identity: Identity, _ tx: StoreTransaction) throws -> FeedReader {
        var pairKeys: [[UInt8]: [[UInt8]]] = [:]
        for key in try tx.feedKeys.pairKeys().sorted(by: { $0.establishedAt > $1.establishedAt }) {
            pairKeys[key.peerFeedID, default: []].append(key.key)
        }
        var secrets: [String: [UInt64: [UInt8]]] = [:]
        for row in try tx.feedKeys.groupSecrets() {
            guard let epoch = UInt64(exactly: row.epoch), !row.secret.isEmpty else { continue }
            secrets[row.audience, default: [:]][epoch] = row.secret
        }
        return FeedReader(feedID: identity.feedID, journalKey: identity.journalKey, pairKeys: pairKeys, groupSecrets: secrets)
    }

    // MARK: Followed chains

    /// The followed feed's chain, loaded from the store once (every stored envelope verified
    /// again and replayed in order) and kept.
    func chain(_ feed: StoredFeed, reader: FeedReader) throws -> FeedChain {
        if var cached = chains.withLock({ $0[feed.feedID] }) {
            cached.reader = reader
            return cached
        }
        let stored = try store.transaction { try $0.feeds.messages(feedID: feed.feedID, held: true) }
        var chain = FeedChain(identityKey: feed.identityKey, maximumPerFeed: feed.own ? nil : FeedChain.defaultMaximumPerFeed, reader: reader)
        for row in stored.filter(\.accepted) + stored.filter({ !$0.accepted }) { _ = chain.receive(row.envelope) }
        _ = chain.takeChanges()
        chains.withLock { $0[feed.feedID] = chain }
        return chain
    }

    /// Writes a chain's changes in `tx`: rows stored, accepted or re-marked, deleted, evidence,
    /// tombstones, the flag and the display name (7.2).
    func apply(_ changes: [FeedChain.Change], of chain: FeedChain, feedID: [UInt8], _ tx: StoreTransaction, now: Int64) throws {
        var flag = chain.flagged
        var rotations: [[UInt8]] = []
        for change in changes {
            switch change {
            case .stored(let s), .accepted(let s), .content(let s):
                guard let entry = chain.entries[s] else { continue }
                let (status, json) = Self.stored(entry.content)
                if entry.accepted, entry.envelope.fields.type == "key_rotation", status == "ok", let json { rotations.append(json) }
                if ["decrypt_failed", "bad_content", "type_mismatch"].contains(status) { flag = true }
                let fields = entry.envelope.fields
                try tx.feeds.put(StoredFeedMessage(
                    feedID: feedID, sequence: Int64(s), messageID: entry.envelope.messageID, timestamp: fields.timestamp, type: fields.type,
                    audience: fields.audience, envelope: entry.envelope.bytes, accepted: entry.accepted, contentStatus: entry.accepted ? status : nil,
                    contentJSON: json, receivedAt: now))
            case .deleted(let s):
                try tx.feeds.delete(feedID: feedID, sequence: Int64(s))
            case .evidence(let s, let envelope, let reason):
                try tx.feeds.addEvidence(feedID: feedID, sequence: Int64(s), envelope: envelope, reason: reason.rawValue, at: now)
            case .tombstone(let target):
                try tx.feeds.addTombstone(feedID: feedID, target: target)
            }
        }
        for rotation in rotations { try learnRotation(rotation, author: chain.identityKey, tx, now: now) }
        if flag { try tx.feeds.setFlagged(feedID) }
        try tx.feeds.setLastSync(feedID, at: now)
        if changes.contains(where: { if case .accepted = $0 { return true } else if case .content = $0 { return true } else { return false } }) {
            try tx.feeds.setDisplayName(feedID, Self.displayName(chain))
        }
    }

    static func stored(_ content: ContentStatus?) -> (status: String?, json: [UInt8]?) {
        guard let content else { return (nil, nil) }
        if case .ok(let canonical) = content { return ("ok", canonical) }
        return (content.name, nil)
    }

    /// The highest readable, untombstoned `profile_update`'s display name (7.2).
    static func displayName(_ chain: FeedChain) -> String? {
        for (_, entry) in chain.entries.sorted(by: { $0.key > $1.key }) where entry.accepted && entry.envelope.fields.type == "profile_update" {
            if case .ok(let canonical)? = entry.content, let value = try? CanonicalJSON.parse(canonical) {
                return value["display_name"]?.string
            }
        }
        return nil
    }

    /// One envelope from a peer or relay for the followed feeds in `requested` (8.4, 4.4,
    /// 7.1), committed with its outcome and every change it caused, in one transaction.
    /// What receiving needs from the store: the reader and the feeds it may take envelopes of.
    struct Prepared {
        let reader: FeedReader
        let feeds: [StoredFeed]
    }

    func prepare() throws -> Prepared {
        try store.transaction { tx in
            let own = try self.identity(tx)
            // A restored home takes its own feed back too (7.3).
            let takesOwn = try catchingUp(tx)
            return Prepared(reader: try self.reader(own, tx), feeds: try tx.feeds.feeds().filter { $0.following || ($0.own && takesOwn) })
        }
    }

    func receive(messageID: [UInt8], envelope bytes: [UInt8], requested: Set<[UInt8]>, prepared: Prepared? = nil) -> FeedChunkReceiver.Received {
        do {
            let context = try prepared ?? prepare()
            let contentReader = context.reader
            let feeds = context.feeds.filter { requested.contains($0.feedID) }
            var loaded: [[UInt8]: FeedChain] = [:]
            for feed in feeds { loaded[feed.feedID] = try chain(feed, reader: contentReader) }
            let received = FeedChunkReceiver.receive(messageID: messageID, envelope: bytes, requested: requested, chains: &loaded)
            for (feedID, var chain) in loaded {
                let changes = chain.takeChanges()
                guard !changes.isEmpty else { continue }
                do {
                    try store.transaction { tx in try apply(changes, of: chain, feedID: feedID, tx, now: Self.nowMilliseconds()) }
                    chains.withLock { $0[feedID] = chain }
                } catch {
                    chains.withLock { $0[feedID] = nil }
                    throw error
                }
            }
            return received
        } catch {
            logger.warning("a feed envelope was not stored", metadata: ["error": "\(BurrowNode.describe(error))"])
            return FeedChunkReceiver.Received(result: .failure(.badEnvelope), released: [])
        }
    }

    /// Opens again what waited for a key (a new pair key or group secret).
    func reopenWaiting() throws {
        let (contentReader, feeds) = try store.transaction { tx -> (FeedReader, [StoredFeed]) in
            (try self.reader(try self.identity(tx), tx), try tx.feeds.feeds().filter { $0.following && !$0.own })
        }
        for feed in feeds {
            let waiting = try store.transaction { try $0.feeds.unopened(feedID: feed.feedID) }
            guard !waiting.isEmpty else { continue }
            var chain = try chain(feed, reader: contentReader)
            chain.reopen()
            let changes = chain.takeChanges()
            guard !changes.isEmpty else { continue }
            do {
                try store.transaction { tx in try apply(changes, of: chain, feedID: feed.feedID, tx, now: Self.nowMilliseconds()) }
                chains.withLock { $0[feed.feedID] = chain }
            } catch {
                chains.withLock { $0[feed.feedID] = nil }
                throw error
            }
            let opened: [(feedID: [UInt8], sequence: UInt32)] = changes.compactMap { change in
                guard case .content(let s) = change, case .ok? = chain.entries[s]?.content else { return nil }
                return (feed.feedID, s)
            }
            reopened.withLock { list in
                list += opened
                if list.count > Self.maximumReopened { list.removeFirst(list.count - Self.maximumReopened) }
            }
        }
    }

    /// The entries that became readable since the last call, as `feed` lines show them;
    /// `shown` ones (new entries the caller prints anyway) are left out.
    public func takeReopened(excluding shown: [(feedID: [UInt8], sequence: UInt32)] = []) -> [FeedEntryView] {
        let taken = reopened.withLock { list in defer { list = [] }; return list }
            .filter { entry in !shown.contains { $0.feedID == entry.feedID && $0.sequence == entry.sequence } }
        do { return try readable(taken) } catch {
            logger.warning("entries opened late not shown", metadata: ["error": "\(BurrowNode.describe(error))"])
            return []
        }
    }
}
