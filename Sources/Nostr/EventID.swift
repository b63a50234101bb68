import Crypto

/// A NIP-01 event id: sha256 of the canonical serialization (32 bytes).
public struct EventID: Hashable, Sendable, Comparable {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else { throw NostrError.invalidHex(field: "id", expectedBytes: 32) }
        self.bytes = bytes
    }

    /// Parses 64 hex digits (either case; `UnverifiedEvent` separately insists on lowercase).
    public init(hex: String) throws {
        guard let bytes = try? Hex.decode(hex, length: 32) else {
            throw NostrError.invalidHex(field: "id", expectedBytes: 32)
        }
        self.bytes = bytes
    }

    init(digestOf canonical: [UInt8]) {
        self.bytes = Array(SHA256.hash(data: canonical))
    }

    public var hex: String { Hex.encode(bytes) }

    /// Byte-wise order, the tie-break NIP-01 uses for replaceable events (lowest id wins).
    public static func < (lhs: EventID, rhs: EventID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

extension EventID: CustomStringConvertible {
    public var description: String { hex }
}
