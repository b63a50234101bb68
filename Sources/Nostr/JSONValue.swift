/// A JSON value as Nostr carries it, parsed strictly from untrusted bytes.
///
/// Hand-written rather than Foundation's JSONSerialization so the rules are ours: integers stay
/// exact `Int64` (never a lossy `Double`, never confused with `Bool`), duplicate object keys and
/// lone surrogates are rejected, nesting is bounded, and output uses NIP-01's escaping.
public indirect enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int64`.
    case integer(Int64)
    /// Any other number.
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// Members in document order; keys are unique (the parser rejects duplicates).
    case object([JSONMember])

    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var integerValue: Int64? { if case .integer(let i) = self { return i } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    public var objectValue: [JSONMember]? { if case .object(let o) = self { return o } else { return nil } }

    /// The member named `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for member in members where member.key == key { return member.value }
        return nil
    }
}

/// One `"key": value` pair of a JSON object.
public struct JSONMember: Sendable, Hashable {
    public var key: String
    public var value: JSONValue
    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}

// MARK: - Parsing

extension JSONValue {
    /// Nesting deeper than this is rejected (Nostr messages nest four levels).
    public static let maximumDepth = 64

    /// Parses one JSON document (surrounding whitespace allowed, nothing else).
    public static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(buffer)
            return try parser.parseDocument()
        }
    }

    public static func parse(_ string: String) throws -> JSONValue {
        try parse(Array(string.utf8))
    }
}

private struct JSONParser {
    let input: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0

    init(_ input: UnsafeBufferPointer<UInt8>) { self.input = input }

    func fail(_ reason: String) -> NostrError { .malformedJSON("\(reason) at byte \(index)") }

