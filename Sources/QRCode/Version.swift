/// The four error correction levels, recovering about 7 %, 15 %, 25 % and 30 % of the codewords.
///
/// Burrow's cards use `.low`: a terminal is a clean, flat medium, and every level up costs
/// versions (a 599-character card needs version 13 at L, 15 at M).
public enum QRErrorCorrectionLevel: Int, Sendable, CaseIterable, Comparable {
    case low, medium, quartile, high

    /// The two level bits of the format information (table 12): not in level order.
    var formatBits: Int {
        switch self {
        case .low: 0b01
        case .medium: 0b00
        case .quartile: 0b11
        case .high: 0b10
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// How a version's codewords are split into Reed–Solomon blocks at one level (table 9).
///
/// The standard lists one or two groups of blocks per version and level; the second group's
/// blocks always hold one more data codeword and the same number of error correction codewords,
/// so the block count and the EC codewords per block determine the rest.
public struct QRBlockLayout: Sendable, Equatable {
    public let blockCount: Int
    public let ecCodewordsPerBlock: Int
    public let totalCodewords: Int

    /// Data codewords over all blocks: the symbol's capacity at this level.
    public var dataCodewords: Int { totalCodewords - blockCount * ecCodewordsPerBlock }
    /// Blocks of the first group, one data codeword shorter than the others.
    public var shortBlockCount: Int { blockCount - totalCodewords % blockCount }
    /// Data codewords in a block of the first group.
    public var shortBlockDataCodewords: Int { totalCodewords / blockCount - ecCodewordsPerBlock }
}

/// A symbol version, 1 (21 × 21 modules) to 40 (177 × 177).
public struct QRVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let number: Int

    public static let range = 1...40
    public static let smallest = QRVersion(unchecked: 1)
    public static let largest = QRVersion(unchecked: 40)

    public init(_ number: Int) throws(QRError) {
        guard Self.range.contains(number) else { throw QRError.invalidVersion(number) }
        self.number = number
    }

    init(unchecked number: Int) { self.number = number }

    public static var all: [QRVersion] { range.map(QRVersion.init(unchecked:)) }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.number < rhs.number }
    public var description: String { "version \(number)" }

    /// Modules per side: 4 more for every version.
    public var size: Int { 17 + 4 * number }

    /// Row/column centres of the alignment patterns (annex E, table E.1). Patterns sit at every
    /// pair of these except the three pairs under the finder patterns.
    public var alignmentPatternCenters: [Int] { Self.alignmentCenters[number - 1] }

    /// Modules left for codewords once every function pattern and the format and version
    /// areas are taken out, counted the way they are drawn:
    /// three finders with separators (8 × 8 each), two format copies (15 each) and the dark
    /// module, the two timing lines between the separators, 25 per alignment pattern less the
    /// 5 it shares with a timing line when it sits on one, and two 18-bit version blocks from 7 on.
    public var rawDataModules: Int {
        var modules = size * size - 3 * 64 - (2 * 15 + 1) - 2 * (size - 16)
        let perAxis = alignmentPatternCenters.count
        if perAxis > 0 {
            let patterns = perAxis * perAxis - 3
            let onTimingLines = 2 * (perAxis - 2)
            modules -= 25 * patterns - 5 * onTimingLines
        }
        if number >= 7 { modules -= 2 * 18 }
        return modules
    }

    /// All codewords, data and error correction (table 1).
    public var totalCodewords: Int { rawDataModules / 8 }

    /// Modules left over after the last whole codeword, filled with 0 bits: 0, 3, 4 or 7.
    public var remainderBits: Int { rawDataModules % 8 }

    public func blockLayout(_ level: QRErrorCorrectionLevel) -> QRBlockLayout {
        QRBlockLayout(
            blockCount: Self.blockCounts[level.rawValue][number - 1],
            ecCodewordsPerBlock: Self.ecCodewordsPerBlock[level.rawValue][number - 1],
            totalCodewords: totalCodewords
        )
    }

    /// Data capacity in bits at `level`.
    public func dataCapacityBits(_ level: QRErrorCorrectionLevel) -> Int {
        blockLayout(level).dataCodewords * 8
    }

    /// The 18-bit version information (annex D) for versions 7 and up, nil below: smaller
    /// symbols are identified by their size alone.
    public var versionInformation: Int? {
        number >= 7 ? BCH.versionInformation(number) : nil
    }

    // Table E.1: alignment pattern centre coordinates.
    private static let alignmentCenters: [[Int]] = [
        [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34],
        [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50], [6, 30, 54], [6, 32, 58], [6, 34, 62],
        [6, 26, 46, 66], [6, 26, 48, 70], [6, 26, 50, 74], [6, 30, 54, 78], [6, 30, 56, 82],
        [6, 30, 58, 86], [6, 34, 62, 90],
        [6, 28, 50, 72, 94], [6, 26, 50, 74, 98], [6, 30, 54, 78, 102], [6, 28, 54, 80, 106],
        [6, 32, 58, 84, 110], [6, 30, 58, 86, 114], [6, 34, 62, 90, 118],
        [6, 26, 50, 74, 98, 122], [6, 30, 54, 78, 102, 126], [6, 26, 52, 78, 104, 130],
        [6, 30, 56, 82, 108, 134], [6, 34, 60, 86, 112, 138], [6, 30, 58, 86, 114, 142],
        [6, 34, 62, 90, 118, 146],
        [6, 30, 54, 78, 102, 126, 150], [6, 24, 50, 76, 102, 128, 154], [6, 28, 54, 80, 106, 132, 158],
        [6, 32, 58, 84, 110, 136, 162], [6, 26, 54, 82, 110, 138, 166], [6, 30, 58, 86, 114, 142, 170],
    ]

    // Table 9, per level (L, M, Q, H) and version 1–40: error correction codewords per block…
    private static let ecCodewordsPerBlock: [[Int]] = [
        [7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
         28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
        [10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
         26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28],
        [13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
         28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
        [17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
         30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
    ]

    // …and blocks (both groups together).
    private static let blockCounts: [[Int]] = [
        [1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
         8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25],
        [1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
         17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49],
        [1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
         23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68],
        [1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
         25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81],
    ]
}
