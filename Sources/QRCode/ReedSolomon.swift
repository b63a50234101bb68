/// Arithmetic in GF(2^8) as QR codes define it: bytes are polynomials over GF(2) reduced
/// modulo the primitive polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11D), with α = 2 (7.5.2).
///
/// Multiplication goes through log/antilog tables: α is primitive, so every non-zero byte is
/// α^i for exactly one i in 0..<255.
enum GF256 {
    static let primitivePolynomial = 0x11D

    /// exp[i] = α^i for i in 0..<510 (doubled so that log a + log b never needs a modulo).
    static let exp: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 510)
        var value = 1
        for i in 0..<255 {
            table[i] = UInt8(value)
            table[i + 255] = UInt8(value)
            value <<= 1
            if value & 0x100 != 0 { value ^= primitivePolynomial }
        }
        return table
    }()

    /// log[a] = i with α^i = a, for a ≠ 0 (log[0] is unused).
    static let log: [Int] = {
        var table = [Int](repeating: 0, count: 256)
        for i in 0..<255 { table[Int(exp[i])] = i }
        return table
    }()

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        guard a != 0, b != 0 else { return 0 }
        return exp[log[Int(a)] + log[Int(b)]]
    }
}

/// A Reed–Solomon encoder for one error correction block (7.5.2): the EC codewords are the
/// remainder of data(x) · x^n divided by the generator g(x) = (x − α^0)(x − α^1)…(x − α^(n−1)).
struct ReedSolomon: Sendable {
    /// g(x)'s coefficients, highest degree first, without the leading 1: n of them.
    let generator: [UInt8]

    /// An encoder producing `ecCodewords` codewords per block (7 to 30 in QR symbols).
    init(ecCodewords: Int) {
        precondition(ecCodewords >= 1 && ecCodewords <= 255)
        // Multiply out the factors one at a time; in GF(2^8), −α^i = α^i.
        var poly: [UInt8] = [1]
        for i in 0..<ecCodewords {
            let root = GF256.exp[i]
            var next = [UInt8](repeating: 0, count: poly.count + 1)
            for (j, coefficient) in poly.enumerated() {
                next[j] ^= coefficient
                next[j + 1] ^= GF256.multiply(coefficient, root)
            }
            poly = next
        }
        generator = Array(poly.dropFirst())
    }

    /// The EC codewords for `data`, by polynomial long division (a shift register of n bytes).
    func ecCodewords(for data: [UInt8]) -> [UInt8] {
        var remainder = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ remainder[0]
            remainder.removeFirst()
            remainder.append(0)
            for (j, coefficient) in generator.enumerated() {
                remainder[j] ^= GF256.multiply(coefficient, factor)
            }
        }
        return remainder
    }
}
