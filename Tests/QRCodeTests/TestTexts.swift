@testable import QRCode

/// The texts of the segno fixtures, made by the same rules as scripts/make_segno_fixtures.py.
enum TestTexts {
    static let bech32 = Array("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
    static let sample = Array("Burrow ✉ Grüße, 世界! 🐦 ".unicodeScalars)

    /// "BURROWCARD1" then bech32 characters: an upper-cased card's shape.
    static func cardLike(_ n: Int) -> String {
        let head = Array("BURROWCARD1")
        let body = (head.count..<max(n, head.count)).map { bech32[($0 * 7 + $0 / 32) % 32] }
        return String((head + body).prefix(n))
    }

    /// The first n code points of the UTF-8 sample, repeated.
    static func utf8Sample(_ n: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for i in 0..<n { scalars.append(sample[i % sample.count]) }
        return String(scalars)
    }

    static func digits(_ n: Int) -> String {
        String((0..<n).map { Character(String(($0 * 3 + $0 / 10) % 10)) })
    }

    static func text(mode: String, length: Int) -> String {
        switch mode {
        case "alphanumeric": cardLike(length)
        case "numeric": digits(length)
        default: utf8Sample(length)
        }
    }

    static func segment(mode: String, length: Int) throws -> QRSegment {
        let text = text(mode: mode, length: length)
        switch mode {
        case "alphanumeric": return try QRSegment.alphanumeric(text)
        case "numeric": return try QRSegment.numeric(text)
        default: return QRSegment.utf8(text)
        }
    }

    /// FNV-1a 64 over the modules, row-major, "1" dark and "0" light.
    static func fingerprint(_ matrix: QRMatrix) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for dark in matrix.modules {
            hash ^= dark ? 0x31 : 0x30
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }
}

extension TestTexts {
    /// Reads half-block lines back into module rows as a terminal shows them: true where the
    /// cell half is dark on screen. With dark modules printed the foreground is dark on a light
    /// background; with light modules printed, light on a dark one.
    static func modules(fromTerminalLines lines: [String], polarity: TerminalRenderer.Polarity) -> [[Bool]] {
        var rows: [[Bool]] = []
        for line in lines {
            var upper: [Bool] = [], lower: [Bool] = []
            for character in line {
                let (top, bottom): (Bool, Bool) = switch character {
                case "█": (true, true)
                case "▀": (true, false)
                case "▄": (false, true)
                default: (false, false)
                }
                // Printed = foreground colour.
                upper.append(polarity == .darkModulesPrinted ? top : !top)
                lower.append(polarity == .darkModulesPrinted ? bottom : !bottom)
            }
            rows.append(upper)
            rows.append(lower)
        }
        return rows
    }
}
