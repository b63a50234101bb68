import XCTest
@testable import QRCode

/// The symbol's structure, version selection, errors, penalty rules and renderers.
final class StructureTests: XCTestCase {
    // MARK: Versions and tables

    /// The codeword capacity formula agrees with the modules the builder leaves free, and the
    /// remainder bits are table 1's: 0 for 1, 7 for 2–6, 0 for 7–13, 3 for 14–20, 4 for
    /// 21–27, 3 for 28–34, 0 for 35–40.
    func testDataModulesMatchDrawnFunctionPatterns() {
        for version in QRVersion.all {
            XCTAssertEqual(MatrixBuilder(version: version).dataModuleCount, version.rawDataModules, "\(version)")
            let v = version.number
            let remainder = v == 1 ? 0 : v <= 6 ? 7 : v <= 13 ? 0 : v <= 20 ? 3 : v <= 27 ? 4 : v <= 34 ? 3 : 0
            XCTAssertEqual(version.remainderBits, remainder, "\(version)")
        }
    }

    /// Table 1 and table 9 values at a few versions.
    func testCodewordCounts() throws {
        XCTAssertEqual(try QRVersion(1).totalCodewords, 26)
        XCTAssertEqual(try QRVersion(7).totalCodewords, 196)
        XCTAssertEqual(try QRVersion(13).totalCodewords, 532)
        XCTAssertEqual(try QRVersion(40).totalCodewords, 3706)
        XCTAssertEqual(try QRVersion(1).blockLayout(.high).dataCodewords, 9)
        XCTAssertEqual(try QRVersion(13).blockLayout(.low).dataCodewords, 428)
        XCTAssertEqual(try QRVersion(40).blockLayout(.low).dataCodewords, 2956)
        XCTAssertEqual(try QRVersion(40).blockLayout(.high).dataCodewords, 1276)
        // 5-Q: two blocks of 15 data codewords, two of 16 (table 9's two groups).
        let layout = try QRVersion(5).blockLayout(.quartile)
        XCTAssertEqual(layout.shortBlockCount, 2)
        XCTAssertEqual(layout.shortBlockDataCodewords, 15)
        XCTAssertEqual(layout.dataCodewords, 62)
    }

    /// Table E.1's shape: from 6 to size − 7, v / 7 + 2 centres, evenly spaced by an even step
    /// after the first gap, which differs in some versions (shorter, or longer in version 32).
    func testAlignmentPatternCenters() {
        for version in QRVersion.all.dropFirst() {
            let centers = version.alignmentPatternCenters
            XCTAssertEqual(centers.count, version.number / 7 + 2, "\(version)")
            XCTAssertEqual(centers.first, 6)
            XCTAssertEqual(centers.last, version.size - 7)
            let steps = zip(centers.dropFirst(), centers).map { $0 - $1 }
            XCTAssertEqual(Set(steps.dropFirst()).count <= 1, true, "\(version): \(steps)")
            XCTAssertTrue(steps.allSatisfy { $0 % 2 == 0 }, "\(version): \(steps)")
            XCTAssertTrue(steps[0] <= steps.last! || version.number == 32, "\(version): \(steps)")
        }
        XCTAssertEqual(QRVersion.smallest.alignmentPatternCenters, [])
    }

    // MARK: Version selection

    /// The spec's promise: an upper-case card under 600 characters is version 13 at L, 69
    /// modules, 73 with the 2-module margin, 73 columns × 37 lines of half blocks.
    func testCardOf599CharactersIsVersion13AtL() throws {
        let card = TestTexts.cardLike(599)
        let matrix = try QREncoder.encode(card, level: .low)
        XCTAssertEqual(matrix.version.number, 13)
        XCTAssertEqual(matrix.size, 69)
        let lines = TerminalRenderer.lines(matrix)
        XCTAssertEqual(lines.count, 37)
        XCTAssertTrue(lines.allSatisfy { $0.count == 73 })
        // The explicit alphanumeric segment is the same symbol.
        XCTAssertEqual(try QREncoder.encode(segments: [try .alphanumeric(card)], level: .low), matrix)
        // At M the same card needs version 15.
        XCTAssertEqual(try QREncoder.encode(card, level: .medium).version.number, 15)
    }

    func testAutomaticModeChoice() throws {
        XCTAssertEqual(QRSegment.automatic("0123").mode, .numeric)
        XCTAssertEqual(QRSegment.automatic("BURROWCARD1QQ").mode, .alphanumeric)
        XCTAssertEqual(QRSegment.automatic("burrowcard1qq").mode, .byte)
        XCTAssertEqual(QRSegment.automatic("").mode, .byte)
        XCTAssertEqual(try QREncoder.encode("", level: .high).version.number, 1)
        XCTAssertEqual(QRSegment.utf8("é").characterCount, 2)
    }

