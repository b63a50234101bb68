import MLS

/// mlswg `deserialization.json`: RFC 9420 variable-length vector headers. Each case's
/// `vlbytes_header` must decode (minimal encoding enforced) to exactly `length`, consuming the
/// whole header, and encoding `length` must give the same header back.
enum DeserializationConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        var report = ConformanceReport()
        for (i, object) in cases.enumerated() {
            report.record("deserialization[\(i)]", Result { try check(VectorCase(object)) })
        }
        return report
    }

    static func check(_ v: VectorCase) throws {
        let header = try v.bytes("vlbytes_header")
        let length = try v.int("length")
        var reader = TLSReader(header)
        let decoded: Int
        do {
            decoded = try reader.readVarint()
        } catch {
            throw ConformanceCaseError.mismatch("header \(header) does not decode: \(error)")
        }
        guard reader.isAtEnd else { throw ConformanceCaseError.mismatch("\(reader.remaining) bytes left after the header") }
        guard decoded == length else { throw ConformanceCaseError.mismatch("decoded \(decoded), expected \(length)") }
        guard length >= 0, length < 1 << 30 else { throw ConformanceCaseError.malformed("length \(length) is not a varint value") }
        var writer = TLSWriter()
        writer.writeVarint(length)
        guard writer.bytes == header else { throw ConformanceCaseError.mismatch("encoding \(length) gives \(writer.bytes), expected \(header)") }
    }
}