    mutating func parseDocument() throws -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == input.count else { throw fail("trailing data") }
        return value
    }

    mutating func skipWhitespace() {
        while index < input.count {
            switch input[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws -> JSONValue {
        guard index < input.count else { throw fail("unexpected end") }
        switch input[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard input.count - index >= count else { throw fail("bad literal") }
        let start = literal.utf8Start
        for i in 0..<count where input[index + i] != start[i] { throw fail("bad literal") }
        index += count
    }

    mutating func enter() throws {
        depth += 1
        guard depth <= JSONValue.maximumDepth else { throw fail("nesting too deep") }
    }

    mutating func parseObject() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [JSONMember] = []
        skipWhitespace()
        if index < input.count, input[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < input.count, input[index] == UInt8(ascii: "\"") else { throw fail("expected key") }
            let key = try parseString()
            if members.contains(where: { $0.key == key }) { throw fail("duplicate key") }
            skipWhitespace()
            guard index < input.count, input[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            members.append(JSONMember(key, try parseValue()))
            skipWhitespace()
            guard index < input.count else { throw fail("unterminated object") }
            if input[index] == UInt8(ascii: ",") { index += 1; continue }
            if input[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw fail("expected ',' or '}'")
        }
    }

    mutating func parseArray() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < input.count, input[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < input.count else { throw fail("unterminated array") }
            if input[index] == UInt8(ascii: ",") { index += 1; continue }
            if input[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw fail("expected ',' or ']'")
        }
    }

    mutating func parseString() throws -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes.
        while index < input.count {
            let c = input[index]
            if c == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: input[start..<index])
                index += 1
                guard let s = String(validating: slice, as: UTF8.self) else { throw fail("invalid UTF-8") }
                return s
            }
            if c == UInt8(ascii: "\\") { break }
            if c < 0x20 { throw fail("control character in string") }
            index += 1
        }
        var bytes = Array(input[start..<index])
        while index < input.count {
            let c = input[index]
            switch c {
            case UInt8(ascii: "\""):
                index += 1
                guard let s = String(validating: bytes, as: UTF8.self) else { throw fail("invalid UTF-8") }
                return s
            case UInt8(ascii: "\\"):
                index += 1
                guard index < input.count else { throw fail("unterminated escape") }
                let e = input[index]
                index += 1
                switch e {
                case UInt8(ascii: "\""): bytes.append(0x22)
                case UInt8(ascii: "\\"): bytes.append(0x5C)
                case UInt8(ascii: "/"): bytes.append(0x2F)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard input.count - index >= 6, input[index] == UInt8(ascii: "\\"),
                              input[index + 1] == UInt8(ascii: "u") else { throw fail("lone surrogate") }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("lone surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("lone surrogate")
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw fail("invalid escape") }
                    UTF8.encode(u) { bytes.append($0) }
                default: throw fail("invalid escape")
                }
            default:
                if c < 0x20 { throw fail("control character in string") }
                bytes.append(c)
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    mutating func parseHex4() throws -> UInt32 {
        guard input.count - index >= 4 else { throw fail("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = input[index]
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw fail("bad \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    mutating func parseNumber() throws -> JSONValue {
        let start = index
        var isInteger = true
        if input[index] == UInt8(ascii: "-") { index += 1 }
        guard index < input.count, isDigit(input[index]) else { throw fail("bad number") }
        if input[index] == UInt8(ascii: "0") {
            index += 1
            if index < input.count, isDigit(input[index]) { throw fail("leading zero") }
        } else {
            while index < input.count, isDigit(input[index]) { index += 1 }
        }
        if index < input.count, input[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < input.count, isDigit(input[index]) else { throw fail("bad fraction") }
            while index < input.count, isDigit(input[index]) { index += 1 }
        }
        if index < input.count, input[index] == UInt8(ascii: "e") || input[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < input.count, input[index] == UInt8(ascii: "+") || input[index] == UInt8(ascii: "-") { index += 1 }
            guard index < input.count, isDigit(input[index]) else { throw fail("bad exponent") }
            while index < input.count, isDigit(input[index]) { index += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<index]), as: UTF8.self)
        if isInteger, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text), value.isFinite else { throw fail("number out of range") }
        return .double(value)
    }

    func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
}

// MARK: - Serialization

extension JSONValue {
    /// Compact JSON with NIP-01 string escaping (no whitespace, no `\/`, non-ASCII verbatim).
    public var jsonString: String { String(decoding: jsonBytes, as: UTF8.self) }

    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }

    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .integer(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            // JSON has no NaN or infinity; the parser never produces them.
            out.append(contentsOf: (d.isFinite ? "\(d)" : "null").utf8)
        case .string(let s): JSONWriter.writeString(s, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}

/// The NIP-01 serializer primitives shared by events, rumors, filters and relay messages.
public enum JSONWriter {
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes `"…"` escaping exactly `"` `\` and the control characters: \n \r \t \b \f by name,
    /// the rest of U+0000–U+001F as `\u00xx`. Everything else (including `/`, DEL and
    /// non-ASCII UTF-8) is written verbatim, as NIP-01 requires for the event id.
    public static func writeString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            for c in utf8 {
                switch c {
                case 0x22: out.append(0x5C); out.append(0x22)
                case 0x5C: out.append(0x5C); out.append(0x5C)
                case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
                case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
                case 0x08: out.append(0x5C); out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(0x5C); out.append(UInt8(ascii: "f"))
                case 0x00..<0x20:
                    out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                    out.append(hexDigits[Int(c >> 4)])
                    out.append(hexDigits[Int(c & 0x0F)])
                default: out.append(c)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `[[…],[…]]` for a tag list.
    public static func writeTags(_ tags: [[String]], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (i, tag) in tags.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "["))
            for (j, value) in tag.enumerated() {
                if j > 0 { out.append(UInt8(ascii: ",")) }
                writeString(value, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "]"))
    }

    public static func writeInteger<I: BinaryInteger>(_ value: I, to out: inout [UInt8]) {
        out.append(contentsOf: String(value).utf8)
    }

    /// Writes `"key":` (the key is escaped like any string).
    public static func writeKey(_ key: String, to out: inout [UInt8]) {
        writeString(key, to: &out)
        out.append(UInt8(ascii: ":"))
    }
}
