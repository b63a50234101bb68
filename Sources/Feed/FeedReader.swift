import Crypto

/// What a reader holds to open contents (feed.md 5): its feed id and journal key, the pair keys
/// of each author (newest first), and the feed secrets of the group epochs it was in.
public struct FeedReader: Sendable {
    public let feedID: [UInt8]
    public let journalKey: [UInt8]?
    public var pairKeys: [[UInt8]: [[UInt8]]]
    /// Audience string (`group:…`) → epoch → feed secret.
    public var groupSecrets: [String: [UInt64: [UInt8]]]

    public init(feedID: [UInt8], journalKey: [UInt8]?, pairKeys: [[UInt8]: [[UInt8]]] = [:], groupSecrets: [String: [UInt64: [UInt8]]] = [:]) {
        self.feedID = feedID
        self.journalKey = journalKey
        self.pairKeys = pairKeys
        self.groupSecrets = groupSecrets
    }

    static let maximumSlots = 512
    static let slotCount = 64
    static let saltCount = 16

    /// Opens an accepted envelope (5.5), then checks its content (6).
    public func open(_ envelope: Envelope, authorIdentityKey: [UInt8]) -> ContentStatus {
        let fields = envelope.fields
        guard FeedContent.knownTypes.contains(fields.type) else { return .opaque }
        let plaintext: [UInt8]
        do {
            switch fields.audienceName {
            case "self":
                guard fields.feedID == feedID, let journalKey else { return .noKey }
                plaintext = try FeedAudience.openSelf(fields.contentEncoded, journalKey: journalKey, binding: envelope.binding)
            case "contacts":
                var keys = pairKeys[fields.feedID] ?? []
                if fields.feedID == feedID, let journalKey { keys.insert(journalKey, at: 0) }
                guard let opened = try FeedAudience.openContacts(fields.contentEncoded, author: fields.feedID, reader: feedID, keys: keys,
                                                                 binding: envelope.binding) else { return .noKey }
                plaintext = opened
            case "group":
                guard fields.contentEncoded.count >= 8 else { return .decryptFailed }
                let epoch = fields.contentEncoded.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                guard let secret = groupSecrets[fields.audience]?[epoch] else { return .noKey }
                plaintext = try FeedAudience.openGroup(fields.contentEncoded, feedSecret: secret, binding: envelope.binding)
            default:
                return .opaque
            }
        } catch {
            return .decryptFailed
        }
        do {
            _ = try FeedContent.validate(plaintext, type: fields.type, authorIdentityKey: authorIdentityKey)
            return .ok(canonical: plaintext)
        } catch .typeMismatch {
            return .typeMismatch
        } catch {
            return .badContent
        }
    }
}

/// The sealing of each audience (feed.md 5): ChaCha20-Poly1305 under a key and nonce HKDF
/// derives from a fresh 16-byte salt carried in the blob, with the envelope's binding as AD.
public enum FeedAudience {
    static let selfLabel = Array("burrow-feed-v1:self".utf8)
    static let slotLabel = Array("burrow-feed-v1:contacts-slot".utf8)
    static let bodyLabel = Array("burrow-feed-v1:contacts-body".utf8)
    static let groupLabel = Array("burrow-feed-v1:group-content".utf8)

    struct OpenFailed: Error {}

