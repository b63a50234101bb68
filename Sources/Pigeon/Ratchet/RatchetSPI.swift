/// The pieces below the engine (the ratchet root of 4.4 and one session's Double Ratchet of
/// section 5), for burrow-bench only: visible to `@_spi(PigeonPrimitives) import Pigeon`, not
/// part of the module's API. A node goes through `PigeonState`, whose transitions keep the
/// ordering rules of section 7; nothing here stores or orders anything.
@_spi(PigeonPrimitives)
public struct PigeonRatchetSession: Sendable {
    var ratchet: DoubleRatchet
    public let session: SessionID
    public let binding: [UInt8]

    /// root = HKDF(salt = h, IKM = ck, info = ratchet-root, 32) of a finished handshake.
    public static func ratchetRoot(of handshake: NoiseHandshakeResult) -> SecretBytes {
        SecretBytes(RatchetKDF.ratchetRoot(handshakeHash: handshake.handshakeHash, chainingKey: handshake.chainingKey))
    }

    /// 5.2, initiator after handshake2.
    public static func initiator(
        root: SecretBytes, ratchetKey: X25519PrivateKey, remoteRatchetKey: X25519PublicKey, session: SessionID, binding: [UInt8]
    ) throws(PigeonError) -> PigeonRatchetSession {
        PigeonRatchetSession(
            ratchet: try .initiator(root: root.bytes, ratchetKey: ratchetKey, remoteRatchetKey: remoteRatchetKey),
            session: session, binding: binding)
    }

    /// 5.2, responder after handshake3; `nextKey` is the key pair of its first DH step.
    public static func responder(
        root: SecretBytes, ratchetKey: X25519PrivateKey, remoteRatchetKey: X25519PublicKey, nextKey: X25519PrivateKey,
        session: SessionID, binding: [UInt8]
    ) throws(PigeonError) -> PigeonRatchetSession {
        PigeonRatchetSession(
            ratchet: try .responder(root: root.bytes, ratchetKey: ratchetKey, remoteRatchetKey: remoteRatchetKey, nextKey: nextKey),
            session: session, binding: binding)
    }

    /// 5.3: a message frame of `padded`.
    public mutating func encrypt(padded: [UInt8]) throws(PigeonError) -> [UInt8] {
        try ratchet.encrypt(padded: padded, session: session, binding: binding)
    }

    /// 5.4: parses `frame` and opens it; on a throw nothing changed.
    public mutating func decrypt<K: PigeonKeySource>(frame: [UInt8], now: UInt64, keys: inout K) throws(PigeonError) -> [UInt8] {
        try ratchet.decrypt(frame: try Frame(bytes: frame), binding: binding, now: now, keys: &keys)
    }
}
