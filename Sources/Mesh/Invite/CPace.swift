import CSodium
import Crypto

/// The CPace-style balanced PAKE of section 10.3 on ristretto255 (RFC 9496), with libsodium's
/// group operations. The 6-digit code only enters through the generator, so a listener learns
/// nothing about it and an active party gets one guess per attempt.
///
///     G   = ristretto255_from_hash(SHA-512("burrow-mesh-v1:cpace" ‖ code ‖ invite_id ‖ nonce ‖ I ‖ J))
///     Yb  = yb·G,  Ya = ya·G,  K = ya·Yb = yb·Ya
///     ISK = SHA-512("burrow-mesh-v1:isk" ‖ invite_id ‖ nonce ‖ I ‖ J ‖ Yb ‖ Ya ‖ K)
public enum CPace {
    public static let pointLength = 32
    public static let scalarLength = 32

    /// A secret scalar in [1, L−1], 32 bytes little-endian; fresh per attempt. Never printed.
    public struct Scalar: Sendable, CustomStringConvertible {
        let bytes: [UInt8]

        /// A given scalar (test vectors). Must be canonical (< L) and non-zero.
        public init(bytes: [UInt8]) throws(MeshError) {
            guard bytes.count == scalarLength, bytes.contains(where: { $0 != 0 }) else { throw .invalidArgument }
            // Reducing a canonical scalar leaves it unchanged; anything else is not canonical.
            var wide = bytes + [UInt8](repeating: 0, count: 32)
            var reduced = [UInt8](repeating: 0, count: 32)
            crypto_core_ristretto255_scalar_reduce(&reduced, &wide)
            guard reduced == bytes else { throw .invalidArgument }
            self.bytes = bytes
        }

        /// Uniform in [1, L−1] from 64 bytes of the injected random source, reduced mod L
        /// (libsodium's `scalar_reduce`; the bias of a 512-bit reduction is negligible).
        public static func random<R: RandomNumberGenerator>(using rng: inout R) -> Scalar {
            while true {
                var wide = (0..<64).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
                var reduced = [UInt8](repeating: 0, count: 32)
                crypto_core_ristretto255_scalar_reduce(&reduced, &wide)
                if let scalar = try? Scalar(bytes: reduced) { return scalar }
            }
        }

        public var description: String { "CPace.Scalar(<redacted>)" }
    }

    /// The password-derived generator. `code` is the 6 ASCII digits.
    public static func generator(code: String, inviteID: [UInt8], nonce: [UInt8], inviter: MeshID, joiner: MeshID) -> [UInt8] {
        var hasher = SHA512()
        hasher.update(data: Domain.cpace)
        hasher.update(data: Array(code.utf8))
        hasher.update(data: inviteID)
        hasher.update(data: nonce)
        hasher.update(data: inviter.bytes)
        hasher.update(data: joiner.bytes)
        var digest = Array(hasher.finalize())
        var point = [UInt8](repeating: 0, count: pointLength)
        crypto_core_ristretto255_from_hash(&point, &digest)
        return point
    }

    /// `scalar · point` for a point of ours (the generator): the public share.
    public static func share(_ scalar: Scalar, generator: [UInt8]) throws(MeshError) -> [UInt8] {
        try multiply(scalar, generator)
    }

    /// `scalar · peerShare`, refusing a peer share that is non-canonical, not a point, or the
    /// identity, and an identity result (`bad_point`: the attempt aborts).
    public static func sharedPoint(_ scalar: Scalar, peerShare: [UInt8]) throws(MeshError) -> [UInt8] {
        guard peerShare.count == pointLength, peerShare.contains(where: { $0 != 0 }) else { throw .badPoint }
        var share = peerShare
        guard crypto_core_ristretto255_is_valid_point(&share) == 1 else { throw .badPoint }
        return try multiply(scalar, share)
    }

    private static func multiply(_ scalar: Scalar, _ point: [UInt8]) throws(MeshError) -> [UInt8] {
        var n = scalar.bytes, p = point
        var q = [UInt8](repeating: 0, count: pointLength)
        // Returns -1 for an invalid point or an identity result.
        guard crypto_scalarmult_ristretto255(&q, &n, &p) == 0, q.contains(where: { $0 != 0 }) else { throw .badPoint }
        return q
    }