    /// A segment whose character count overflows the count field of small versions: 1024
    /// digits need 10+ bits at versions 1–9 but fit the 12-bit field from version 10.
    func testCharacterCountFieldWidths() throws {
        XCTAssertEqual(QRMode.numeric.characterCountBits(version: 9), 10)
        XCTAssertEqual(QRMode.alphanumeric.characterCountBits(version: 26), 11)
        XCTAssertEqual(QRMode.byte.characterCountBits(version: 27), 16)
        let segment = try QRSegment.numeric(TestTexts.digits(1024))
        XCTAssertNil(segment.bitLength(version: 9))
        XCTAssertNotNil(segment.bitLength(version: 10))
    }

    // MARK: Errors

    func testInvalidCharacters() {
        XCTAssertThrowsError(try QRSegment.alphanumeric("BURROWCARD1qq")) { error in
            XCTAssertEqual(error as? QRError, .invalidCharacter("q", offset: 11, mode: .alphanumeric))
        }
        XCTAssertThrowsError(try QRSegment.alphanumeric("E\u{301}")) { error in  // E + combining acute
            XCTAssertEqual(error as? QRError, .invalidCharacter("E\u{301}", offset: 0, mode: .alphanumeric))
        }
        XCTAssertThrowsError(try QRSegment.alphanumeric("A\r\nB")) { error in
            XCTAssertEqual(error as? QRError, .invalidCharacter("\r\n", offset: 1, mode: .alphanumeric))
        }
        XCTAssertThrowsError(try QRSegment.numeric("12३")) { error in  // Devanagari three
            XCTAssertEqual(error as? QRError, .invalidCharacter("३", offset: 2, mode: .numeric))
        }
        XCTAssertThrowsError(try QRSegment.eci(1_000_000)) { error in
            XCTAssertEqual(error as? QRError, .invalidECIAssignment(1_000_000))
        }
        XCTAssertEqual((QRError.invalidCharacter("q", offset: 11, mode: .alphanumeric)).description,
                       "character U+71 at offset 11 cannot be encoded in alphanumeric mode")
    }

    /// Version 40's capacities (table 7) plus one, and a forced version too small.
    func testDataTooLong() throws {
        XCTAssertEqual(try QREncoder.encode(TestTexts.cardLike(4296), level: .low).version.number, 40)
        XCTAssertThrowsError(try QREncoder.encode(TestTexts.cardLike(4297), level: .low)) { error in
            guard case let .dataTooLong(bits, capacity, version, level) = error as? QRError else { return XCTFail("\(error)") }
            XCTAssertEqual([bits, capacity, version], [4 + 13 + 2148 * 11 + 6, 2956 * 8, 40])
            XCTAssertEqual(level, .low)
        }
        XCTAssertEqual(try QREncoder.encode(segments: [.bytes([UInt8](repeating: 0xFF, count: 2953))], level: .low).version.number, 40)
        XCTAssertThrowsError(try QREncoder.encode(segments: [.bytes([UInt8](repeating: 0xFF, count: 2954))], level: .low))
        XCTAssertEqual(try QREncoder.encode(TestTexts.digits(7089), level: .low).version.number, 40)
        XCTAssertThrowsError(try QREncoder.encode(TestTexts.digits(7090), level: .low))
        XCTAssertEqual(try QREncoder.encode(TestTexts.digits(3057), level: .high).version.number, 40)
        XCTAssertThrowsError(try QREncoder.encode(TestTexts.digits(3058), level: .high))
        XCTAssertEqual(try QREncoder.encode(TestTexts.cardLike(1852), level: .high).version.number, 40)
        XCTAssertThrowsError(try QREncoder.encode(TestTexts.cardLike(1853), level: .high))
        // 70 000 bytes overflow even the 16-bit count field: still a typed error.
        XCTAssertThrowsError(try QREncoder.encode(segments: [.bytes([UInt8](repeating: 0x41, count: 70_000))], level: .low)) { error in
            guard case .dataTooLong = error as? QRError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try QREncoder.encode(TestTexts.cardLike(30), level: .low, version: try QRVersion(1))) { error in
            guard case .dataTooLong(_, 19 * 8, 1, .low) = error as? QRError else { return XCTFail("\(error)") }
        }
    }

    func testInvalidVersionAndMask() {
        XCTAssertThrowsError(try QRVersion(0)) { XCTAssertEqual($0 as? QRError, .invalidVersion(0)) }
        XCTAssertThrowsError(try QRVersion(41)) { XCTAssertEqual($0 as? QRError, .invalidVersion(41)) }
        XCTAssertThrowsError(try QRMask(8)) { XCTAssertEqual($0 as? QRError, .invalidMask(8)) }
        XCTAssertThrowsError(try QRMask(-1)) { XCTAssertEqual($0 as? QRError, .invalidMask(-1)) }
    }

