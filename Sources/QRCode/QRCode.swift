/// Why an input cannot be encoded. Every input problem is one of these: the encoder never traps
/// on what it is given.
public enum QRError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The segments need `bits` data bits but the largest allowed symbol (version 40, or the
    /// version asked for) holds `capacity` at the requested level.
    case dataTooLong(bits: Int, capacity: Int, version: Int, level: QRErrorCorrectionLevel)
    /// `character`, at `offset` characters into the text, has no encoding in `mode`.
    case invalidCharacter(Character, offset: Int, mode: QRMode)
    /// A version outside 1–40.
    case invalidVersion(Int)
    /// A mask pattern outside 0–7.
    case invalidMask(Int)
    /// An ECI assignment number outside 0–999999.
    case invalidECIAssignment(Int)

    public var description: String {
        switch self {
        case let .dataTooLong(bits, capacity, version, level):
            "data too long for a QR code: \(bits) bits, version \(version) at level \(level) holds \(capacity)"
        case let .invalidCharacter(character, offset, mode):
            "character \(character.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")) at offset \(offset) cannot be encoded in \(mode) mode"
        case let .invalidVersion(version): "QR version \(version) is not in 1–40"
        case let .invalidMask(mask): "QR mask pattern \(mask) is not in 0–7"
        case let .invalidECIAssignment(value): "ECI assignment \(value) is not in 0–999999"
        }
    }
}

/// A finished symbol: a square of modules, without quiet zone.
public struct QRMatrix: Sendable, Equatable {
    public let version: QRVersion
    public let errorCorrectionLevel: QRErrorCorrectionLevel
    public let mask: QRMask
    /// Modules per side: `version.size`.
    public let size: Int
    /// Row-major, `size × size`, true = dark.
    public let modules: [Bool]

    /// The module at column x, row y; anything outside the symbol is light, as the quiet zone
    /// around it is, so renderers can draw margins by reading past the edges.
    public subscript(x: Int, y: Int) -> Bool {
        guard x >= 0, y >= 0, x < size, y < size else { return false }
        return modules[y * size + x]
    }

    /// The rows, top to bottom.
    public var rows: [[Bool]] {
        (0..<size).map { y in Array(modules[y * size..<(y + 1) * size]) }
    }
}

/// The encoder (ISO/IEC 18004:2015, model 2 symbols). Not named `QRCode`: a type named like
/// its module hides the module, and `QRCode.QRMatrix` would then not compile in client code.
///
/// ```swift
/// let matrix = try QREncoder.encode(card.uppercased(), level: .low)   // alphanumeric, version 13 for 599 chars
/// for line in TerminalRenderer.lines(matrix) { print(line) }
/// ```
public enum QREncoder {
    /// Encodes `text` in its densest single mode (numeric, alphanumeric, else UTF-8 bytes) in the
    /// smallest version that holds it at `level`, or in `version` when given; with the mask of
    /// lowest penalty, or `mask` when given.
    public static func encode(
        _ text: String, level: QRErrorCorrectionLevel, version: QRVersion? = nil, mask: QRMask? = nil
    ) throws(QRError) -> QRMatrix {
        try encode(segments: [QRSegment.automatic(text)], level: level, version: version, mask: mask)
    }

    /// Encodes the segments, in order, as one symbol.
    public static func encode(
        segments: [QRSegment], level: QRErrorCorrectionLevel, version: QRVersion? = nil, mask: QRMask? = nil
    ) throws(QRError) -> QRMatrix {
        let version = if let version {
            try check(segments, fit: version, level: level)
        } else {
            try smallestVersion(for: segments, level: level)
        }
        let data = dataCodewords(segments, version: version, level: level)
        let codewords = finalCodewords(data, version: version, level: level)

        var unmasked = MatrixBuilder(version: version)
        unmasked.placeCodewords(codewords)

        func masked(_ mask: QRMask) -> MatrixBuilder {
            var builder = unmasked
            builder.applyMask(mask)
            return builder
        }
        let chosenMask: QRMask
        if let mask {
            chosenMask = mask
        } else {
            // The encoding procedure masks and scores (7.1 step 7) before it writes the format
            // and version information (step 8), so those areas are scored light. Encoders
            // differ here; any mask decodes the same, only the choice among equals changes.
            // Ties go to the lower mask number.
            var best = (mask: QRMask(unchecked: 0), score: Int.max)
            for candidate in QRMask.all {
                let score = Penalty.score(grid: masked(candidate).modules, size: version.size)
                if score < best.score { best = (candidate, score) }
            }
            chosenMask = best.mask
        }
        var symbol = masked(chosenMask)
        symbol.drawFormatInformation(BCH.formatInformation(level: level, mask: chosenMask))
        symbol.drawVersionInformation()
        return QRMatrix(
            version: version, errorCorrectionLevel: level, mask: chosenMask, size: version.size,
            modules: symbol.modules
        )
    }

