/// An append-only sequence of bits, most significant bit first within each byte. Public to
/// read (a segment's data); only this module appends, so its field-width checks are invariants.
///
/// QR data is defined as one bit stream (a 4-bit mode indicator, an 8–16-bit character count,
/// 10-bit digit triples, 11-bit character pairs…) that is cut into 8-bit codewords only at the
/// end, so segments are built bit by bit and the codewords are read straight off `bytes`.
public struct BitBuffer: Equatable, Sendable {
    /// The bits packed eight to a byte, first bit in the high bit; a partial last byte is
    /// zero-filled, which is exactly the "pad to a byte boundary with 0 bits" rule of 7.4.9.
    public private(set) var bytes: [UInt8] = []
    /// The number of bits appended so far.
    public private(set) var count: Int = 0

    init() {}

    /// Appends the low `length` bits of `value`, most significant first.
    ///
    /// Callers pass values that fit (a count already checked against its field, an 11-bit pair
    /// below 2025…): a value that does not is a bug in this module, not bad input.
    mutating func append(_ value: Int, bits length: Int) {
        precondition(length >= 0 && length <= 31 && value >= 0 && value >> length == 0, "value does not fit its field")
        var shift = length - 1
        while shift >= 0 {
            appendBit((value >> shift) & 1 == 1)
            shift -= 1
        }
    }

    mutating func appendBit(_ bit: Bool) {
        if count % 8 == 0 { bytes.append(0) }
        if bit { bytes[count / 8] |= 0x80 >> UInt8(count % 8) }
        count += 1
    }

    mutating func append(contentsOf other: BitBuffer) {
        for index in 0..<other.count { appendBit(other[index]) }
    }

    public subscript(index: Int) -> Bool {
        bytes[index / 8] & (0x80 >> UInt8(index % 8)) != 0
    }
}