    /// Random input of every kind and size either encodes or throws a `QRError`: no traps.
    func testArbitraryInputNeverTraps() throws {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Int(state % UInt64(bound))
        }
        let pools: [[Character]] = [
            Array("0123456789"), Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"),
            Array("abcXYZ019 é世🐦\u{301}\n\r\t\0"),
        ]
        for _ in 0..<60 {
            let pool = pools[next(pools.count)]
            let length = [0, 1, 10, 100, 1000, 3000, 5000, 8000][next(8)]
            let text = String((0..<length).map { _ in pool[next(pool.count)] })
            let level = QRErrorCorrectionLevel.allCases[next(4)]
            for attempt in 0..<3 {
                do {
                    let matrix: QRMatrix
                    switch attempt {
                    case 0: matrix = try QREncoder.encode(text, level: level)
                    case 1: matrix = try QREncoder.encode(segments: [try .alphanumeric(text)], level: level)
                    default: matrix = try QREncoder.encode(segments: [try .numeric(text)], level: level, version: try QRVersion(1 + next(40)))
                    }
                    XCTAssertEqual(matrix.modules.count, matrix.size * matrix.size)
                } catch {
                    _ = error  // typed: QRError
                }
            }
        }
    }

    // MARK: Function patterns and format information

    /// Finders, timing and the dark module survive every mask, and both copies of the format
    /// information, read back with the standard's bit positions, say the level and mask.
    func testFunctionPatternsAndFormatInformation() throws {
        for mask in QRMask.all {
            let matrix = try QREncoder.encode(TestTexts.cardLike(100), level: .quartile, version: try QRVersion(7), mask: mask)
            let n = matrix.size
            for (cx, cy) in [(3, 3), (n - 4, 3), (3, n - 4)] {
                for dy in -4...4 {
                    for dx in -4...4 where (0..<n).contains(cx + dx) && (0..<n).contains(cy + dy) {
                        let ring = max(abs(dx), abs(dy))
                        XCTAssertEqual(matrix[cx + dx, cy + dy], ring != 2 && ring != 4)
                    }
                }
            }
            for i in 8..<(n - 8) {
                XCTAssertEqual(matrix[i, 6], i % 2 == 0)
                XCTAssertEqual(matrix[6, i], i % 2 == 0)
            }
            XCTAssertTrue(matrix[8, n - 8])
            // Bit 14 first: first copy along row 8 from the left, then up column 8; second copy
            // up column 8 from the bottom, then along row 8 to the right edge.
            var first: [(Int, Int)] = (0...5).map { ($0, 8) } + [(7, 8), (8, 8), (8, 7)]
            first += (0...5).reversed().map { (8, $0) }
            let second: [(Int, Int)] = (0..<7).map { (8, n - 1 - $0) } + (0..<8).map { (n - 8 + $0, 8) }
            let expected = BCH.formatInformation(level: .quartile, mask: mask)
            for copy in [first, second] {
                let value = copy.reduce(0) { $0 << 1 | (matrix[$1.0, $1.1] ? 1 : 0) }
                XCTAssertEqual(value, expected, "\(mask)")
            }
            // Version information: bottom-left block, bit 17 at (5, n − 9).
            XCTAssertEqual(matrix[5, n - 9], (0x07C94 >> 17) & 1 == 1)
            XCTAssertEqual(matrix[0, n - 11], 0x07C94 & 1 == 1)
            XCTAssertEqual(matrix[n - 11, 0], 0x07C94 & 1 == 1)
        }
    }

    // MARK: Penalty

    /// An all-light 21 × 21 grid: rule 1, 42 runs of 21 (3 + 16 each) = 798; rule 2, 400
    /// blocks × 3 = 1200; rule 3, none; rule 4, 0 % dark is 10 steps from 50 % = 100.
    func testPenaltyOfBlankGrid() {
        XCTAssertEqual(Penalty.score(size: 21) { _, _ in false }, 2098)
        // A checkerboard: no runs, no blocks, no finder-like runs, exactly balanced.
        XCTAssertEqual(Penalty.score(size: 21) { x, y in (x + y) % 2 == 0 }, 0)
    }

    func testPenaltyRulesOneAndThree() {
        func line(_ pattern: String) -> [Bool] { pattern.map { $0 == "#" } }
        XCTAssertEqual(Penalty.lineScore(line("#.#.#.#")), 0)
        XCTAssertEqual(Penalty.lineScore(line("#####.#")), 3)
        XCTAssertEqual(Penalty.lineScore(line("#######.")), 5)
        // Finder-like run at the edge: the outside counts as light.
        XCTAssertEqual(Penalty.lineScore(line("#.###.#.#")), 40)
        XCTAssertEqual(Penalty.lineScore(line("#.#.#.###.#")), 40)
        // Light on both sides counts once; dark close on both sides not at all.
        XCTAssertEqual(Penalty.lineScore(line("#.#....#.###.#....#.#")), 40)
        XCTAssertEqual(Penalty.lineScore(line("#.#.#.###.#.#.#")), 0)
        XCTAssertEqual(Penalty.lineScore(line("#.#..#.###.#...#.#")), 0)
    }

    // MARK: Renderers

    /// Half blocks decode back to the symbol with its 2-module quiet zone, in both polarities.
    func testTerminalRendererLayout() throws {
        let matrix = try QREncoder.encode("HELLO WORLD", level: .quartile)
        for polarity in [TerminalRenderer.Polarity.darkModulesPrinted, .lightModulesPrinted] {
            let lines = TerminalRenderer.lines(matrix, polarity: polarity)
            XCTAssertEqual(lines.count, (21 + 4 + 1) / 2)
            XCTAssertTrue(lines.allSatisfy { $0.count == 25 && $0.allSatisfy { "▀▄█ ".contains($0) } })
            let decoded = TestTexts.modules(fromTerminalLines: lines, polarity: polarity)
            XCTAssertEqual(decoded.count, 26)  // the odd last line's lower half is nothing
            for y in 0..<25 {
                for x in 0..<25 {
                    XCTAssertEqual(decoded[y][x], matrix[x - 2, y - 2], "(\(x), \(y)) \(polarity)")
                }
            }
            XCTAssertEqual(decoded[25], [Bool](repeating: polarity == .lightModulesPrinted, count: 25),
                           "an unprinted half reads as the background")
        }
        let dark = TerminalRenderer.lines(matrix)
        XCTAssertEqual(dark[0], String(repeating: " ", count: 25))  // quiet zone rows 0–1
        // Symbol rows 0 and 1: the finders' top edge over their "#.....#" row.
        XCTAssertEqual(dark[1].prefix(9), "  █▀▀▀▀▀█")
        XCTAssertEqual(dark[1].suffix(9), "█▀▀▀▀▀█  ")
        XCTAssertEqual(TerminalRenderer.lines(matrix, polarity: .lightModulesPrinted)[12], String(repeating: "▀", count: 25))
        XCTAssertEqual(TerminalRenderer.string(matrix), dark.map { $0 + "\n" }.joined())
        // Colours wrap each line and change nothing else.
        XCTAssertEqual(TerminalRenderer.lines(matrix, ansiColors: true), dark.map { "\u{1B}[30;107m" + $0 + "\u{1B}[0m" })
        XCTAssertEqual(TerminalRenderer.lines(matrix, polarity: .lightModulesPrinted, ansiColors: true),
                       TerminalRenderer.lines(matrix, polarity: .lightModulesPrinted).map { "\u{1B}[97;40m" + $0 + "\u{1B}[0m" })
        XCTAssertEqual(ASCIIRenderer.lines(matrix, quietZone: 1).count, 23)
    }
}

