import CSecp256k1
import CSodium

/// A secp256k1 secret key (32 bytes, 0 < k < n).
///
/// A class so the bytes live in one buffer we control: zeroed in `deinit`, never printed
/// (`description` is redacted), compared only in constant time. The libsecp256k1 keypair is
/// cached so signing does not repeat the point multiplication.
/// `@unchecked Sendable`: the buffer and keypair are written in `init` and only read after,
/// until `deinit` zeroes them (no other reference can exist then).
public final class SecretKey: @unchecked Sendable {
    /// 32 secret bytes followed by the 96-byte `secp256k1_keypair`; both zeroed on release.
    private let storage: UnsafeMutableRawPointer
    private static let keypairOffset = 32
    private static let storageSize = 32 + MemoryLayout<secp256k1_keypair>.size

    /// The x-only public key of this secret.
    public let publicKey: PublicKey

    /// Validates `bytes` as a secp256k1 scalar (not zero, below the curve order).
    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else { throw NostrError.invalidSecretKey }
        let ctx = Secp256k1Context.shared.pointer
        let storage = UnsafeMutableRawPointer.allocate(byteCount: Self.storageSize, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: Self.storageSize)
        bytes.withUnsafeBytes { storage.copyMemory(from: $0.baseAddress!, byteCount: 32) }
        let secret = storage.assumingMemoryBound(to: UInt8.self)
        let keypair = (storage + Self.keypairOffset).assumingMemoryBound(to: secp256k1_keypair.self)
        var xonly = secp256k1_xonly_pubkey()
        guard secp256k1_ec_seckey_verify(ctx, secret) == 1,
              secp256k1_keypair_create(ctx, keypair, secret) == 1,
              secp256k1_keypair_xonly_pub(ctx, &xonly, nil, keypair) == 1
        else {
            sodium_memzero(storage, Self.storageSize)
            storage.deallocate()
            throw NostrError.invalidSecretKey
        }
        self.storage = storage
        self.publicKey = PublicKey(xonly: xonly)
    }

    /// Parses 64 hex digits (either case). Errors never echo the input.
    public convenience init(hex: String) throws {
        guard let bytes = try? Hex.decode(hex, length: 32) else { throw NostrError.invalidSecretKey }
        var copy = bytes
        defer { copy.zeroize() }
        try self.init(bytes: copy)
    }

    /// Draws 32 bytes from `rng` until they form a valid scalar (almost always the first draw).
    public static func generate<R: RandomNumberGenerator>(using rng: inout R) -> SecretKey {
        while true {
            var candidate = rng.bytes(32)
            defer { candidate.zeroize() }
            if let key = try? SecretKey(bytes: candidate) { return key }
        }
    }

    deinit {
        sodium_memzero(storage, Self.storageSize)
        storage.deallocate()
    }

    /// Zeroes the secret and its keypair in place (`burrow lock`): every holder of this key
    /// shares the one buffer, so none keeps a copy. Signing with a wiped key fails. Callers
    /// serialize this with every use of the key (the node's mailbox does).
    public func wipe() {
        sodium_memzero(storage, Self.storageSize)
    }

    /// Writes the secret back after `wipe` (`burrow unlock`), if `bytes` is this key's secret.
    public func restore(_ bytes: [UInt8]) throws {
        let candidate = try SecretKey(bytes: bytes)
        guard candidate.publicKey == publicKey else { throw NostrError.invalidSecretKey }
        storage.copyMemory(from: candidate.storage, byteCount: Self.storageSize)
    }

    /// Whether the secret is wiped (all zero: no valid key is).
    public var isWiped: Bool { sodium_is_zero(storage.assumingMemoryBound(to: UInt8.self), 32) == 1 }

    /// A copy of the 32 secret bytes, for export (nsec, storage). Callers own zeroing the copy.
    public var bytes: [UInt8] {
        Array(UnsafeRawBufferPointer(start: storage, count: 32))
    }

    /// Lowercase hex of the secret, for export only.
    public var hex: String { Hex.encode(UnsafeRawBufferPointer(start: storage, count: 32)) }

    var keypairPointer: UnsafePointer<secp256k1_keypair> {
        UnsafePointer((storage + Self.keypairOffset).assumingMemoryBound(to: secp256k1_keypair.self))
    }

    var secretPointer: UnsafePointer<UInt8> { UnsafePointer(storage.assumingMemoryBound(to: UInt8.self)) }

    /// The x coordinate of `self · publicKey` (the even-y lift of the x-only key), unhashed.
    /// NIP-44 feeds exactly these 32 bytes to HKDF.
    public func sharedX(with publicKey: PublicKey) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var point = publicKey.fullPoint
        let ok = out.withUnsafeMutableBufferPointer { outBuf in
            secp256k1_ecdh(Secp256k1Context.shared.pointer, outBuf.baseAddress!, &point, secretPointer, copyX, nil)
        }
        guard ok == 1 else { throw NostrError.ecdhFailed }
        return out
    }

    /// Constant-time equality of two secrets.
    public func isEqual(to other: SecretKey) -> Bool {
        sodium_memcmp(storage, other.storage, 32) == 0
    }
}

/// `secp256k1_ecdh` hash function that returns x unchanged instead of hashing the point.
private let copyX: secp256k1_ecdh_hash_function = { output, x32, _, _ in
    guard let output, let x32 else { return 0 }
    output.update(from: x32, count: 32)
    return 1
}

extension SecretKey: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "SecretKey(<redacted>)" }
    public var debugDescription: String { description }
}

extension Array where Element == UInt8 {
    /// Overwrites the buffer with zeros (best effort: Swift may have copied it earlier).
    mutating func zeroize() {
        withUnsafeMutableBytes { if let base = $0.baseAddress { sodium_memzero(base, $0.count) } }
    }
}

extension RandomNumberGenerator {
    /// `count` bytes from the generator, 8 at a time.
    mutating func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count + 8)
        while out.count < count {
            var word = next()
            for _ in 0..<8 where out.count < count {
                out.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return out
    }
}
