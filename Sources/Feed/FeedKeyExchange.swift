import Crypto

/// A feed-keys message (feed.md 5.3), the Pigeon DM content of kind 4:
/// `0x01 ‖ bundle (1321) ‖ P (32) ‖ count u8 ‖ count × (target (32) ‖ ct (1088))`, 1,355 bytes
/// with no encapsulation or 2,475 with one.
public struct FeedKeysBody: Equatable, Sendable {
    public static let version: UInt8 = 0x01
    public static let ciphertextCount = 1088
    public static let plainCount = 1355
    public static let withEncapsulationCount = 2475

    public let bundle: PQBundle
    public let presenceKey: [UInt8]
    /// SHA-256 of the recipient's bundle the ciphertext encapsulates to, and the ciphertext.
    public let encapsulation: (target: [UInt8], ciphertext: [UInt8])?

    public static func == (a: Self, b: Self) -> Bool { a.bytes == b.bytes }

    public var bytes: [UInt8] {
        var out = [Self.version] + bundle.bytes + presenceKey
        if let encapsulation {
            out += [1] + encapsulation.target + encapsulation.ciphertext
        } else {
            out.append(0)
        }
        return out
    }

    /// `bad_feed_keys` for another length, version or count; `bad_bundle` for a bundle that does
    /// not decode.
    public static func decode(_ bytes: [UInt8]) throws(FeedError) -> FeedKeysBody {
        guard bytes.count == plainCount || bytes.count == withEncapsulationCount, bytes[0] == version else { throw .badFeedKeys }
        let count = bytes[plainCount - 1]
        guard (count == 0 && bytes.count == plainCount) || (count == 1 && bytes.count == withEncapsulationCount) else { throw .badFeedKeys }
        let bundle = try PQBundle.decode(Array(bytes[1..<1 + PQBundle.count]))
        let presence = Array(bytes[1 + PQBundle.count..<plainCount - 1])
        var encapsulation: ([UInt8], [UInt8])?
        if count == 1 {
            encapsulation = (Array(bytes[plainCount..<plainCount + 32]), Array(bytes[plainCount + 32..<withEncapsulationCount]))
        }
        return FeedKeysBody(bundle: bundle, presenceKey: presence, encapsulation: encapsulation)
    }
}

/// One node's side of the feed-keys exchange (feed.md 5.3), sans-I/O: its own bundles with their
/// ML-KEM keys, and per contact the contact's current bundle and presence key, the
/// encapsulations made and received, and the pair keys they complete. Both sides encapsulate;
/// a pair key exists for (my bundle, their bundle) once both directions are kept.
public struct FeedKeyExchange: Sendable {
    /// Encapsulates to a bundle: swift-crypto's ML-KEM in the node (fresh randomness), a fixed
    /// ciphertext in the vector runner (which has no `Encaps_internal`).
    public typealias Encapsulate = (PQBundle) throws -> (ciphertext: [UInt8], sharedSecret: [UInt8])

    struct OwnBundle: Sendable {
        let bundle: PQBundle
        let kemSeed: [UInt8]
    }

    /// Encapsulations and pair keys are per (my bundle hash, their bundle hash).
    struct BundlePair: Hashable, Sendable {
        let mine: [UInt8]
        let theirs: [UInt8]
    }

    public struct PairKeyRecord: Sendable {
        public let mine: [UInt8]
        public let theirs: [UInt8]
        public let key: [UInt8]

        public init(mine: [UInt8], theirs: [UInt8], key: [UInt8]) {
            self.mine = mine
            self.theirs = theirs
            self.key = key
        }
    }

    struct Contact: Sendable {
        var bundle: PQBundle?
        var presenceKey: [UInt8]?
        var inbound: [BundlePair: (ciphertext: [UInt8], sharedSecret: [UInt8])] = [:]
        var outbound: [BundlePair: (ciphertext: [UInt8], sharedSecret: [UInt8])] = [:]
        var pairKeys: [PairKeyRecord] = []
    }

    let identitySeed: [UInt8]
    let staticKey: Curve25519.KeyAgreement.PrivateKey
    var own: [OwnBundle] = []
    var contacts: [[UInt8]: Contact] = [:]

    public init(identitySeed: [UInt8], staticKey: Curve25519.KeyAgreement.PrivateKey) {
        self.identitySeed = identitySeed
        self.staticKey = staticKey
    }

    public var currentBundle: PQBundle? { own.last?.bundle }

    /// A new own bundle (on creation, every 30 days, and when a contact is removed).
    public mutating func rotate(createdAt: UInt64, kemSeed: [UInt8]) throws -> PQBundle {
        let identity = try Curve25519.Signing.PrivateKey(rawRepresentation: identitySeed)
        let (bundle, _) = try PQBundle.make(identity: identity, staticKey: Array(staticKey.publicKey.rawRepresentation), createdAt: createdAt,
                                            kemSeed: kemSeed)
        own.append(OwnBundle(bundle: bundle, kemSeed: kemSeed))
        return bundle
    }

