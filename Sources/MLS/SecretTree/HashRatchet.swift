/// Which of a leaf's two ratchets a message uses (RFC 9420 §9.1): handshake messages
/// (proposals, commits sent as PrivateMessage) or application messages.
public enum RatchetType: UInt8, Sendable, Hashable, CaseIterable {
    case handshake = 1
    case application = 2

    var label: String {
        switch self {
        case .handshake: return "handshake"
        case .application: return "application"
        }
    }
}

/// The AEAD key and nonce of one ratchet generation.
public struct RatchetKeyMaterial: Sendable, Equatable {
    public let generation: UInt32
    public let key: Secret
    public let nonce: Secret

    /// The nonce with the 4-byte `reuse_guard` XORed into its first bytes (RFC 9420 §6.3.1).
    public func nonce(reuseGuard: [UInt8]) throws -> Secret {
        guard reuseGuard.count == 4 else { throw MLSCryptoError.invalidLength(field: "reuse_guard", expected: 4, actual: reuseGuard.count) }
        var bytes = nonce.unsafeBytes
        defer { Secret.wipe(&bytes) }
        for i in 0..<4 { bytes[i] ^= reuseGuard[i] }
        return Secret(bytes)
    }
}

/// How far a receiver tolerates reordering and gaps (OpenMLS `SenderRatchetConfiguration`).
public struct SenderRatchetConfiguration: Sendable, Hashable {
    /// Keys of up to this many generations before the newest one received stay usable, so
    /// messages may arrive that far out of order.
    public var outOfOrderTolerance: UInt32
    /// A message may be at most this many generations ahead of the next expected one.
    public var maximumForwardDistance: UInt32

    public init(outOfOrderTolerance: UInt32 = 100, maximumForwardDistance: UInt32 = 1000) {
        self.outOfOrderTolerance = outOfOrderTolerance
        self.maximumForwardDistance = maximumForwardDistance
    }

    public static let `default` = SenderRatchetConfiguration()
}

/// One hash ratchet (RFC 9420 §9.1):
/// ```
/// ratchet_key_[i]_[j]      = DeriveTreeSecret(ratchet_secret_[i]_[j], "key", j, AEAD.Nk)
/// ratchet_nonce_[i]_[j]    = DeriveTreeSecret(ratchet_secret_[i]_[j], "nonce", j, AEAD.Nn)
/// ratchet_secret_[i]_[j+1] = DeriveTreeSecret(ratchet_secret_[i]_[j], "secret", j, KDF.Nh)
/// ```
/// Each generation's key is handed out once: the ratchet secret moves forward past it, and
/// keys of skipped generations are kept only until used or until they fall out of the
/// out-of-order window, so a replayed generation is refused (§9.2 deletion schedule).
struct HashRatchet: Sendable, Equatable {
    /// The generation `secret` belongs to: the next one never handed out.
    private(set) var nextGeneration: UInt32
    /// `ratchet_secret_[i]_[nextGeneration]`; nil once generation 2^32 − 1 was consumed.
    private(set) var secret: Secret?
    /// Keys of skipped generations below `nextGeneration`, not yet used.
    private(set) var skipped: [UInt32: RatchetKeyMaterial]

    init(secret: Secret) {
        self.nextGeneration = 0
        self.secret = secret
        self.skipped = [:]
    }

    init(nextGeneration: UInt32, secret: Secret?, skipped: [UInt32: RatchetKeyMaterial]) {
        self.nextGeneration = nextGeneration
        self.secret = secret
        self.skipped = skipped
    }

    /// The key of `nextGeneration`, advancing past it (a sender's own ratchet).
    mutating func next(_ cs: CipherSuiteProvider) throws -> RatchetKeyMaterial {
        guard let current = secret else { throw MLSCryptoError.ratchetExhausted }
        let material = try Self.keyMaterial(cs, secret: current, generation: nextGeneration)
        try advance(cs)
        return material
    }

    /// The key of `generation` for decryption: a future generation ratchets forward (keeping the
    /// skipped keys that stay in the window), a past one is taken from the skipped keys once.
    mutating func key(_ cs: CipherSuiteProvider, generation: UInt32, configuration: SenderRatchetConfiguration) throws -> RatchetKeyMaterial {
        if generation < nextGeneration {
            if let material = skipped.removeValue(forKey: generation) { return material }
            let newest = nextGeneration - 1
            if newest - generation > configuration.outOfOrderTolerance {
                throw MLSCryptoError.generationTooFarInPast(requested: generation, current: newest)
            }
            throw MLSCryptoError.generationAlreadyConsumed(generation)
        }
        guard generation - nextGeneration <= configuration.maximumForwardDistance else {
            throw MLSCryptoError.generationTooFarInFuture(requested: generation, current: nextGeneration)
        }
        let keepFrom = generation >= configuration.outOfOrderTolerance ? generation - configuration.outOfOrderTolerance : 0
        while nextGeneration < generation {
            guard let current = secret else { throw MLSCryptoError.ratchetExhausted }
            if nextGeneration >= keepFrom {
                skipped[nextGeneration] = try Self.keyMaterial(cs, secret: current, generation: nextGeneration)
            }
            try advance(cs)
        }
        let material = try next(cs)
        skipped = skipped.filter { $0.key >= keepFrom }
        return material
    }

    private mutating func advance(_ cs: CipherSuiteProvider) throws {
        guard let current = secret else { throw MLSCryptoError.ratchetExhausted }
        guard nextGeneration < UInt32.max else {
            secret = nil
            return
        }
        secret = try cs.deriveTreeSecret(current, label: "secret", generation: nextGeneration, length: cs.kdfNh)
        nextGeneration += 1
    }

    static func keyMaterial(_ cs: CipherSuiteProvider, secret: Secret, generation: UInt32) throws -> RatchetKeyMaterial {
        RatchetKeyMaterial(
            generation: generation,
            key: try cs.deriveTreeSecret(secret, label: "key", generation: generation, length: cs.aeadNk),
            nonce: try cs.deriveTreeSecret(secret, label: "nonce", generation: generation, length: cs.aeadNn)
        )
    }
}
