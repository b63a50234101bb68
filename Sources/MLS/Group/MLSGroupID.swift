/// An MLS group's `group_id` (RFC 9420 §8.1): opaque bytes the creator chose, carried in every
/// GroupContext. A type of its own so it is never mistaken for Marmot's `nostr_group_id`, the
/// other 32 bytes every Marmot group has.
public struct MLSGroupID: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Lowercase hex, as the CLI shows and accepts it.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }

    public var description: String { "MLSGroupID(\(hex))" }
}