    /// ISK = SHA-512("burrow-mesh-v1:isk" ‖ invite_id ‖ nonce ‖ I ‖ J ‖ Yb ‖ Ya ‖ K).
    public static func isk(context: JoinContext, yb: [UInt8], ya: [UInt8], k: [UInt8]) -> [UInt8] {
        var hasher = SHA512()
        hasher.update(data: Domain.isk)
        hasher.update(data: context.inviteID)
        hasher.update(data: context.nonce)
        hasher.update(data: context.inviter.bytes)
        hasher.update(data: context.joiner.bytes)
        hasher.update(data: yb)
        hasher.update(data: ya)
        hasher.update(data: k)
        return Array(hasher.finalize())
    }
}

/// What binds one attempt: the invite, the joiner's nonce and both mesh ids (`I`, `J`).
public struct JoinContext: Sendable, Hashable {
    public let inviteID: [UInt8]
    public let nonce: [UInt8]
    public let inviter: MeshID
    public let joiner: MeshID

    public init(inviteID: [UInt8], nonce: [UInt8], inviter: MeshID, joiner: MeshID) {
        self.inviteID = inviteID
        self.nonce = nonce
        self.inviter = inviter
        self.joiner = joiner
    }

    /// `AD = type u8 ‖ invite_id ‖ nonce ‖ I ‖ J`.
    func associatedData(_ type: PacketType) -> [UInt8] {
        [type.rawValue] + inviteID + nonce + inviter.bytes + joiner.bytes
    }
}

/// The four message keys of one attempt, `k_L = HKDF-SHA256(ISK, info "burrow-mesh-v1:join:" ‖ L)`.
/// Each seals exactly one plaintext (with a zero nonce), so no key ever seals two.
public struct JoinKeys: Sendable, CustomStringConvertible {
    public enum Label: String, Sendable, CaseIterable {
        case challenge, request, welcome, done
    }

    // Raw bytes (swift-crypto's SymmetricKey is not `Sendable`); wrapped again at each use.
    let challenge: [UInt8]
    let request: [UInt8]
    let welcome: [UInt8]
    let done: [UInt8]

    public init(isk: [UInt8]) {
        func derive(_ label: Label) -> [UInt8] {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: isk), salt: [UInt8](),
                info: Domain.joinInfoPrefix + Array(label.rawValue.utf8), outputByteCount: 32
            ).withUnsafeBytes { Array($0) }
        }
        challenge = derive(.challenge)
        request = derive(.request)
        welcome = derive(.welcome)
        done = derive(.done)
    }

    func key(_ label: Label) -> SymmetricKey { SymmetricKey(data: bytes(label)) }

    /// The raw key bytes, for the vectors' `keys_inviter` comparison only.
    public func bytes(_ label: Label) -> [UInt8] {
        switch label {
        case .challenge: return challenge
        case .request: return request
        case .welcome: return welcome
        case .done: return done
        }
    }

    private static var zeroNonce: ChaChaPoly.Nonce? { try? ChaChaPoly.Nonce(data: [UInt8](repeating: 0, count: 12)) }

    /// ChaCha20-Poly1305 under `k_label`, zero nonce, `ad`: ciphertext ‖ tag.
    func seal(_ label: Label, _ plaintext: [UInt8], ad: [UInt8]) throws(MeshError) -> [UInt8] {
        guard let nonce = Self.zeroNonce, let box = try? ChaChaPoly.seal(plaintext, using: key(label), nonce: nonce, authenticating: ad)
        else { throw .invalidArgument }
        return Array(box.ciphertext) + Array(box.tag)
    }

    /// Seals the one message of `type` for an attempt (`AD = type ‖ invite_id ‖ nonce ‖ I ‖ J`).
    /// The sessions call it once per key; it is public for vector checks, and a second
    /// plaintext under the same label would reuse a key and nonce: never do that.
    public func seal(_ label: Label, _ plaintext: [UInt8], context: JoinContext, type: PacketType) throws(MeshError) -> [UInt8] {
        try seal(label, plaintext, ad: context.associatedData(type))
    }

    /// Opens a seal; `nil` when it does not open (a wrong code, or a forgery).
    func open(_ label: Label, _ sealed: [UInt8], ad: [UInt8]) -> [UInt8]? {
        guard sealed.count >= 16, let nonce = Self.zeroNonce,
              let box = try? ChaChaPoly.SealedBox(nonce: nonce, ciphertext: sealed.dropLast(16), tag: sealed.suffix(16)),
              let plaintext = try? ChaChaPoly.open(box, using: key(label), authenticating: ad)
        else { return nil }
        return Array(plaintext)
    }

    public var description: String { "JoinKeys(<redacted>)" }
}
