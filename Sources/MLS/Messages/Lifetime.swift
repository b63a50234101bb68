/// `Lifetime` (RFC 9420 §7.2): the validity window of a KeyPackage's leaf, in Unix seconds.
public struct Lifetime: Hashable, Sendable, TLSCodable {
    public var notBefore: UInt64
    public var notAfter: UInt64

    public init(notBefore: UInt64, notAfter: UInt64) {
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// OpenMLS's bound on the window a KeyPackage may claim: 84 days plus one hour of skew
    /// allowance (7,261,200 s); longer windows are rejected when validating.
    public static let maximumRange: UInt64 = 84 * 86_400 + 3_600

    /// True when `time` (Unix seconds, passed in by the caller) lies strictly inside the window,
    /// as OpenMLS 0.8.1 checks it.
    public func contains(_ time: UInt64) -> Bool { notBefore < time && time < notAfter }

    /// True when the window is no longer than `maximumRange` (an inverted window counts as
    /// empty, as in OpenMLS; `contains` then rejects every time).
    public var hasAcceptableRange: Bool {
        (notAfter >= notBefore ? notAfter - notBefore : 0) <= Lifetime.maximumRange
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeUInt64(notBefore)
        writer.writeUInt64(notAfter)
    }

    public init(from reader: inout TLSReader) throws {
        notBefore = try reader.readUInt64()
        notAfter = try reader.readUInt64()
    }
}
