import Crypto

/// Key material: a secret, key or nonce derived by the key schedule, the secret tree or HPKE.
///
/// The bytes live in swift-crypto's `SymmetricKey`, whose storage is zeroed when the last copy is
/// released. Equality is constant-time, and `description`, `debugDescription` and reflection
/// (`dump`, string interpolation) show only the length, so a secret never reaches a log or an
/// error message by accident. Read the bytes explicitly with `withUnsafeBytes` or, where a copy
/// must leave (serializing group state), `unsafeBytes`.
///
/// `@unchecked Sendable`: `SymmetricKey` is an immutable value (copy-on-write storage that is
/// never mutated after creation) but swift-crypto 3 does not declare it `Sendable`.
public struct Secret: @unchecked Sendable, Equatable {
    /// The secret as a swift-crypto key, for HKDF, HMAC and AES-GCM.
    public let symmetricKey: SymmetricKey

    public init(_ bytes: [UInt8]) { symmetricKey = SymmetricKey(data: bytes) }

    public init(_ key: SymmetricKey) { symmetricKey = key }

    /// `count` zero bytes: the RFC 9420 "0" default for `psk_secret` and HKDF salts.
    public static func zero(count: Int) -> Secret { Secret([UInt8](repeating: 0, count: count)) }

    public var count: Int { symmetricKey.bitCount / 8 }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try symmetricKey.withUnsafeBytes(body)
    }

    /// A plain copy of the bytes, which Swift cannot zero on release: only for code that must
    /// hand the secret on (encoding `GroupSecrets`, persisting group state, AEAD nonces).
    public var unsafeBytes: [UInt8] { symmetricKey.withUnsafeBytes { Array($0) } }

    /// Constant-time (for equal lengths) comparison.
    public static func == (lhs: Secret, rhs: Secret) -> Bool { lhs.symmetricKey == rhs.symmetricKey }

    /// Constant-time comparison against plain bytes (a value from a test vector or the wire).
    public func constantTimeEquals(_ bytes: [UInt8]) -> Bool { self == Secret(bytes) }
}

extension Secret: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "Secret(\(count) bytes, redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["count": count], displayStyle: .struct) }
}

extension Secret {
    /// Constant-time equality of two byte strings (MACs, tags) through BoringSSL's
    /// `CRYPTO_memcmp`; false when the lengths differ.
    public static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.count == rhs.count && SymmetricKey(data: lhs) == SymmetricKey(data: rhs)
    }
}

extension Secret {
    /// Overwrites a temporary buffer that held secret bytes before it is released. Best effort:
    /// Swift does not promise such stores survive optimization, which is why long-lived secrets
    /// live in `Secret` (swift-crypto's zeroing storage) instead.
    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            for i in 0..<buffer.count { base.storeBytes(of: 0, toByteOffset: i, as: UInt8.self) }
        }
    }
}
