import TestSupport
import XCTest
@testable import QRCode

/// Values from ISO/IEC 18004 (its worked example, its format and version information tables)
/// and symbols made by segno, a third-party encoder (SegnoFixtures.swift).
final class KnownAnswerTests: XCTestCase {
    private let levels = QRErrorCorrectionLevel.allCases

    // MARK: Reed–Solomon

    /// Annex I: "01234567" at 1-M. Data codewords and the 10 EC codewords are the standard's.
    func testAnnexExampleCodewords() throws {
        let version = try QRVersion(1)
        let data = QREncoder.dataCodewords([try .numeric("01234567")], version: version, level: .medium)
        XCTAssertEqual(data, [
            0x10, 0x20, 0x0C, 0x56, 0x61, 0x80, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11,
        ])
        XCTAssertEqual(ReedSolomon(ecCodewords: 10).ecCodewords(for: data),
                       [0xA5, 0x24, 0xD4, 0xC1, 0xED, 0x36, 0xC7, 0x87, 0x2C, 0x55])
        // One block: the final sequence is data then EC.
        XCTAssertEqual(QREncoder.finalCodewords(data, version: version, level: .medium),
                       data + [0xA5, 0x24, 0xD4, 0xC1, 0xED, 0x36, 0xC7, 0x87, 0x2C, 0x55])
    }

    /// "HELLO WORLD" at 1-M, the widely published worked example.
    func testHelloWorldCodewords() throws {
        let data = QREncoder.dataCodewords([try .alphanumeric("HELLO WORLD")], version: try QRVersion(1), level: .medium)
        XCTAssertEqual(data, [32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17])
        XCTAssertEqual(ReedSolomon(ecCodewords: 10).ecCodewords(for: data), [196, 35, 39, 119, 235, 215, 231, 226, 93, 23])
    }

    /// The generator polynomial for 7 EC codewords, as exponents of α (annex A):
    /// x^7 + α^87 x^6 + α^229 x^5 + α^146 x^4 + α^149 x^3 + α^238 x^2 + α^102 x + α^21.
    func testGeneratorPolynomial() {
        let exponents = ReedSolomon(ecCodewords: 7).generator.map { GF256.log[Int($0)] }
        XCTAssertEqual(exponents, [87, 229, 146, 149, 238, 102, 21])
    }

    /// EC codewords are what make the codeword polynomial divisible by g(x): it vanishes at
    /// α^0 … α^(n−1). Checked for every block size the tables use.
    func testCodewordsVanishAtGeneratorRoots() {
        var rng = SplitMix64(seed: 0x9E37_79B9_7F4A_7C15)
        for n in Set(QRVersion.all.flatMap { v in levels.map { v.blockLayout($0).ecCodewordsPerBlock } }).sorted() {
            let data = (0..<(20 + n)).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
            let codeword = data + ReedSolomon(ecCodewords: n).ecCodewords(for: data)
            for i in 0..<n {
                let root = GF256.exp[i]
                let value = codeword.reduce(UInt8(0)) { GF256.multiply($0, root) ^ $1 }  // Horner
                XCTAssertEqual(value, 0, "n = \(n), root α^\(i)")
            }
        }
    }

    // MARK: BCH

    /// Table C.1: the 32 format information strings after masking with 101010000010010.
    func testFormatInformationTable() throws {
        let table: [QRErrorCorrectionLevel: [String]] = [
            .low: ["111011111000100", "111001011110011", "111110110101010", "111100010011101",
                   "110011000101111", "110001100011000", "110110001000001", "110100101110110"],
            .medium: ["101010000010010", "101000100100101", "101111001111100", "101101101001011",
                      "100010111111001", "100000011001110", "100111110010111", "100101010100000"],
            .quartile: ["011010101011111", "011000001101000", "011111100110001", "011101000000110",
                        "010010010110100", "010000110000011", "010111011011010", "010101111101101"],
            .high: ["001011010001001", "001001110111110", "001110011100111", "001100111010000",
                    "000011101100010", "000001001010101", "000110100001100", "000100000111011"],
        ]
        for level in levels {
            for mask in QRMask.all {
                XCTAssertEqual(BCH.formatInformation(level: level, mask: mask), Int(table[level]![mask.pattern], radix: 2),
                               "\(level) \(mask)")
            }
        }
    }

    /// Table D.1: version information for versions 7–40.
    func testVersionInformationTable() throws {
        let table = [
            0x07C94, 0x085BC, 0x09A99, 0x0A4D3, 0x0BBF6, 0x0C762, 0x0D847, 0x0E60D, 0x0F928, 0x10B78,
            0x1145D, 0x12A17, 0x13532, 0x149A6, 0x15683, 0x168C9, 0x177EC, 0x18EC4, 0x191E1, 0x1AFAB,
            0x1B08E, 0x1CC1A, 0x1D33F, 0x1ED75, 0x1F250, 0x209D5, 0x216F0, 0x228BA, 0x2379F, 0x24B0B,
            0x2542E, 0x26A64, 0x27541, 0x28C69,
        ]
        for (offset, expected) in table.enumerated() {
            XCTAssertEqual(try QRVersion(7 + offset).versionInformation, expected, "version \(7 + offset)")
        }
        for number in 1...6 { XCTAssertNil(try QRVersion(number).versionInformation) }
    }

