/// TLS presentation language codec with RFC 9420 §2.1.2 variable-length vectors.
///
/// Every MLS structure encodes through `TLSWriter` and decodes through `TLSReader`. Decoding is
/// strict: lengths must be minimally encoded, must not exceed the remaining input, and a
/// top-level decode rejects trailing bytes. Errors are typed so hostile input never traps.

public enum TLSDecodingError: Error, Equatable, Sendable {
    /// The input ended before a field was complete.
    case truncated(needed: Int, available: Int)
    /// A variable-length integer was not in its shortest form (RFC 9420 §2.1.2 requires it).
    case nonMinimalVarint
    /// The two high bits of a varint were `11`, which RFC 9420 reserves.
    case invalidVarintPrefix
    /// A vector's length exceeds what may follow, or a declared size limit.
    case lengthTooLarge(Int)
    /// Bytes were left after a complete top-level structure.
    case trailingBytes(Int)
    /// An enum or tag value outside the known set where the structure has no extension point.
    case invalidValue(field: String, value: UInt64)
    /// A semantic constraint of the structure itself (e.g. an optional's presence byte not 0/1).
    case malformed(String)
}

/// Appends TLS-encoded values to a byte buffer.
public struct TLSWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func writeUInt8(_ v: UInt8) { bytes.append(v) }

    public mutating func writeUInt16(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v))
    }

    public mutating func writeUInt32(_ v: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }

    public mutating func writeUInt64(_ v: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    /// Raw bytes with no length prefix (fixed-size arrays such as `opaque x[32]`).
    public mutating func writeRaw<C: Collection>(_ raw: C) where C.Element == UInt8 { bytes.append(contentsOf: raw) }

    /// RFC 9420 variable-length integer (1, 2 or 4 bytes; values up to 2^30 - 1).
    public mutating func writeVarint(_ value: Int) {
        precondition(value >= 0 && value < (1 << 30), "MLS varint out of range")  // only reachable from our own encoders
        if value < (1 << 6) {
            bytes.append(UInt8(value))
        } else if value < (1 << 14) {
            bytes.append(UInt8(0x40 | (value >> 8)))
            bytes.append(UInt8(value & 0xff))
        } else {
            bytes.append(UInt8(0x80 | (value >> 24)))
            bytes.append(UInt8((value >> 16) & 0xff))
            bytes.append(UInt8((value >> 8) & 0xff))
            bytes.append(UInt8(value & 0xff))
        }
    }

    /// `opaque data<V>`: varint length then the bytes.
    public mutating func writeOpaque<C: Collection>(_ data: C) where C.Element == UInt8 {
        writeVarint(data.count)
        bytes.append(contentsOf: data)
    }

    /// A vector whose elements are written by `body`; the varint prefix is the byte length.
    public mutating func writeVector(_ body: (inout TLSWriter) -> Void) {
        var inner = TLSWriter()
        body(&inner)
        writeOpaque(inner.bytes)
    }

    public mutating func writeVector<T: TLSEncodable>(_ items: [T]) {
        writeVector { w in for item in items { item.encode(to: &w) } }
    }

    /// `optional<T>`: presence byte then the value.
    public mutating func writeOptional<T: TLSEncodable>(_ value: T?) {
        if let value {
            writeUInt8(1)
            value.encode(to: &self)
        } else {
            writeUInt8(0)
        }
    }

    public mutating func write<T: TLSEncodable>(_ value: T) { value.encode(to: &self) }
}

/// Reads TLS-encoded values from a byte slice, never reading past its end.
public struct TLSReader: Sendable {
    @usableFromInline let bytes: [UInt8]
    @usableFromInline var offset: Int
    @usableFromInline let end: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
        self.end = bytes.count
    }

    public var remaining: Int { end - offset }
    public var isAtEnd: Bool { offset == end }

    @inlinable
    mutating func take(_ n: Int) throws -> ArraySlice<UInt8> {
        guard n >= 0, n <= end - offset else { throw TLSDecodingError.truncated(needed: n, available: end - offset) }
        let slice = bytes[offset..<(offset + n)]
        offset += n
        return slice
    }

    public mutating func readUInt8() throws -> UInt8 {
        let s = try take(1)
        return s[s.startIndex]
    }

    public mutating func readUInt16() throws -> UInt16 {
        let s = try take(2)
        return UInt16(s[s.startIndex]) << 8 | UInt16(s[s.startIndex + 1])
    }

    public mutating func readUInt32() throws -> UInt32 {
        try take(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    public mutating func readUInt64() throws -> UInt64 {
        try take(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    public mutating func readRaw(_ count: Int) throws -> [UInt8] { Array(try take(count)) }

    /// RFC 9420 varint; rejects the reserved `11` prefix and non-minimal encodings.
    public mutating func readVarint() throws -> Int {
        let first = try readUInt8()
        switch first >> 6 {
        case 0:
            return Int(first)
        case 1:
            let value = Int(first & 0x3f) << 8 | Int(try readUInt8())
            guard value >= (1 << 6) else { throw TLSDecodingError.nonMinimalVarint }
            return value
        case 2:
            let rest = try take(3)
            let value = rest.reduce(Int(first & 0x3f)) { $0 << 8 | Int($1) }
            guard value >= (1 << 14) else { throw TLSDecodingError.nonMinimalVarint }
            return value
        default:
            throw TLSDecodingError.invalidVarintPrefix
        }
    }

    /// `opaque data<V>`.
    public mutating func readOpaque() throws -> [UInt8] {
        let length = try readVarint()
        guard length <= remaining else { throw TLSDecodingError.lengthTooLarge(length) }
        return Array(try take(length))
    }

    /// A vector: reads the varint byte length, then decodes elements with `element` until the
    /// sub-range is consumed exactly.
    public mutating func readVector<T>(_ element: (inout TLSReader) throws -> T) throws -> [T] {
        let body = try readOpaque()
        var inner = TLSReader(body)
        var items: [T] = []
        while !inner.isAtEnd { items.append(try element(&inner)) }
        return items
    }

    public mutating func readVector<T: TLSDecodable>(of type: T.Type = T.self) throws -> [T] {
        try readVector { try T(from: &$0) }
    }

    public mutating func readOptional<T>(_ element: (inout TLSReader) throws -> T) throws -> T? {
        switch try readUInt8() {
        case 0: return nil
        case 1: return try element(&self)
        case let b: throw TLSDecodingError.invalidValue(field: "optional presence", value: UInt64(b))
        }
    }

    public mutating func readOptional<T: TLSDecodable>(_ type: T.Type = T.self) throws -> T? {
        try readOptional { try T(from: &$0) }
    }

    public mutating func read<T: TLSDecodable>(_ type: T.Type = T.self) throws -> T { try T(from: &self) }

    /// Fails if anything is left; call after decoding a top-level structure.
    public func finish() throws {
        guard isAtEnd else { throw TLSDecodingError.trailingBytes(remaining) }
    }
}

public protocol TLSEncodable {
    func encode(to writer: inout TLSWriter)
}

public protocol TLSDecodable {
    init(from reader: inout TLSReader) throws
}

public typealias TLSCodable = TLSEncodable & TLSDecodable

extension TLSEncodable {
    /// The complete encoding of this value.
    public var tlsSerialized: [UInt8] {
        var w = TLSWriter()
        encode(to: &w)
        return w.bytes
    }
}

extension TLSDecodable {
    /// Decodes exactly one value from `bytes`, rejecting trailing data.
    public init(tlsSerialized bytes: [UInt8]) throws {
        var reader = TLSReader(bytes)
        self = try Self(from: &reader)
        try reader.finish()
    }
}
