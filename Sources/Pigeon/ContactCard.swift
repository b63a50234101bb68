import Nostr

/// Section 2.3: a contact card, the signed statement of who a node is in DMs and where it
/// reads them.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | version = 1 |
/// | 1 | 128 | bundle |
/// | 129 | 32 | `N` (secp256k1 x-only) |
/// | 161 | 64 | link: BIP-340 by `N` over SHA-256("burrow-pigeon-v1:nostr-link" ‖ I ‖ N) |
/// | 225 | 8 | created_at (ms) |
/// | 233 | 1 | nickname length k ≤ 32, then k bytes of UTF-8 |
/// | | 1 | relay count ≤ 4, then each: u8 length 1–100 ‖ `ws://`/`wss://` URL of bytes 0x21–0x7e |
/// | | 64 | Ed25519 by `I` over "burrow-pigeon-v1:card" ‖ all preceding bytes |
///
/// Untrusted bytes decode into `UnverifiedContactCard` (layout only, `bad_card`); only
/// `verified()` (bundle, link, card signature, in that order: `bad_signature`) yields a
/// `ContactCard`, the only type the engine stores or trusts.
public struct ContactCard: Sendable, Hashable {
    public static let minimumLength = 299
    public static let maximumLength = 735
    public static let maximumNicknameBytes = 32
    public static let maximumRelays = 4
    public static let maximumRelayURLBytes = 100
    /// Text form: bech32m under this human-readable part.
    public static let textPrefix = "burrowcard"
    /// Decoders take text up to this many characters (no 90-character limit).
    public static let maximumTextLength = 1500

    public let bundle: IdentityBundle
    /// The Nostr key `N`.
    public let nostrKey: PublicKey
    public let nostrLink: [UInt8]
    /// Milliseconds since the epoch.
    public let createdAt: UInt64
    public let nickname: String
    public let relays: [String]
    public let signature: [UInt8]
    /// The exact encoding (what was signed, what is stored and sent).
    public let bytes: [UInt8]

    public var identityKey: Ed25519PublicKey { bundle.identityKey }
    public var staticKey: X25519PublicKey { bundle.staticKey }

    // MARK: Issuing

    /// The digest `N` signs: SHA-256(domain ‖ I ‖ N).
    public static func linkDigest(identity: Ed25519PublicKey, nostrKey: PublicKey) -> [UInt8] {
        Primitives.sha256(Domain.nostrLink + identity.bytes + nostrKey.bytes)
    }

    /// Issues a card: a bundle for `staticKey`, the link signed by `nostr` (BIP-340 with
    /// `auxRand`, 32 bytes) and the card signature by `identity`. Throws `bad_card` for a
    /// nickname or relay list the layout cannot carry.
    public static func issue(
        identity: Ed25519PrivateKey, staticKey: X25519PublicKey, nostr: Keys, auxRand: [UInt8],
        createdAt: UInt64, nickname: String, relays: [String]
    ) throws(PigeonError) -> ContactCard {
        guard let link = try? nostr.sign(linkDigest(identity: identity.publicKey, nostrKey: nostr.publicKey), auxRand: auxRand) else {
            throw .badSignature
        }
        return try issue(identity: identity, staticKey: staticKey, nostrKey: nostr.publicKey, nostrLink: link,
                         createdAt: createdAt, nickname: nickname, relays: relays)
    }

    /// Reissues with an existing link (it covers only `I` and `N`, which a new card for new
    /// relays, nickname or static key keeps): no Nostr secret needed. created_at is
    /// max(`now`, previous + 1) as section 2.3 asks.
    public func reissued(
        identity: Ed25519PrivateKey, staticKey: X25519PublicKey, now: UInt64, nickname: String, relays: [String]
    ) throws(PigeonError) -> ContactCard {
        guard identity.publicKey == identityKey else { throw .identityMismatch }
        return try Self.issue(identity: identity, staticKey: staticKey, nostrKey: nostrKey, nostrLink: nostrLink,
                              createdAt: max(now, createdAt + 1), nickname: nickname, relays: relays)
    }

    static func issue(
        identity: Ed25519PrivateKey, staticKey: X25519PublicKey, nostrKey: PublicKey, nostrLink: [UInt8],
        createdAt: UInt64, nickname: String, relays: [String]
    ) throws(PigeonError) -> ContactCard {
        guard let bundle = try? IdentityBundle(identity: identity, staticKey: staticKey) else { throw .badSignature }
        var out: [UInt8] = [ProfileVersion.v1]
        out += bundle.bytes
        out += nostrKey.bytes
        out += nostrLink
        out.appendBigEndian(createdAt)
        let nick = Array(nickname.utf8)
        out.append(UInt8(truncatingIfNeeded: nick.count))
        out += nick
        out.append(UInt8(truncatingIfNeeded: relays.count))
        for relay in relays {
            let url = Array(relay.utf8)
            out.append(UInt8(truncatingIfNeeded: url.count))
            out += url
        }
        guard let signature = try? identity.sign(Domain.card + out) else { throw .badSignature }
        out += signature
        // Decoding what we wrote applies every layout rule (nickname and relay limits) and
        // checks the signatures once more.
        return try UnverifiedContactCard(bytes: out).verified()
    }

    // MARK: Decoding