    // MARK: Whole symbols against segno and python-qrcode

    /// Every version and level at full alphanumeric capacity, plus byte (UTF-8) and numeric
    /// symbols, with a forced mask: module for module the same as python-qrcode's and segno's
    /// (by hash), except where segno adds its extra 0x00 codeword (see the script).
    func testSymbolsMatchReferenceEncoders() throws {
        XCTAssertEqual(ReferenceSymbols.cases.count, 160 + 26 + 5)
        var segnoQuirks = 0
        for fixture in ReferenceSymbols.cases {
            let level = levels[fixture.level]
            let version = try QRVersion(fixture.version)
            let segment = try TestTexts.segment(mode: fixture.mode, length: fixture.length)
            let matrix = try QREncoder.encode(segments: [segment], level: level, version: version, mask: try QRMask(fixture.mask))
            let name = "\(fixture.mode) × \(fixture.length) at \(fixture.version)-\(level) mask \(fixture.mask)"
            let fingerprint = TestTexts.fingerprint(matrix)
            XCTAssertEqual(fingerprint, fixture.qrcode, "python-qrcode: " + name)
            // segno's quirk: the stream, terminated, ends on a byte boundary before capacity.
            let capacity = version.dataCapacityBits(level)
            let terminated = min(try XCTUnwrap(QREncoder.dataBits([segment], version: version)) + 4, capacity)
            if terminated % 8 == 0 && terminated < capacity {
                segnoQuirks += 1
                XCTAssertNotEqual(fixture.segno, fixture.qrcode, "segno pads this one as the standard does: " + name)
            } else {
                XCTAssertEqual(fingerprint, fixture.segno, "segno: " + name)
                // Same symbol, so the same penalty score as segno's evaluate_mask, but for the
                // rule 3 patterns segno's search steps over.
                XCTAssertEqual(Penalty.score(matrix), fixture.segnoPenalty + 40 * segnoSkippedFinderLikePatterns(matrix),
                               "penalty: " + name)
            }
        }
        XCTAssertEqual(segnoQuirks, 3)
    }

    /// The fixtures' lengths are the most the references fit in each version and level: the
    /// smallest version chosen for that length is the fixture's, and one more character does
    /// not fit it.
    func testCapacitiesMatchReferenceEncoders() throws {
        for fixture in ReferenceSymbols.cases where fixture.full {
            let level = levels[fixture.level]
            let fits = try QREncoder.encode(segments: [try TestTexts.segment(mode: fixture.mode, length: fixture.length)], level: level)
            XCTAssertEqual(fits.version.number, fixture.version, "\(fixture.mode) × \(fixture.length) at \(level)")
            let over = try TestTexts.segment(mode: fixture.mode, length: fixture.length + 1)
            XCTAssertThrowsError(try QREncoder.encode(segments: [over], level: level, version: try QRVersion(fixture.version)),
                                 "\(fixture.mode) × \(fixture.length + 1) at \(fixture.version)-\(level)")
        }
    }

    /// Small symbols compared whole with python-qrcode's, including the standard's own example
    /// "01234567" at 1-M with mask 010.
    func testWholeSymbolsMatchReferenceEncoder() throws {
        for symbol in ReferenceSymbols.symbols {
            let segment: QRSegment = switch symbol.mode {
            case "numeric": try .numeric(symbol.text)
            case "alphanumeric": try .alphanumeric(symbol.text)
            default: .utf8(symbol.text)
            }
            let matrix = try QREncoder.encode(
                segments: [segment], level: levels[symbol.level], version: try QRVersion(symbol.version), mask: try QRMask(symbol.mask)
            )
            XCTAssertEqual(ASCIIRenderer.lines(matrix), symbol.rows, symbol.text)
        }
    }

    /// Rule 3 patterns that segno 1.6.6's evaluate_mask does not count and this encoder does.
    /// segno resumes its search 7 modules after a counted pattern, so a pattern overlapping it
    /// (sharing its last 1 or 3 modules, as in #.###.#.###.#) is missed even with a light area
    /// after it; after an uncounted match it resumes 4 on, which skips nothing.
    private func segnoSkippedFinderLikePatterns(_ matrix: QRMatrix) -> Int {
        let n = matrix.size
        let pattern = [true, false, true, true, true, false, true]
        var skipped = 0
        for index in 0..<n {
            for line in [(0..<n).map { matrix[$0, index] }, (0..<n).map { matrix[index, $0] }] {
                func light(_ k: Int) -> Bool { k < 0 || k >= n || !line[k] }
                func counted(_ start: Int) -> Bool {
                    (1...4).allSatisfy { light(start - $0) } || (0..<4).allSatisfy { light(start + 7 + $0) }
                }
                let matches = (0...(n - 7)).filter { start in (0..<7).allSatisfy { line[start + $0] == pattern[$0] } }
                var resume = 0
                for start in matches {
                    if start < resume {
                        if counted(start) { skipped += 1 }
                        continue
                    }
                    resume = counted(start) ? start + 7 : start + 4
                }
            }
        }
        return skipped
    }
}
