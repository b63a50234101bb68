/// Lowercase hex, the form every key, id and signature takes in NIP-01 JSON.
public enum HexError: Error, Equatable, Sendable {
    case oddLength
    case invalidCharacter
    case wrongLength(expected: Int, actual: Int)
}

public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hex of either case; `length` (in bytes) is enforced when given.
    public static func decode(_ string: String, length: Int? = nil) throws -> [UInt8] {
        let utf8 = Array(string.utf8)
        guard utf8.count % 2 == 0 else { throw HexError.oddLength }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let hi = nibble(utf8[i]), let lo = nibble(utf8[i + 1]) else { throw HexError.invalidCharacter }
            out.append(hi << 4 | lo)
            i += 2
        }
        if let length, out.count != length { throw HexError.wrongLength(expected: length, actual: out.count) }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
