/// BIP-173 bech32 (the original checksum constant 1), as NIP-19 uses it, and BIP-350 bech32m
/// (constant 0x2bc830a3, `Bech32m` below), as Pigeon's contact cards use it.
///
/// NIP-19 lifts BIP-173's 90-character limit (TLV entities with relays are longer), so the
/// limit here is `maximumLength`.
enum Bech32 {
    static let maximumLength = 5000

    /// The checksum variant: the value the polymod of a valid string equals.
    enum Variant {
        case bech32, bech32m
        var constant: UInt32 { self == .bech32 ? 1 : 0x2bc8_30a3 }
    }
    private static let charset: [UInt8] = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    private static let reverse: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (i, c) in charset.enumerated() { table[Int(c)] = Int8(i) }
        return table
    }()

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]
        var chk: UInt32 = 1
        for v in values {
            let top = chk >> 25
            chk = (chk & 0x1ff_ffff) << 5 ^ UInt32(v)
            for i in 0..<5 where (top >> i) & 1 == 1 { chk ^= generator[i] }
        }
        return chk
    }

    private static func expandHRP(_ hrp: [UInt8]) -> [UInt8] {
        hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
    }

    /// Encodes 8-bit `data` under the lowercase human-readable part `hrp`.
    static func encode(hrp: String, data: [UInt8], variant: Variant = .bech32) -> String {
        let hrpBytes = Array(hrp.utf8)
        let values = convertBits(data, from: 8, to: 5, pad: true) ?? []
        let polymodValue = polymod(expandHRP(hrpBytes) + values + [0, 0, 0, 0, 0, 0]) ^ variant.constant
        var out = hrpBytes
        out.append(UInt8(ascii: "1"))
        for v in values { out.append(charset[Int(v)]) }
        for i in 0..<6 { out.append(charset[Int((polymodValue >> (5 * (5 - i))) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes a bech32 string into its lowercase human-readable part and 8-bit data.
    static func decode(
        _ string: String, variant: Variant = .bech32, maximumLength: Int = Bech32.maximumLength
    ) throws -> (hrp: String, data: [UInt8]) {
        let bytes = Array(string.utf8)
        guard bytes.count >= 8, bytes.count <= maximumLength else { throw NostrError.bech32InvalidLength }
        var hasLower = false, hasUpper = false
        for c in bytes {
            guard c >= 33, c <= 126 else { throw NostrError.bech32InvalidCharacter }
            if c >= 0x61 && c <= 0x7A { hasLower = true }
            if c >= 0x41 && c <= 0x5A { hasUpper = true }
        }
        guard !(hasLower && hasUpper) else { throw NostrError.bech32MixedCase }
        let lower = bytes.map { ($0 >= 0x41 && $0 <= 0x5A) ? $0 + 32 : $0 }
        guard let separator = lower.lastIndex(of: UInt8(ascii: "1")) else { throw NostrError.bech32MissingSeparator }
        guard separator >= 1, lower.count - separator - 1 >= 6 else { throw NostrError.bech32InvalidLength }
        let hrp = Array(lower[..<separator])
        var values: [UInt8] = []
        values.reserveCapacity(lower.count - separator - 1)
        for c in lower[(separator + 1)...] {
            let v = reverse[Int(c)]
            guard v >= 0 else { throw NostrError.bech32InvalidCharacter }
            values.append(UInt8(v))
        }
        guard polymod(expandHRP(hrp) + values) == variant.constant else { throw NostrError.bech32InvalidChecksum }
        guard let data = convertBits(values.dropLast(6), from: 5, to: 8, pad: false) else {
            throw NostrError.bech32InvalidPadding
        }
        return (String(decoding: hrp, as: UTF8.self), data)
    }

    /// Regroups bits; without `pad`, leftover bits must be fewer than `from` and all zero.
    static func convertBits<C: Collection>(_ input: C, from: Int, to: Int, pad: Bool) -> [UInt8]? where C.Element == UInt8 {
        var acc = 0, bits = 0
        var out: [UInt8] = []
        out.reserveCapacity(input.count * from / to + 1)
        let maxValue = (1 << to) - 1
        for value in input {
            guard Int(value) >> from == 0 else { return nil }
            acc = (acc << from) | Int(value)
            bits += from
            while bits >= to {
                bits -= to
                out.append(UInt8((acc >> bits) & maxValue))
            }
            acc &= (1 << bits) - 1
        }
        if pad {
            if bits > 0 { out.append(UInt8((acc << (to - bits)) & maxValue)) }
        } else if bits >= from || ((acc << (to - bits)) & maxValue) != 0 {
            return nil
        }
        return out
    }
}

/// BIP-350 bech32m over 8-bit data: the checksum of bech32 with constant 0x2bc830a3, so a
/// string checksummed as plain bech32 does not decode here (nor the reverse).
public enum Bech32m {
    /// Encodes `data` under the lowercase human-readable part `hrp` (lower-case output; upper-case
    /// the whole string for QR alphanumeric mode).
    public static func encode(hrp: String, data: [UInt8]) -> String {
        Bech32.encode(hrp: hrp, data: data, variant: .bech32m)
    }

    /// Decodes a bech32m string of at most `maximumLength` characters (all lower or all upper
    /// case) into its lowercase human-readable part and 8-bit data. Throws the `bech32*` cases
    /// of `NostrError`.
    public static func decode(_ string: String, maximumLength: Int) throws -> (hrp: String, data: [UInt8]) {
        try Bech32.decode(string, variant: .bech32m, maximumLength: maximumLength)
    }
}
