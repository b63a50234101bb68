/// A cursor over untrusted bytes. Every read is bounds-checked and throws `truncated` when the
/// input ends early, so decoders never index past the end and never trap.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset >= bytes.count }

    mutating func u8() throws(MeshError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() throws(MeshError) -> UInt16 {
        let b = try take(2)
        return UInt16(b[0]) << 8 | UInt16(b[1])
    }

    mutating func u32() throws(MeshError) -> UInt32 {
        let b = try take(4)
        return b.reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func u64() throws(MeshError) -> UInt64 {
        let b = try take(8)
        return b.reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func take(_ count: Int) throws(MeshError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw .truncated }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}

/// Big-endian writers for the fixed-width integers of the wire formats.
extension Array where Element == UInt8 {
    mutating func appendU16(_ value: UInt16) {
        append(UInt8(value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    mutating func appendU32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func appendU64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}

/// Domain-separation strings of `Docs/protocols/mesh.md`, ASCII and unterminated.
enum Domain {
    static let meshID = Array("burrow-mesh-v1:id".utf8)
    static let packet = Array("burrow-mesh-v1:packet".utf8)
    static let dmTag = Array("burrow-mesh-v1:dm-tag".utf8)
    static let beacon = Array("burrow-mesh-v1:beacon".utf8)
    static let cpace = Array("burrow-mesh-v1:cpace".utf8)
    static let isk = Array("burrow-mesh-v1:isk".utf8)
    static let joinInfoPrefix = Array("burrow-mesh-v1:join:".utf8)
}