    /// The body to send the contact with identity key `peer` (step 1): our current bundle and
    /// presence key, with an encapsulation to the contact's bundle when we have not yet made one
    /// from our current bundle.
    public mutating func body(for peer: [UInt8], encapsulate: Encapsulate) throws -> FeedKeysBody {
        guard let mine = currentBundle else { throw FeedError.badBundle }
        var contact = contacts[peer] ?? Contact()
        var encapsulation: ([UInt8], [UInt8])?
        if let theirs = contact.bundle {
            let pair = BundlePair(mine: mine.hash, theirs: theirs.hash)
            if let made = contact.outbound[pair] {
                encapsulation = (theirs.hash, made.ciphertext)
            } else {
                let made = try encapsulate(theirs)
                contact.outbound[pair] = made
                encapsulation = (theirs.hash, made.ciphertext)
            }
        }
        contacts[peer] = contact
        return FeedKeysBody(bundle: mine, presenceKey: FeedKeys.presenceKey(identitySeed: identitySeed, createdAt: mine.createdAt),
                            encapsulation: encapsulation)
    }

    /// A body from the contact whose DM session authenticated `peer` (steps 2–4): its bundle
    /// becomes the contact's current one (refused when it is another identity's, or older than
    /// the one held), a ciphertext to one of our bundles is opened and kept, and a reply carrying
    /// our own encapsulation to its bundle is returned when we had not made one yet.
    public mutating func receive(_ bytes: [UInt8], from peer: [UInt8], encapsulate: Encapsulate) throws -> FeedKeysBody? {
        let body = try FeedKeysBody.decode(bytes)
        guard body.bundle.identityKey == peer else { throw FeedError.identityMismatch }
        guard let mine = currentBundle else { throw FeedError.badBundle }
        var contact = contacts[peer] ?? Contact()
        if let held = contact.bundle, held.hash != body.bundle.hash, body.bundle.createdAt <= held.createdAt {
            throw FeedError.bundleOutdated
        }
        contact.bundle = body.bundle
        contact.presenceKey = body.presenceKey
        if let encapsulation = body.encapsulation, let target = own.first(where: { $0.bundle.hash == encapsulation.target }) {
            let kem = try MLKEM768.PrivateKey(seedRepresentation: target.kemSeed, publicKey: nil)
            let shared = try kem.decapsulate(encapsulation.ciphertext).withUnsafeBytes { Array($0) }
            contact.inbound[BundlePair(mine: target.bundle.hash, theirs: body.bundle.hash)] = (encapsulation.ciphertext, shared)
        }
        let pair = BundlePair(mine: mine.hash, theirs: body.bundle.hash)
        var reply: FeedKeysBody?
        if contact.outbound[pair] == nil {
            let made = try encapsulate(body.bundle)
            contact.outbound[pair] = made
            reply = FeedKeysBody(bundle: mine, presenceKey: FeedKeys.presenceKey(identitySeed: identitySeed, createdAt: mine.createdAt),
                                 encapsulation: (body.bundle.hash, made.ciphertext))
        }
        if let inbound = contact.inbound[pair], let outbound = contact.outbound[pair], !contact.pairKeys.contains(where: {
            $0.mine == pair.mine && $0.theirs == pair.theirs
        }) {
            let key = try PairKey.derive(staticPrivate: staticKey,
                                         mine: PairKey.Side(bundle: mine, ciphertext: inbound.ciphertext, sharedSecret: inbound.sharedSecret),
                                         theirs: PairKey.Side(bundle: body.bundle, ciphertext: outbound.ciphertext, sharedSecret: outbound.sharedSecret))
            contact.pairKeys.append(PairKeyRecord(mine: pair.mine, theirs: pair.theirs, key: key))
        }
        contacts[peer] = contact
        return reply
    }

    /// A contact's bundle learnt from its `key_rotation` entry (feed.md 6): it becomes the
    /// contact's current bundle when newer than the one held (its presence key comes with the
    /// contact's own feed-keys body). Returns whether it was newer: the next body to the
    /// contact then carries an encapsulation to it.
    public mutating func learn(_ bundle: PQBundle, from peer: [UInt8]) throws(FeedError) -> Bool {
        guard bundle.identityKey == peer else { throw .identityMismatch }
        var contact = contacts[peer] ?? Contact()
        if let held = contact.bundle, held.hash == bundle.hash || held.createdAt >= bundle.createdAt { return false }
        contact.bundle = bundle
        contacts[peer] = contact
        return true
    }

    /// The pair keys with `peer`, newest last.
    public func pairKeys(with peer: [UInt8]) -> [PairKeyRecord] { contacts[peer]?.pairKeys ?? [] }

    /// The contact's presence key, from its newest bundle.
    public func presenceKey(of peer: [UInt8]) -> [UInt8]? { contacts[peer]?.presenceKey }

    /// swift-crypto's ML-KEM-768 encapsulation to a bundle, with fresh randomness.
    public static func encapsulateFresh(_ bundle: PQBundle) throws -> (ciphertext: [UInt8], sharedSecret: [UInt8]) {
        let result = try MLKEM768.PublicKey(rawRepresentation: bundle.encapsulationKey).encapsulate()
        return (Array(result.encapsulated), result.sharedSecret.withUnsafeBytes { Array($0) })
    }
}
