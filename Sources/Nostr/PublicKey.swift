import CSecp256k1

/// An x-only secp256k1 public key (BIP-340), validated on the curve at construction.
///
/// Keeps the parsed libsecp256k1 forms next to the bytes so verification and ECDH never
/// re-parse (parsing costs a square root).
public struct PublicKey: Hashable, Sendable {
    /// The 32-byte x coordinate.
    public let bytes: [UInt8]
    let xonly: secp256k1_xonly_pubkey
    /// The even-y point with this x, as libsecp256k1's ECDH wants it.
    let fullPoint: secp256k1_pubkey

    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else { throw NostrError.invalidPublicKey }
        var compressed = [UInt8](repeating: 0x02, count: 33)
        compressed.withUnsafeMutableBufferPointer { buf in
            for i in 0..<32 { buf[i + 1] = bytes[i] }
        }
        let ctx = Secp256k1Context.shared.pointer
        var point = secp256k1_pubkey()
        var xonly = secp256k1_xonly_pubkey()
        guard secp256k1_ec_pubkey_parse(ctx, &point, compressed, 33) == 1,
              secp256k1_xonly_pubkey_from_pubkey(ctx, &xonly, nil, &point) == 1
        else { throw NostrError.invalidPublicKey }
        self.bytes = bytes
        self.xonly = xonly
        self.fullPoint = point
    }

    /// Parses 64 hex digits (either case).
    public init(hex: String) throws {
        guard let bytes = try? Hex.decode(hex, length: 32) else { throw NostrError.invalidPublicKey }
        try self.init(bytes: bytes)
    }

    /// From a key libsecp256k1 derived itself (always valid).
    init(xonly: secp256k1_xonly_pubkey) {
        let ctx = Secp256k1Context.shared.pointer
        var xonly = xonly
        var bytes = [UInt8](repeating: 0, count: 32)
        _ = secp256k1_xonly_pubkey_serialize(ctx, &bytes, &xonly)
        var compressed = [UInt8](repeating: 0x02, count: 33)
        compressed.replaceSubrange(1..<33, with: bytes)
        var point = secp256k1_pubkey()
        _ = secp256k1_ec_pubkey_parse(ctx, &point, compressed, 33)
        self.bytes = bytes
        self.xonly = xonly
        self.fullPoint = point
    }

    /// Lowercase hex, the NIP-01 form.
    public var hex: String { Hex.encode(bytes) }

    public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.bytes == rhs.bytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
}

extension PublicKey: CustomStringConvertible {
    public var description: String { hex }
}
