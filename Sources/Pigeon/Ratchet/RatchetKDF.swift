/// Section 5.1: the three derivations of the ratchet.
enum RatchetKDF {
    /// KDF_RK(rk, dh) = HKDF(salt = rk, IKM = dh, info = root-chain, 64) → (rk', chain key).
    static func root(_ rk: [UInt8], _ dh: [UInt8]) -> (rootKey: [UInt8], chainKey: [UInt8]) {
        let out = Primitives.hkdfSHA256(ikm: dh, salt: rk, info: Domain.rootChain, count: 64)
        return (Array(out[0..<32]), Array(out[32..<64]))
    }

    /// KDF_CK(ck) → (ck' = HMAC(ck, 0x02), mk = HMAC(ck, 0x01)).
    static func chain(_ ck: [UInt8]) -> (chainKey: [UInt8], messageKey: [UInt8]) {
        (Primitives.hmacSHA256(key: ck, [0x02]), Primitives.hmacSHA256(key: ck, [0x01]))
    }

    /// key ‖ nonce = HKDF(no salt, IKM = mk, info = message-key, 44 bytes).
    static func messageKeys(_ mk: [UInt8]) -> (key: [UInt8], nonce: [UInt8]) {
        let out = Primitives.hkdfSHA256(ikm: mk, salt: [], info: Domain.messageKey, count: 44)
        return (Array(out[0..<32]), Array(out[32..<44]))
    }

    /// root = HKDF(salt = h, IKM = ck, info = ratchet-root, 32) (section 4.4): from the secret
    /// chaining key, with the public transcript hash only as salt.
    static func ratchetRoot(handshakeHash h: [UInt8], chainingKey ck: [UInt8]) -> [UInt8] {
        Primitives.hkdfSHA256(ikm: ck, salt: h, info: Domain.ratchetRoot, count: 32)
    }
}

/// The 40-byte ratchet header: DHs public key (32) ‖ pn (u32) ‖ n (u32).
public struct RatchetHeader: Sendable, Hashable {
    public static let length = 40
    public let dh: X25519PublicKey
    public let pn: UInt32
    public let n: UInt32

    var bytes: [UInt8] {
        var out = dh.bytes
        out.appendBigEndian(pn)
        out.appendBigEndian(n)
        return out
    }

    init(dh: X25519PublicKey, pn: UInt32, n: UInt32) {
        self.dh = dh
        self.pn = pn
        self.n = n
    }

    /// From a message frame's body (the frame parser has checked its size).
    init(body: [UInt8]) {
        dh = X25519PublicKey(validBytes: Array(body[0..<32]))
        pn = UInt32(readU64([0, 0, 0, 0] + body[32..<36]))
        n = UInt32(readU64([0, 0, 0, 0] + body[36..<40]))
    }
}
