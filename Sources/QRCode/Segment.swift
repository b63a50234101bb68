/// The data modes this encoder writes (ISO/IEC 18004 table 2). Kanji and structured append are
/// left out: Burrow's cards are alphanumeric and general text goes through byte mode.
public enum QRMode: Sendable, Equatable, CaseIterable {
    /// Digits 0–9, 10 bits per three digits.
    case numeric
    /// `0–9 A–Z space $ % * + - . / :`, 11 bits per two characters: upper-case bech32m fits,
    /// which is why cards are upper-cased for QR codes (about 5.5 bits per character instead of 8).
    case alphanumeric
    /// Any 8-bit bytes; this encoder writes text as UTF-8.
    case byte
    /// An Extended Channel Interpretation header: tells the decoder how to read later byte segments.
    case eci

    /// The 4-bit mode indicator.
    var indicator: Int {
        switch self {
        case .numeric: 0b0001
        case .alphanumeric: 0b0010
        case .byte: 0b0100
        case .eci: 0b0111
        }
    }

    /// Width of the character count field, which grows with the symbol (table 3): versions 1–9,
    /// 10–26 and 27–40. An ECI header has none.
    func characterCountBits(version: Int) -> Int {
        let range = version <= 9 ? 0 : version <= 26 ? 1 : 2
        switch self {
        case .numeric: return [10, 12, 14][range]
        case .alphanumeric: return [9, 11, 13][range]
        case .byte: return [8, 16, 16][range]
        case .eci: return 0
        }
    }
}

/// A run of input in one mode, already converted to its data bits (without the mode indicator
/// and character count, whose widths depend on the version chosen later).
public struct QRSegment: Sendable, Equatable {
    public let mode: QRMode
    /// Characters for numeric and alphanumeric, bytes for byte mode, 0 for ECI.
    public let characterCount: Int
    /// The encoded data bits; for ECI the whole designator field.
    public let data: BitBuffer

    /// The 45 characters of alphanumeric mode, in value order (table 5).
    static let alphanumericCharacters: [Unicode.Scalar] = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".unicodeScalars)

    /// The alphanumeric value of a character, or nil. A `Character` made of several scalars
    /// (a letter with a combining accent, "\r\n") is never one.
    static func alphanumericValue(of character: Character) -> Int? {
        let scalars = character.unicodeScalars
        guard scalars.count == 1, let scalar = scalars.first else { return nil }
        return alphanumericCharacters.firstIndex(of: scalar)
    }

    /// Digits only, three per 10 bits (then 7 bits for two, 4 for one).
    public static func numeric(_ digits: String) throws(QRError) -> QRSegment {
        var values: [Int] = []
        for (offset, character) in digits.enumerated() {
            guard character.unicodeScalars.count == 1, let scalar = character.unicodeScalars.first,
                  scalar >= "0", scalar <= "9"
            else { throw QRError.invalidCharacter(character, offset: offset, mode: .numeric) }
            values.append(Int(scalar.value) - 48)
        }
        var bits = BitBuffer()
        var index = 0
        while index < values.count {
            let take = min(3, values.count - index)
            let group = values[index..<index + take].reduce(0) { $0 * 10 + $1 }
            bits.append(group, bits: [0, 4, 7, 10][take])
            index += take
        }
        return QRSegment(mode: .numeric, characterCount: values.count, data: bits)
    }

    /// Upper-case letters, digits and ` $%*+-./:`, two per 11 bits (45 × first + second), a
    /// last odd one in 6 bits. Lower case is refused, not folded: the caller decides (Burrow
    /// upper-cases bech32m, whose checksum is case-insensitive).
    public static func alphanumeric(_ text: String) throws(QRError) -> QRSegment {
        var values: [Int] = []
        for (offset, character) in text.enumerated() {
            guard let value = alphanumericValue(of: character) else {
                throw QRError.invalidCharacter(character, offset: offset, mode: .alphanumeric)
            }
            values.append(value)
        }
        var bits = BitBuffer()
        var index = 0
        while index + 1 < values.count {
            bits.append(values[index] * 45 + values[index + 1], bits: 11)
            index += 2
        }
        if index < values.count { bits.append(values[index], bits: 6) }
        return QRSegment(mode: .alphanumeric, characterCount: values.count, data: bits)
    }

    /// Raw bytes, 8 bits each.
    public static func bytes<Bytes: Sequence>(_ bytes: Bytes) -> QRSegment where Bytes.Element == UInt8 {
        var bits = BitBuffer()
        var count = 0
        for byte in bytes {
            bits.append(Int(byte), bits: 8)
            count += 1
        }
        return QRSegment(mode: .byte, characterCount: count, data: bits)
    }

    /// Text as UTF-8 bytes. Without an ECI header the standard's default for byte mode is
    /// ISO 8859-1, but common readers (zbar, ZXing, phone cameras) recognise valid UTF-8; add
    /// `eci(26)` in front when a reader must be told.
    public static func utf8(_ text: String) -> QRSegment {
        bytes(text.utf8)
    }

    /// An ECI header with the given assignment number (26 is UTF-8, 3 is ISO 8859-1). The
    /// designator takes 8, 16 or 24 bits depending on its size (table 4).
    public static func eci(_ assignment: Int) throws(QRError) -> QRSegment {
        var bits = BitBuffer()
        switch assignment {
        case 0..<128:
            bits.append(assignment, bits: 8)
        case 128..<16384:
            bits.append(0b10, bits: 2)
            bits.append(assignment, bits: 14)
        case 16384..<1_000_000:
            bits.append(0b110, bits: 3)
            bits.append(assignment, bits: 21)
        default:
            throw QRError.invalidECIAssignment(assignment)
        }
        return QRSegment(mode: .eci, characterCount: 0, data: bits)
    }

    /// The densest single segment for `text`: numeric if it is all digits, alphanumeric if it is
    /// all alphanumeric characters, UTF-8 bytes otherwise. Never fails.
    public static func automatic(_ text: String) -> QRSegment {
        if !text.isEmpty, let segment = try? numeric(text) { return segment }
        if !text.isEmpty, let segment = try? alphanumeric(text) { return segment }
        return utf8(text)
    }

    /// Bits this segment takes in a symbol of `version`, header included; nil when its
    /// character count does not fit the count field of that version.
    func bitLength(version: Int) -> Int? {
        let countBits = mode.characterCountBits(version: version)
        guard characterCount < 1 << countBits || mode == .eci else { return nil }
        return 4 + countBits + data.count
    }
}
