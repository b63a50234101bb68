/// Byte helpers shared by the Pigeon codecs: constant-time comparison, big-endian integers,
/// a bounded reader for untrusted input and secrets that never print.

/// Compares two byte strings in time that depends only on their lengths (section 1: keys, ids
/// and safety numbers are compared in constant time). Different lengths are simply unequal.
@inlinable
public func constantTimeEqual<A: Collection, B: Collection>(_ a: A, _ b: B) -> Bool
where A.Element == UInt8, B.Element == UInt8 {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for (x, y) in zip(a, b) { difference |= x ^ y }
    return difference == 0
}

/// True when every byte is zero, in time independent of the content (an X25519 result of 32
/// zero bytes is an error wherever it occurs).
@inlinable
func isAllZero<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
    var accumulator: UInt8 = 0
    for b in bytes { accumulator |= b }
    return accumulator == 0
}

/// Secret bytes (private keys, chain keys, message keys): compared in constant time and never
/// shown by `description`, so a secret cannot reach a log or a test failure by interpolation.
public struct SecretBytes: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var count: Int { bytes.count }

    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool { constantTimeEqual(lhs.bytes, rhs.bytes) }
    /// Hashes the length only: secrets are not dictionary keys, and hashing content would leak timing.
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes.count) }

    public var description: String { "<secret \(bytes.count) bytes>" }
    public var debugDescription: String { description }
}

extension Array where Element == UInt8 {
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        let size = MemoryLayout<T>.size
        for i in (0..<size).reversed() { append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
    }

    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        var out: [UInt8] = []
        out.appendBigEndian(value)
        return out
    }
}

/// Reads big-endian fields from untrusted bytes; every read checks the remaining length and
/// throws `Truncated` instead of trapping.
struct ByteReader {
    struct Truncated: Error {}

    private let bytes: [UInt8]
    private(set) var offset: Int

    init<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        self.bytes = Array(bytes)
        self.offset = 0
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset == bytes.count }

    mutating func read(_ count: Int) throws(Truncated) -> [UInt8] {
        guard count >= 0, count <= remaining else { throw Truncated() }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func readByte() throws(Truncated) -> UInt8 {
        guard remaining >= 1 else { throw Truncated() }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readInteger<T: FixedWidthInteger & UnsignedInteger>(_: T.Type) throws(Truncated) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw Truncated() }
        var value: T = 0
        for i in 0..<size { value = value << 8 | T(bytes[offset + i]) }
        offset += size
        return value
    }

    /// The rest of the input.
    mutating func readRest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}

/// Big-endian u64 from exactly 8 bytes (callers slice them).
func readU64<C: Collection>(_ bytes: C) -> UInt64 where C.Element == UInt8 {
    bytes.reduce(0) { $0 << 8 | UInt64($1) }
}
