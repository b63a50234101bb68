import Foundation
import TestSupport
import XCTest
@testable import QRCode

/// Symbols rendered to greyscale images and read back by zbar's `zbarimg` (Debian package
/// `zbar-tools`), a decoder written independently of this encoder.
///
/// A missing `zbarimg` fails the tests: a round trip that quietly skips proves nothing. Only
/// with `BURROW_ALLOW_MISSING_PEERS=1` (a machine that cannot install it, said out loud) are
/// they skipped. `ZBARIMG` may name the program; otherwise it is looked up on PATH.
final class ZbarRoundTripTests: XCTestCase {
    // MARK: Content

    func testShortAlphanumericAtEveryLevel() throws {
        for level in QRErrorCorrectionLevel.allCases {
            for text in ["HELLO WORLD", "BURROWCARD1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", "A", "$%*+-./: 0123456789"] {
                let matrix = try QREncoder.encode(segments: [try .alphanumeric(text)], level: level)
                try assertRoundTrip(matrix, text)
            }
        }
    }

    /// The spec's contact card size: 599 upper-case bech32m-like characters, version 13 at L.
    func testCardSizedAlphanumeric() throws {
        let card = TestTexts.cardLike(599)
        let matrix = try QREncoder.encode(segments: [try .alphanumeric(card)], level: .low)
        XCTAssertEqual(matrix.version.number, 13)
        try assertRoundTrip(matrix, card)
        // And the largest card the decoders take, 1500 characters (version 23 at L).
        let largest = TestTexts.cardLike(1500)
        let big = try QREncoder.encode(largest, level: .low)
        XCTAssertEqual(big.version.number, 23)
        try assertRoundTrip(big, largest)
    }

    func testByteModeUTF8() throws {
        for (text, level) in [
            ("Grüße, 世界! 🐦 burrow ✉", QRErrorCorrectionLevel.medium),
            ("burrowcard1 lower case goes to byte mode", .low),
            (TestTexts.utf8Sample(300), .quartile),
            ("https://example.org/?q=a&b=c#frag", .high),
        ] {
            let matrix = try QREncoder.encode(text, level: level)
            XCTAssertEqual(QRSegment.automatic(text).mode, .byte)
            try assertRoundTrip(matrix, text)
        }
    }

    /// A UTF-8 byte segment announced by an ECI header (assignment 26).
    func testByteModeWithECI() throws {
        let text = "Grüße, 世界! 🐦"
        let matrix = try QREncoder.encode(segments: [try .eci(26), .utf8(text)], level: .medium)
        try assertRoundTrip(matrix, text)
    }

    func testNumericAndMixedSegments() throws {
        try assertRoundTrip(try QREncoder.encode("01234567", level: .medium), "01234567")
        try assertRoundTrip(try QREncoder.encode(TestTexts.digits(1000), level: .quartile), TestTexts.digits(1000))
        let segments = [try QRSegment.alphanumeric("BURROW "), .utf8("contact → "), try .numeric("20261125")]
        try assertRoundTrip(try QREncoder.encode(segments: segments, level: .medium), "BURROW contact → 20261125")
    }

    // MARK: Versions, levels and masks

    /// Forced versions from 1 to 40, each filled to its alphanumeric capacity, levels in turn:
    /// covers version information (7 and up), every count field width and large block counts.
    func testVersionsAtFullCapacity() throws {
        let levels = QRErrorCorrectionLevel.allCases
        for (index, number) in [1, 2, 5, 6, 7, 9, 10, 14, 20, 26, 27, 32, 35, 40].enumerated() {
            let version = try QRVersion(number)
            let level = levels[index % 4]
            let available = version.dataCapacityBits(level) - 4 - QRMode.alphanumeric.characterCountBits(version: number)
            let length = available / 11 * 2 + (available % 11 >= 6 ? 1 : 0)
            let text = TestTexts.cardLike(length)
            let matrix = try QREncoder.encode(text, level: level, version: version)
            XCTAssertEqual(matrix.version, version)
            XCTAssertThrowsError(try QREncoder.encode(TestTexts.cardLike(length + 1), level: level, version: version))
            try assertRoundTrip(matrix, text, "\(number)-\(level)")
        }
    }

    func testEveryMask() throws {
        for mask in QRMask.all {
            for (text, version, level) in [
                ("HELLO", 1, QRErrorCorrectionLevel.high),
                (TestTexts.cardLike(150), 7, .medium),
                (TestTexts.utf8Sample(200), 12, .low),
            ] {
                let matrix = try QREncoder.encode(text, level: level, version: try QRVersion(version), mask: mask)
                XCTAssertEqual(matrix.mask, mask)
                try assertRoundTrip(matrix, text, "\(mask) \(version)-\(level)")
            }
        }
    }

    // MARK: Error correction

    /// A smudge over part of the data region is corrected by the decoder from the Reed–Solomon
    /// codewords, which checks them more strictly than a clean read does; with no symbol at
    /// all, the harness reports a failure rather than some text.
    func testDamagedSymbolsAreCorrected() throws {
        for (level, side) in [(QRErrorCorrectionLevel.high, 9), (.quartile, 7), (.medium, 5), (.low, 3)] {
            let text = TestTexts.cardLike(80)
            let matrix = try QREncoder.encode(text, level: level, version: try QRVersion(7))
            var rows = matrix.rows
            // Flip a side × side square of the data area from (26, 34): clear of the alignment
            // patterns at (22, 38) and (38, 38) and of the finders.
            for y in 34..<(34 + side) {
                for x in 26..<(26 + side) { rows[y][x].toggle() }
            }
            XCTAssertNotEqual(rows, matrix.rows)
            XCTAssertEqual(try Zbar.decode(Image(rows: rows, border: 4, borderDark: false, scale: 4)), text, "\(level)")
        }
        let blank = Image(rows: [[Bool]](repeating: [Bool](repeating: false, count: 21), count: 21), border: 4, borderDark: false, scale: 4)
        XCTAssertThrowsError(try Zbar.decode(blank)) { error in
            XCTAssertTrue(error is Zbar.Failed, "\(error)")
        }
    }

    // MARK: The terminal text itself

    /// The half-block lines, drawn as a terminal would show them, scan: dark modules printed
    /// on a light terminal, and light modules printed on a dark terminal, where the code's
    /// 2-module quiet zone is the only light margin (the rest of the screen is dark).
    func testTerminalLinesScan() throws {
        let card = TestTexts.cardLike(599)
        let matrix = try QREncoder.encode(card, level: .low)
        for polarity in [TerminalRenderer.Polarity.darkModulesPrinted, .lightModulesPrinted] {
            let lines = TerminalRenderer.lines(matrix, polarity: polarity)
            XCTAssertEqual(lines.count, 37)
            let screen = TestTexts.modules(fromTerminalLines: lines, polarity: polarity)
            // 6 cells of terminal background around the text.
            let background = polarity == .lightModulesPrinted
            let image = Image(rows: screen, border: 6, borderDark: background, scale: 4)
            XCTAssertEqual(try Zbar.decode(image), card, "\(polarity)")
        }
    }

    // MARK: Helpers

    private func assertRoundTrip(_ matrix: QRMatrix, _ text: String, _ name: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
        // The standard's 4-module quiet zone, 4 pixels per module.
        let image = Image(rows: ASCIIRenderer.lines(matrix).map { $0.map { $0 == "#" } }, border: 4, borderDark: false, scale: 4)
        let decoded = try Zbar.decode(image)
        XCTAssertEqual(decoded, text, "\(matrix.version)-\(matrix.errorCorrectionLevel) \(matrix.mask) \(name)", file: file, line: line)
    }
}

