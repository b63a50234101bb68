/// A JSON value as feed.md section 3 sees it: integers within ±(2^53 − 1) are integers; any
/// other number parses (it is valid JSON) but has no canonical form.
public indirect enum FeedJSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// A fraction, an exponent or an integer out of range, as written.
    case number(String)
    case string(String)
    case array([FeedJSON])
    /// Members in the order they came (canonical output sorts them).
    case object([FeedJSONMember])

    public subscript(name: String) -> FeedJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.name.utf8.elementsEqual(name.utf8) }?.value
    }

    public var string: String? { if case .string(let s) = self { return s } else { return nil } }
    public var integer: Int64? { if case .integer(let i) = self { return i } else { return nil } }
}

public struct FeedJSONMember: Equatable, Sendable {
    public let name: String
    public let value: FeedJSON
    public init(_ name: String, _ value: FeedJSON) {
        self.name = name
        self.value = value
    }
}

/// Canonical JSON (RFC 8785 restricted to integers) and the strict parser of feed.md 3.
public enum CanonicalJSON {
    public static let maximumDepth = 16
    public static let maximumInteger: Int64 = (1 << 53) - 1

    // MARK: Serializing

    /// The canonical bytes of `value`: `badNumber` if it holds a number without a canonical form.
    public static func serialize(_ value: FeedJSON) throws(FeedError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        try write(value, into: &out)
        return out
    }

    private static func write(_ value: FeedJSON, into out: inout [UInt8]) throws(FeedError) {
        switch value {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .integer(let i):
            guard i >= -maximumInteger, i <= maximumInteger else { throw .badNumber }
            out += Array(String(i).utf8)
        case .number: throw .badNumber
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            // JCS §3.2.3: names ordered by their UTF-16 code units.
            let sorted = members.sorted { $0.name.utf16.lexicographicallyPrecedes($1.name.utf16) }
            for (index, member) in sorted.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.name, into: &out)
                out.append(UInt8(ascii: ":"))
                try write(member.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        let utf8 = s.utf8
        if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out += utf8
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x00..<0x20: out += Array("\\u00".utf8) + [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    // MARK: Parsing

    /// Parses `bytes` strictly: `badJSON` for invalid UTF-8, anything outside RFC 8259, a
    /// duplicate member name, a lone surrogate escape, nesting deeper than 16, trailing bytes.
    public static func parse(_ bytes: [UInt8]) throws(FeedError) -> FeedJSON {
        // ASCII (every envelope) is valid UTF-8 without building a String to find out.
        guard bytes.allSatisfy({ $0 < 0x80 }) || String(validating: bytes, as: UTF8.self) != nil else { throw .badJSON }
        var parser = Parser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.atEnd else { throw .badJSON }
        return value
    }

    /// `parse`, then the canonical bytes of what was parsed compared with `bytes`: the value, or
    /// `mismatch` when they differ (or when the value has no canonical form).
    public static func parseCanonical(_ bytes: [UInt8], mismatch: FeedError) throws(FeedError) -> FeedJSON {
        let value = try parse(bytes)
        let canonical: [UInt8]
        do { canonical = try serialize(value) } catch { throw mismatch }
        guard canonical == bytes else { throw mismatch }
        return value
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func skipWhitespace() {
            while index < bytes.count {
                let byte = bytes[index]
                guard byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D else { return }
                index += 1
            }
        }

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func expect(_ literal: String) throws(FeedError) {
            for byte in literal.utf8 {
                guard peek() == byte else { throw .badJSON }
                index += 1
            }
        }

        mutating func value(depth: Int) throws(FeedError) -> FeedJSON {
            guard let byte = peek() else { throw .badJSON }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try expect("true"); return .bool(true)
            case UInt8(ascii: "f"): try expect("false"); return .bool(false)
            case UInt8(ascii: "n"): try expect("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw .badJSON
            }
        }

        mutating func object(depth: Int) throws(FeedError) -> FeedJSON {
            guard depth <= CanonicalJSON.maximumDepth else { throw .badJSON }
            index += 1
            var members: [FeedJSONMember] = []
            var names = Set<[UInt8]>()
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                index += 1
                return .object([])
            }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw .badJSON }
                let name = try string()
                guard names.insert(Array(name.utf8)).inserted else { throw .badJSON }
                skipWhitespace()
                try expect(":")
                skipWhitespace()
                members.append(FeedJSONMember(name, try value(depth: depth)))
                skipWhitespace()
                if peek() == UInt8(ascii: ",") { index += 1; continue }
                try expect("}")
                return .object(members)
            }
        }

        mutating func array(depth: Int) throws(FeedError) -> FeedJSON {
            guard depth <= CanonicalJSON.maximumDepth else { throw .badJSON }
            index += 1
            var items: [FeedJSON] = []
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                index += 1
                return .array([])
            }
            while true {
                skipWhitespace()
                items.append(try value(depth: depth))
                skipWhitespace()
                if peek() == UInt8(ascii: ",") { index += 1; continue }
                try expect("]")
                return .array(items)
            }
        }

        mutating func hex4() throws(FeedError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw .badJSON }
            var value: UInt32 = 0
            for byte in bytes[index..<index + 4] {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw .badJSON
                }
                value = value << 4 | UInt32(digit)
            }
            index += 4
            return value
        }

        mutating func string() throws(FeedError) -> String {
            index += 1
            var out: [UInt8] = []
            while true {
                // A run of bytes that need no unescaping is copied at once.
                let runStart = index
                while index < bytes.count, bytes[index] >= 0x20, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
                    index += 1
                }
                if index > runStart { out += bytes[runStart..<index] }
                guard let byte = peek() else { throw .badJSON }
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    // The input was valid UTF-8 and escapes add whole scalars: so is `out`.
                    return String(decoding: out, as: UTF8.self)
                case 0x00..<0x20: throw .badJSON
                case UInt8(ascii: "\\"):
                    guard let escape = peek() else { throw .badJSON }
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard peek() == UInt8(ascii: "\\") else { throw .badJSON }
                            index += 1
                            guard peek() == UInt8(ascii: "u") else { throw .badJSON }
                            index += 1
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw .badJSON }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(scalar) {
                            throw .badJSON
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw .badJSON }
                        out += Array(String(Character(unicode)).utf8)
                    default: throw .badJSON
                    }
                default: out.append(byte)
                }
            }
        }

        mutating func number() throws(FeedError) -> FeedJSON {
            let start = index
            var negative = false
            if peek() == UInt8(ascii: "-") { negative = true; index += 1 }
            guard let first = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { throw .badJSON }
            let digitsStart = index
            if first == UInt8(ascii: "0") {
                index += 1
                if let next = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next) { throw .badJSON }
            } else {
                while let d = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(d) { index += 1 }
            }
            let digitsEnd = index
            var integral = true
            if peek() == UInt8(ascii: ".") {
                integral = false
                index += 1
                guard let d = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(d) else { throw .badJSON }
                while let d = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(d) { index += 1 }
            }
            if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
                integral = false
                index += 1
                if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
                guard let d = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(d) else { throw .badJSON }
                while let d = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(d) { index += 1 }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard integral, digitsEnd - digitsStart <= 16 else { return .number(text) }
            var magnitude: Int64 = 0
            for d in bytes[digitsStart..<digitsEnd] { magnitude = magnitude * 10 + Int64(d - UInt8(ascii: "0")) }
            guard magnitude <= CanonicalJSON.maximumInteger else { return .number(text) }
            return .integer(negative ? -magnitude : magnitude)
        }
    }
}