    /// Decodes and verifies a binary card.
    public init(bytes: [UInt8]) throws(PigeonError) {
        self = try UnverifiedContactCard(bytes: bytes).verified()
    }

    /// Decodes and verifies the text form (`burrowcard1…`, lower or upper case, never mixed).
    public init(text: String) throws(PigeonError) {
        self = try UnverifiedContactCard(text: text).verified()
    }

    fileprivate init(verified card: UnverifiedContactCard, nostrKey: PublicKey) {
        bundle = card.bundle
        self.nostrKey = nostrKey
        nostrLink = card.nostrLink
        createdAt = card.createdAt
        nickname = card.nickname
        relays = card.relays
        signature = card.signature
        bytes = card.bytes
    }

    /// The lower-case text form.
    public var text: String { Bech32m.encode(hrp: Self.textPrefix, data: bytes) }

    /// The upper-case text form, for QR codes (alphanumeric mode).
    public var qrText: String { text.uppercased() }

    public static func == (lhs: ContactCard, rhs: ContactCard) -> Bool { constantTimeEqual(lhs.bytes, rhs.bytes) }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
}

/// A card whose layout is valid (section 2.3's `bad_card` rules) but whose signatures are not
/// yet checked. Nothing in the engine accepts this type.
public struct UnverifiedContactCard: Sendable, Hashable {
    public let bundle: IdentityBundle
    /// `N`, or nil when its bytes are not an x-only point: such a card cannot carry a valid
    /// link, so it fails the link check (`bad_signature`) in `verified()`.
    public let nostrKey: PublicKey?
    public let nostrLink: [UInt8]
    public let createdAt: UInt64
    public let nickname: String
    public let relays: [String]
    public let signature: [UInt8]
    public let bytes: [UInt8]

    /// Parses the text form. Everything that is not bech32m of a well-formed card under
    /// `burrowcard` (checksum, case, prefix, length over 1500) is `bad_card`.
    public init(text: String) throws(PigeonError) {
        guard text.utf8.count <= ContactCard.maximumTextLength,
              let decoded = try? Bech32m.decode(text, maximumLength: ContactCard.maximumTextLength),
              decoded.hrp == ContactCard.textPrefix
        else { throw .badCard }
        try self.init(bytes: decoded.data)
    }

    /// Parses the binary layout; `bad_card` for another version, lengths out of range, bytes
    /// after the signature, bad UTF-8 or URLs.
    public init(bytes: [UInt8]) throws(PigeonError) {
        guard bytes.count >= ContactCard.minimumLength, bytes.count <= ContactCard.maximumLength else { throw .badCard }
        var reader = ByteReader(bytes)
        do {
            guard try reader.readByte() == ProfileVersion.v1 else { throw PigeonError.badCard }
            bundle = try IdentityBundle(layout: reader.read(IdentityBundle.length))
            let nostrKeyBytes = try reader.read(32)
            nostrKey = try? PublicKey(bytes: nostrKeyBytes)
            nostrLink = try reader.read(64)
            createdAt = try reader.readInteger(UInt64.self)
            let nickLength = Int(try reader.readByte())
            guard nickLength <= ContactCard.maximumNicknameBytes,
                  let nick = String(validating: try reader.read(nickLength), as: UTF8.self)
            else { throw PigeonError.badCard }
            nickname = nick
            let relayCount = Int(try reader.readByte())
            guard relayCount <= ContactCard.maximumRelays else { throw PigeonError.badCard }
            var relays: [String] = []
            for _ in 0..<relayCount {
                let length = Int(try reader.readByte())
                guard (1...ContactCard.maximumRelayURLBytes).contains(length) else { throw PigeonError.badCard }
                relays.append(try Self.relayURL(try reader.read(length)))
            }
            self.relays = relays
            signature = try reader.read(64)
            guard reader.isAtEnd else { throw PigeonError.badCard }
        } catch let error as PigeonError {
            throw error
        } catch {
            throw .badCard  // truncated
        }
        self.bytes = bytes
    }

    /// A relay hint: `ws://` or `wss://` and printable ASCII without spaces (0x21–0x7e).
    private static func relayURL(_ bytes: [UInt8]) throws(PigeonError) -> String {
        guard bytes.allSatisfy({ (0x21...0x7e).contains($0) }) else { throw .badCard }
        let url = String(decoding: bytes, as: UTF8.self)
        guard url.hasPrefix("ws://") || url.hasPrefix("wss://") else { throw .badCard }
        guard url.utf8.count > (url.hasPrefix("wss://") ? 6 : 5) else { throw .badCard }
        return url
    }

    /// Checks the bundle signature, the Nostr link and the card signature, in that order.
    public func verified() throws(PigeonError) -> ContactCard {
        guard bundle.isValid else { throw .badSignature }
        guard let nostrKey,
              Schnorr.verify(signature: nostrLink,
                             message: ContactCard.linkDigest(identity: bundle.identityKey, nostrKey: nostrKey),
                             publicKey: nostrKey)
        else { throw .badSignature }
        let signed = Array(bytes[0..<(bytes.count - 64)])
        guard bundle.identityKey.isValidSignature(signature, for: Domain.card + signed) else { throw .badSignature }
        return ContactCard(verified: self, nostrKey: nostrKey)
    }
}
