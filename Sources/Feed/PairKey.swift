import Crypto

/// The pair key of two contacts (feed.md 5.3, step 4): both parties' X25519 static keys and one
/// ML-KEM-768 encapsulation to each party's bundle, combined so that `K` stays secret while
/// any one of the three shared secrets does, and neither party alone chooses it.
public enum PairKey {
    static let label = Array("burrow-feed-v1:contacts-key".utf8)

    /// One side of the pair: its bundle, the ciphertext encapsulated to that bundle, and the
    /// shared secret of that ciphertext.
    public struct Side: Sendable {
        public let bundle: PQBundle
        public let ciphertext: [UInt8]
        public let sharedSecret: [UInt8]
        public init(bundle: PQBundle, ciphertext: [UInt8], sharedSecret: [UInt8]) {
            self.bundle = bundle
            self.ciphertext = ciphertext
            self.sharedSecret = sharedSecret
        }
        var feedID: [UInt8] { FeedKeys.feedID(identityKey: bundle.identityKey) }
    }

    /// What goes into `K`: the X25519 result, and the two sides ordered by feed id (lo first).
    public static func inputs(staticPrivate: Curve25519.KeyAgreement.PrivateKey, mine: Side, theirs: Side) throws
        -> (x25519: [UInt8], ikm: [UInt8], info: [UInt8]) {
        let peer = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: theirs.bundle.staticKey)
        let shared = try staticPrivate.sharedSecretFromKeyAgreement(with: peer).withUnsafeBytes { Array($0) }
        // RFC 7748: an all-zero result (a low-order point) is an error.
        guard shared.contains(where: { $0 != 0 }) else { throw FeedError.badBundle }
        let (lo, hi) = mine.feedID.lexicographicallyPrecedes(theirs.feedID) ? (mine, theirs) : (theirs, mine)
        let ikm = Array(SHA256.hash(data: shared + lo.sharedSecret + hi.sharedSecret))
        let info = label + lo.bundle.hash + hi.bundle.hash + Array(SHA256.hash(data: lo.ciphertext)) + Array(SHA256.hash(data: hi.ciphertext))
        return (shared, ikm, info)
    }

    /// K = HKDF(IKM = SHA-256(x_ss ‖ ss_lo ‖ ss_hi), "", info, 32).
    public static func derive(staticPrivate: Curve25519.KeyAgreement.PrivateKey, mine: Side, theirs: Side) throws -> [UInt8] {
        let (_, ikm, info) = try inputs(staticPrivate: staticPrivate, mine: mine, theirs: theirs)
        return FeedAudience.hkdf(ikm, salt: [], info: info, count: 32)
    }
}
