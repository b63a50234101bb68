import Crypto

/// An 8-byte mesh address: `SHA-256("burrow-mesh-v1:id" ‖ mesh_key)[0..8]` for a node (2), or a
/// daily DM tag (8.3) in a DM's recipient field. Held as a big-endian `UInt64` so comparisons,
/// hashing and "smaller id" rules are cheap and exact.
public struct MeshID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let value: UInt64

    public init(_ value: UInt64) { self.value = value }

    /// Exactly 8 bytes, else `nil`.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 8 else { return nil }
        value = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// `ff×8`: written where a broadcast needs a recipient (sync offers); refused as a packet's
    /// recipient field.
    public static let broadcast = MeshID(.max)

    /// The id of a mesh key (section 2).
    public init(meshKey publicKey: some Collection<UInt8>) {
        var hasher = SHA256()
        hasher.update(data: Domain.meshID)
        hasher.update(data: Array(publicKey))
        let digest = Array(hasher.finalize())
        value = digest.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(8)
        out.appendU64(value)
        return out
    }

    public var hex: String { bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined() }

    public var description: String { hex }

    public static func < (lhs: MeshID, rhs: MeshID) -> Bool { lhs.value < rhs.value }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