    static func hkdf(_ ikm: [UInt8], salt: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: salt, info: info, outputByteCount: count)
            .withUnsafeBytes { Array($0) }
    }

    static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], binding: [UInt8]) throws -> [UInt8] {
        let box = try ChaChaPoly.seal(plaintext, using: SymmetricKey(data: key), nonce: ChaChaPoly.Nonce(data: nonce), authenticating: binding)
        return Array(box.ciphertext) + Array(box.tag)
    }

    static func open(_ sealed: some Collection<UInt8>, key: [UInt8], nonce: [UInt8], binding: [UInt8]) throws -> [UInt8] {
        let bytes = Array(sealed)
        guard bytes.count >= 16 else { throw OpenFailed() }
        let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: bytes.dropLast(16), tag: bytes.suffix(16))
        return Array(try ChaChaPoly.open(box, using: SymmetricKey(data: key), authenticating: binding))
    }

    // MARK: self (5.1)

    public static func sealSelf(_ content: [UInt8], journalKey: [UInt8], salt: [UInt8], binding: [UInt8]) throws -> [UInt8] {
        let derived = hkdf(journalKey, salt: salt, info: selfLabel, count: 44)
        return salt + (try seal(content, key: Array(derived.prefix(32)), nonce: Array(derived.suffix(12)), binding: binding))
    }

    static func openSelf(_ blob: [UInt8], journalKey: [UInt8], binding: [UInt8]) throws -> [UInt8] {
        guard blob.count > 16 + 16 else { throw OpenFailed() }
        let salt = Array(blob.prefix(16))
        let derived = hkdf(journalKey, salt: salt, info: selfLabel, count: 44)
        return try open(blob.dropFirst(16), key: Array(derived.prefix(32)), nonce: Array(derived.suffix(12)), binding: binding)
    }

    // MARK: contacts (5.2)

    /// The plaintext, nil when none of `keys` has a slot (`no_key`); throws for a malformed blob
    /// or an AEAD failure (`decrypt_failed`).
    static func openContacts(_ blob: [UInt8], author: [UInt8], reader: [UInt8], keys: [[UInt8]], binding: [UInt8]) throws -> [UInt8]? {
        guard blob.count >= 16 + 2 else { throw OpenFailed() }
        let salt = Array(blob[0..<16])
        let n = Int(blob[16]) << 8 | Int(blob[17])
        guard (1...FeedReader.maximumSlots).contains(n), blob.count >= 18 + n * FeedReader.slotCount + 16 else { throw OpenFailed() }
        var slots: [[UInt8]] = []
        for index in 0..<n {
            let start = 18 + index * FeedReader.slotCount
            slots.append(Array(blob[start..<start + FeedReader.slotCount]))
        }
        for (a, b) in zip(slots, slots.dropFirst()) where !a.prefix(16).lexicographicallyPrecedes(b.prefix(16)) { throw OpenFailed() }
        for key in keys {
            let derived = hkdf(key, salt: salt, info: slotLabel + author + reader, count: 60)
            let tag = Array(derived[0..<16])
            guard let slot = slots.first(where: { Array($0.prefix(16)) == tag }) else { continue }
            let cek = try open(slot.dropFirst(16), key: Array(derived[16..<48]), nonce: Array(derived[48..<60]), binding: binding)
            let body = hkdf(cek, salt: salt, info: bodyLabel, count: 44)
            return try open(blob.dropFirst(18 + n * FeedReader.slotCount), key: Array(body.prefix(32)), nonce: Array(body.suffix(12)),
                            binding: binding)
        }
        return nil
    }

    // MARK: group (5.4)

    static func openGroup(_ blob: [UInt8], feedSecret: [UInt8], binding: [UInt8]) throws -> [UInt8] {
        guard blob.count > 8 + 16 + 16 else { throw OpenFailed() }
        let epoch = Array(blob.prefix(8))
        let salt = Array(blob[8..<24])
        let derived = hkdf(feedSecret, salt: salt, info: groupLabel + epoch, count: 44)
        return try open(blob.dropFirst(24), key: Array(derived.prefix(32)), nonce: Array(derived.suffix(12)), binding: binding)
    }
}

extension FeedAudience {
    /// A contacts blob (5.2) for `recipients` (feed id → pair key; the author's own slot is one
    /// of them, keyed with its journal key), slots sorted by tag.
    public static func sealContacts(_ content: [UInt8], author: [UInt8], recipients: [(feedID: [UInt8], key: [UInt8])], salt: [UInt8],
                                    cek: [UInt8], binding: [UInt8]) throws -> [UInt8] {
        guard (1...FeedReader.maximumSlots).contains(recipients.count) else { throw OpenFailed() }
        var slots: [[UInt8]] = []
        for recipient in recipients {
            let derived = hkdf(recipient.key, salt: salt, info: slotLabel + author + recipient.feedID, count: 60)
            slots.append(Array(derived[0..<16]) + (try seal(cek, key: Array(derived[16..<48]), nonce: Array(derived[48..<60]), binding: binding)))
        }
        slots.sort { $0.prefix(16).lexicographicallyPrecedes($1.prefix(16)) }
        let body = hkdf(cek, salt: salt, info: bodyLabel, count: 44)
        let count = UInt16(recipients.count)
        return salt + [UInt8(count >> 8), UInt8(count & 0xFF)] + slots.flatMap { $0 }
            + (try seal(content, key: Array(body.prefix(32)), nonce: Array(body.suffix(12)), binding: binding))
    }

    /// A group blob (5.4) for epoch `epoch` with its feed secret.
    public static func sealGroup(_ content: [UInt8], feedSecret: [UInt8], epoch: UInt64, salt: [UInt8], binding: [UInt8]) throws -> [UInt8] {
        let epochBytes = PQBundle.u64(epoch)
        let derived = hkdf(feedSecret, salt: salt, info: groupLabel + epochBytes, count: 44)
        return epochBytes + salt + (try seal(content, key: Array(derived.prefix(32)), nonce: Array(derived.suffix(12)), binding: binding))
    }
}

/// The keys and identifiers of feed.md 2 that derive from the Pigeon identity or a group.
public enum FeedKeys {
    /// feed_id = SHA-256(I).
    public static func feedID(identityKey: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: identityKey)) }

    /// J = HKDF(seed of I, "", "burrow-feed-v1:journal", 32).
    public static func journalKey(identitySeed: [UInt8]) -> [UInt8] {
        FeedAudience.hkdf(identitySeed, salt: [], info: Array("burrow-feed-v1:journal".utf8), count: 32)
    }

    /// The audience `group:{id}` of a Marmot group: SHA-256("burrow-feed-v1:group-id" ‖ MLS group id).
    public static func groupAudience(mlsGroupID: [UInt8]) -> String {
        "group:" + Base64URL.encode(Array(SHA256.hash(data: Array("burrow-feed-v1:group-id".utf8) + mlsGroupID)))
    }

    /// The MLS exporter label and context of a group's feed secret of one epoch.
    public static let exporterLabel = "burrow-feed-v1"
    public static let exporterContext = Array("group-content".utf8)
}
