import MLS
import Nostr

/// Marmot's `nostr_group_id` (MIP-01): the 32 random bytes in 0xF2EE that name a group on the
/// relays (a kind-445 event's `h` tag). Unlike the MLS group id it may change (an admin can
/// rotate it), so the two never stand in for each other.
public struct NostrGroupID: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// From an `h` tag or the CLI: 64 hex digits.
    public init(hex: String) throws(MarmotError) {
        guard hex.utf8.count == 64, let bytes = try? Hex.decode(hex, length: 32) else {
            throw .invalidTag("h", reason: "nostr_group_id must be 64 hex digits")
        }
        self.bytes = bytes
    }

    public var hex: String { Hex.encode(bytes) }

    public var description: String { "NostrGroupID(\(hex))" }
}
