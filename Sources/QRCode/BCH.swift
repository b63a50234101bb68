/// The BCH codes protecting the format and version information (annexes C and D).
///
/// Both are systematic: the data bits are followed by the remainder of their polynomial,
/// shifted up by the generator's degree, divided by the generator over GF(2).
enum BCH {
    /// G(x) = x^10 + x^8 + x^5 + x^4 + x^2 + x + 1, the (15, 5) format code.
    static let formatGenerator = 0b101_0011_0111
    /// G(x) = x^12 + x^11 + x^10 + x^9 + x^8 + x^5 + x^2 + 1, the (18, 6) version code.
    static let versionGenerator = 0b1_1111_0010_0101
    /// XORed into the format information so that it is never all zeros (level M, mask 0), which
    /// a reader could not tell from a blank area.
    static let formatMask = 0b101_0100_0001_0010

    /// The remainder of `data` × x^degree divided by `generator` (of that degree).
    static func remainder(_ data: Int, generator: Int, degree: Int) -> Int {
        var value = data << degree
        // Cancel the highest set bit until the value is below x^degree.
        while value >> degree != 0 {
            let top = Int.bitWidth - value.leadingZeroBitCount - 1
            value ^= generator << (top - degree)
        }
        return value
    }

    /// The 15 format bits for a level and mask: 2 level bits, 3 mask bits, 10 BCH bits, masked.
    static func formatInformation(level: QRErrorCorrectionLevel, mask: QRMask) -> Int {
        let data = level.formatBits << 3 | mask.pattern
        return (data << 10 | remainder(data, generator: formatGenerator, degree: 10)) ^ formatMask
    }

    /// The 18 version bits: 6 version bits and 12 BCH bits, not masked.
    static func versionInformation(_ version: Int) -> Int {
        version << 12 | remainder(version, generator: versionGenerator, degree: 12)
    }
}