extension StructureTests {
    /// The automatic mask is the one of lowest penalty, scored as the encoding procedure does:
    /// on the masked symbol before format and version information are written (those areas
    /// light, the dark module dark). Ties go to the lowest mask number.
    func testAutomaticMaskHasLowestPenalty() throws {
        for (text, level) in [("HELLO WORLD", QRErrorCorrectionLevel.quartile), (TestTexts.cardLike(599), .low),
                              (TestTexts.utf8Sample(90), .high), (TestTexts.digits(300), .medium)] {
            let chosen = try QREncoder.encode(text, level: level)
            let n = chosen.size
            var reserved = Set<[Int]>()
            for i in 0...8 where i != 6 { reserved.insert([8, i]); reserved.insert([i, 8]) }
            for i in 0..<8 { reserved.insert([n - 1 - i, 8]) }
            for i in 0..<7 { reserved.insert([8, n - 1 - i]) }
            if chosen.version.number >= 7 {
                for i in 0..<18 { reserved.insert([i / 3, n - 11 + i % 3]); reserved.insert([n - 11 + i % 3, i / 3]) }
            }
            let scores = try QRMask.all.map { mask in
                let matrix = try QREncoder.encode(text, level: level, mask: mask)
                return Penalty.score(size: n) { x, y in reserved.contains([x, y]) ? false : matrix[x, y] }
            }
            XCTAssertEqual(chosen.mask.pattern, scores.firstIndex(of: scores.min()!), "\(text.prefix(20)): \(scores)")
            XCTAssertEqual(chosen, try QREncoder.encode(text, level: level, mask: chosen.mask))
        }
    }
}