    /// Data bits the segments need in `version`, headers included; nil if a character count
    /// overflows its field there.
    static func dataBits(_ segments: [QRSegment], version: QRVersion) -> Int? {
        var total = 0
        for segment in segments {
            guard let bits = segment.bitLength(version: version.number) else { return nil }
            total += bits
        }
        return total
    }

    /// The smallest version whose capacity at `level` holds the segments (the count fields widen
    /// at versions 10 and 27, so the bits needed are recomputed per version).
    static func smallestVersion(for segments: [QRSegment], level: QRErrorCorrectionLevel) throws(QRError) -> QRVersion {
        for version in QRVersion.all {
            if let bits = dataBits(segments, version: version), bits <= version.dataCapacityBits(level) {
                return version
            }
        }
        return try check(segments, fit: .largest, level: level)
    }

    /// `version` if the segments fit it at `level`, else `dataTooLong`.
    static func check(_ segments: [QRSegment], fit version: QRVersion, level: QRErrorCorrectionLevel) throws(QRError) -> QRVersion {
        let capacity = version.dataCapacityBits(level)
        if let bits = dataBits(segments, version: version), bits <= capacity { return version }
        // Report the size as if the count fields were wide enough.
        let bits = segments.reduce(0) { $0 + 4 + $1.mode.characterCountBits(version: version.number) + $1.data.count }
        throw QRError.dataTooLong(bits: bits, capacity: capacity, version: version.number, level: level)
    }

    /// The data codewords (7.4): each segment's mode indicator, count and data, then a
    /// terminator of up to four 0 bits, 0 bits to a byte boundary, and the pad codewords
    /// 11101100 and 00010001 alternately up to capacity. The segments must fit.
    static func dataCodewords(_ segments: [QRSegment], version: QRVersion, level: QRErrorCorrectionLevel) -> [UInt8] {
        let capacity = version.dataCapacityBits(level)
        var bits = BitBuffer()
        for segment in segments {
            bits.append(segment.mode.indicator, bits: 4)
            let countBits = segment.mode.characterCountBits(version: version.number)
            if countBits > 0 { bits.append(segment.characterCount, bits: countBits) }
            bits.append(contentsOf: segment.data)
        }
        precondition(bits.count <= capacity, "segments were checked to fit")
        bits.append(0, bits: min(4, capacity - bits.count))
        var codewords = bits.bytes  // the partial last byte is already 0-padded
        var pad: UInt8 = 0xEC
        while codewords.count < capacity / 8 {
            codewords.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return codewords
    }

    /// Splits the data codewords into blocks (shorter blocks first), appends each block's
    /// Reed–Solomon codewords, and interleaves (7.6): data codeword 1 of every block, then
    /// codeword 2 of every block…, skipping short blocks past their end, then the EC
    /// codewords the same way. Interleaving spreads a local smudge over many blocks.
    static func finalCodewords(_ data: [UInt8], version: QRVersion, level: QRErrorCorrectionLevel) -> [UInt8] {
        let layout = version.blockLayout(level)
        precondition(data.count == layout.dataCodewords)
        let encoder = ReedSolomon(ecCodewords: layout.ecCodewordsPerBlock)
        var dataBlocks: [[UInt8]] = []
        var ecBlocks: [[UInt8]] = []
        var start = 0
        for index in 0..<layout.blockCount {
            let length = layout.shortBlockDataCodewords + (index < layout.shortBlockCount ? 0 : 1)
            let block = Array(data[start..<start + length])
            dataBlocks.append(block)
            ecBlocks.append(encoder.ecCodewords(for: block))
            start += length
        }
        var result: [UInt8] = []
        result.reserveCapacity(layout.totalCodewords)
        for i in 0...layout.shortBlockDataCodewords {
            for block in dataBlocks where i < block.count { result.append(block[i]) }
        }
        for i in 0..<layout.ecCodewordsPerBlock {
            for block in ecBlocks { result.append(block[i]) }
        }
        return result
    }
}
