/// A symbol under construction: the module grid plus which modules belong to function
/// patterns, so that data placement and masking leave those alone (7.7, 7.8).
///
/// Coordinates are (x, y) = (column, row) from the top-left corner, as in the standard's figures.
struct MatrixBuilder {
    let version: QRVersion
    let size: Int
    /// Row-major, true = dark.
    private(set) var modules: [Bool]
    /// Row-major, true where a function pattern or the format/version areas are.
    private(set) var isFunction: [Bool]

    /// A grid with every function pattern drawn and the format and version areas reserved,
    /// light until `drawFormatInformation` and `drawVersionInformation` fill them in after
    /// masking (the order of the encoding procedure, 7.1 steps 7 and 8).
    init(version: QRVersion) {
        self.version = version
        size = version.size
        modules = [Bool](repeating: false, count: size * size)
        isFunction = [Bool](repeating: false, count: size * size)
        drawTimingPatterns()
        drawFinderPattern(centerX: 3, centerY: 3)
        drawFinderPattern(centerX: size - 4, centerY: 3)
        drawFinderPattern(centerX: 3, centerY: size - 4)
        drawAlignmentPatterns()
        reserveFormatAreas()
        if version.versionInformation != nil { drawVersionInformation(0) }
    }

    subscript(x: Int, y: Int) -> Bool { modules[y * size + x] }

    func isFunctionModule(x: Int, y: Int) -> Bool { isFunction[y * size + x] }

    private mutating func set(_ x: Int, _ y: Int, dark: Bool) {
        modules[y * size + x] = dark
        isFunction[y * size + x] = true
    }

    /// Row 6 and column 6 alternate dark and light, dark on even coordinates, so a reader can
    /// count modules. Drawn across the whole symbol first; finders and alignment patterns
    /// overwrite the parts they cover, with the same colours where they overlap.
    private mutating func drawTimingPatterns() {
        for i in 0..<size {
            set(6, i, dark: i % 2 == 0)
            set(i, 6, dark: i % 2 == 0)
        }
    }

    /// The 7 × 7 finder (dark ring, light ring, 3 × 3 dark core, giving the 1:1:3:1:1 ratio a
    /// reader looks for) plus its one-module light separator, clipped at the symbol edge.
    private mutating func drawFinderPattern(centerX: Int, centerY: Int) {
        for dy in -4...4 {
            for dx in -4...4 {
                let x = centerX + dx, y = centerY + dy
                guard (0..<size).contains(x), (0..<size).contains(y) else { continue }
                let ring = max(abs(dx), abs(dy))  // 0…4 from the centre outwards
                set(x, y, dark: ring != 2 && ring != 4)
            }
        }
    }

    /// 5 × 5 alignment patterns (dark ring, light ring, dark centre) at every pair of the
    /// version's centre coordinates except the three corners taken by finders.
    private mutating func drawAlignmentPatterns() {
        let centers = version.alignmentPatternCenters
        let last = centers.count - 1
        for (i, cy) in centers.enumerated() {
            for (j, cx) in centers.enumerated() {
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                for dy in -2...2 {
                    for dx in -2...2 {
                        set(cx + dx, cy + dy, dark: max(abs(dx), abs(dy)) != 1)
                    }
                }
            }
        }
    }

    /// The 15 + 15 format modules and the dark module beside the bottom-left finder, which is
    /// always dark (7.9.1).
    private mutating func reserveFormatAreas() {
        for i in 0..<9 {
            if i != 6 {
                set(8, i, dark: false)
                set(i, 8, dark: false)
            }
        }
        for i in 0..<8 {
            set(size - 1 - i, 8, dark: false)
            set(8, size - 1 - i, dark: false)
        }
        set(8, size - 8, dark: true)
    }

    /// From version 7, two 6 × 3 copies of the version information: above the bottom-left
    /// finder and, transposed, left of the top-right one (7.10). Bit i (0 = least significant)
    /// goes to column i / 3, row size − 11 + i % 3 of the bottom-left block.
    mutating func drawVersionInformation() {
        guard let bits = version.versionInformation else { return }
        drawVersionInformation(bits)
    }

    private mutating func drawVersionInformation(_ bits: Int) {
        for i in 0..<18 {
            let dark = (bits >> i) & 1 == 1
            let a = size - 11 + i % 3, b = i / 3
            set(b, a, dark: dark)
            set(a, b, dark: dark)
        }
    }

    /// Writes the 15 format bits (7.9.1): bit 14 is the most significant. The first copy runs
    /// up column 8 from the top (bits 0–5, skipping the timing row, then 6–7) and left along
    /// row 8 (bit 8 beside column 8, bits 9–14 out to column 0); the second copy runs along row
    /// 8 from the right edge (bits 0–7) and down column 8 to the bottom edge (bits 8–14).
    mutating func drawFormatInformation(_ bits: Int) {
        func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
        for i in 0...5 { set(8, i, dark: bit(i)) }
        set(8, 7, dark: bit(6))
        set(8, 8, dark: bit(7))
        set(7, 8, dark: bit(8))
        for i in 9..<15 { set(14 - i, 8, dark: bit(i)) }
        for i in 0..<8 { set(size - 1 - i, 8, dark: bit(i)) }
        for i in 8..<15 { set(8, size - 15 + i, dark: bit(i)) }
        set(8, size - 8, dark: true)
    }

    /// Places the final codeword sequence (7.7.3): two-module-wide columns from the right edge,
    /// alternately upwards and downwards, right module before left, skipping function modules;
    /// column 6 (the vertical timing pattern) is jumped over so the columns stay paired. Each
    /// codeword goes most significant bit first; the remainder bits stay light (0).
    mutating func placeCodewords(_ codewords: [UInt8]) {
        let totalBits = codewords.count * 8
        var bitIndex = 0
        var right = size - 1
        var upward = true
        while right >= 1 {
            if right == 6 { right = 5 }
            for step in 0..<size {
                let y = upward ? size - 1 - step : step
                for x in [right, right - 1] where !isFunction[y * size + x] {
                    if bitIndex < totalBits {
                        modules[y * size + x] = codewords[bitIndex / 8] & (0x80 >> UInt8(bitIndex % 8)) != 0
                        bitIndex += 1
                    }
                }
            }
            upward.toggle()
            right -= 2
        }
        assert(bitIndex == totalBits, "codewords do not fill the symbol")
    }

    /// Modules available to codewords: must equal `version.rawDataModules`.
    var dataModuleCount: Int { isFunction.lazy.filter { !$0 }.count }

    /// XORs the mask pattern into every non-function module (7.8.2). Masking twice undoes it.
    mutating func applyMask(_ mask: QRMask) {
        for y in 0..<size {
            for x in 0..<size where !isFunction[y * size + x] && mask.inverts(row: y, column: x) {
                modules[y * size + x].toggle()
            }
        }
    }
}
