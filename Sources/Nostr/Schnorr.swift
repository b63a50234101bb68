import CSecp256k1

/// BIP-340 Schnorr signatures over secp256k1, through libsecp256k1's schnorrsig module.
public enum Schnorr {
    /// True when `signature` (64 bytes) is a valid BIP-340 signature of `message` (any length)
    /// by `publicKey`. Malformed input is simply not valid.
    public static func verify(signature: [UInt8], message: [UInt8], publicKey: PublicKey) -> Bool {
        guard signature.count == 64 else { return false }
        return withUnsafePointer(to: publicKey.xonly) { key in
            signature.withUnsafeBufferPointer { sig in
                message.withUnsafeBufferPointer { msg in
                    secp256k1_schnorrsig_verify(
                        Secp256k1Context.shared.pointer, sig.baseAddress!, msg.baseAddress, msg.count, key) == 1
                }
            }
        }
    }

    /// Signs `message` (any length; Nostr signs 32-byte ids) with BIP-340 and 32 bytes of aux
    /// randomness (the nonce is derived from key, message and aux, as BIP-340 recommends).
    static func sign(message: [UInt8], auxRand: [UInt8], secretKey: SecretKey) throws -> [UInt8] {
        guard auxRand.count == 32 else { throw NostrError.invalidAuxRandLength(auxRand.count) }
        var signature = [UInt8](repeating: 0, count: 64)
        let ok: Int32 = auxRand.withUnsafeBufferPointer { aux in
            message.withUnsafeBufferPointer { msg in
                signature.withUnsafeMutableBufferPointer { sig in
                    var params = secp256k1_schnorrsig_extraparams()
                    // SECP256K1_SCHNORRSIG_EXTRAPARAMS_INIT: the magic tag, default nonce function.
                    params.magic = (0xda, 0x6f, 0xb3, 0x8c)
                    params.noncefp = nil
                    params.ndata = UnsafeMutableRawPointer(mutating: aux.baseAddress)
                    return secp256k1_schnorrsig_sign_custom(
                        Secp256k1Context.shared.pointer, sig.baseAddress!, msg.baseAddress, msg.count,
                        secretKey.keypairPointer, &params)
                }
            }
        }
        guard ok == 1 else { throw NostrError.signingFailed }
        return signature
    }
}

/// A secret key with its public key: what signs events.
public struct Keys: Sendable {
    public let secretKey: SecretKey
    public var publicKey: PublicKey { secretKey.publicKey }

    public init(secretKey: SecretKey) { self.secretKey = secretKey }

    public static func generate<R: RandomNumberGenerator>(using rng: inout R) -> Keys {
        Keys(secretKey: SecretKey.generate(using: &rng))
    }

    /// BIP-340 signature of `message` (32 bytes for Nostr ids; any length is allowed) with the
    /// given 32 bytes of aux randomness.
    public func sign(_ message: [UInt8], auxRand: [UInt8]) throws -> [UInt8] {
        try Schnorr.sign(message: message, auxRand: auxRand, secretKey: secretKey)
    }

    /// BIP-340 signature with aux randomness drawn from `rng`.
    public func sign<R: RandomNumberGenerator>(_ message: [UInt8], using rng: inout R) throws -> [UInt8] {
        try sign(message, auxRand: rng.bytes(32))
    }
}

/// A secp256k1 x-only key type alias kept for readers who think in pairs.
public typealias KeyPair = Keys
