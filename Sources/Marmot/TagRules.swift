import Nostr

/// Tag lookups with MDK's (rust-nostr's) semantics: a tag's kind is its first element compared
/// exactly, "the" tag of a kind is the first one, and its content is the second element.
enum TagRules {
    static func first(_ tags: [[String]], _ name: String) -> [String]? {
        tags.first { $0.first == name }
    }

    static func all(_ tags: [[String]], _ name: String) -> [[String]] {
        tags.filter { $0.first == name }
    }

    static func content(_ tag: [String]) -> String? { tag.count >= 2 ? tag[1] : nil }

    /// Rust `hex::decode` acceptance: even length, hex digits of either case.
    static func isHex(_ s: String) -> Bool {
        let utf8 = s.utf8
        return utf8.count % 2 == 0 && utf8.allSatisfy(isHexDigit)
    }

    static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
    }

    /// `0x` followed by exactly four hex digits (MDK's check for code-point tag values).
    static func isCodePoint(_ s: String) -> Bool {
        let utf8 = Array(s.utf8)
        return utf8.count == 6 && utf8[0] == UInt8(ascii: "0") && utf8[1] == UInt8(ascii: "x")
            && utf8[2...].allSatisfy(isHexDigit)
    }

    /// `0x` and four lowercase hex digits: MDK's `to_nostr_tag` form.
    static func codePoint(_ value: UInt16) -> String {
        let hex = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 4 - hex.count) + hex
    }

    /// The ASCII-lowercased value (Rust `to_lowercase` on the ASCII strings these tags hold).
    static func lowercased(_ s: String) -> String { s.lowercased() }
}
