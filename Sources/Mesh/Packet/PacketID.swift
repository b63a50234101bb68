/// A packet id: SHA-256 of the signed bytes (section 3). Relays lowering the TTL do not change
/// it, since the TTL byte is zeroed before signing. `id8` is the 8-byte prefix sync and
/// fragments use.
public struct PacketID: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    init(digest: [UInt8]) { bytes = digest }

    /// The first 8 bytes: a fragment id (5) and a sync entry id (8.5).
    public var id8: MeshID { MeshID(bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }) }

    /// The seen-cache key: the first 16 bytes (section 6: "ids (≥ 16 bytes)").
    var key: SeenKey { SeenKey(bytes) }

    public var hex: String { bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined() }
    public var description: String { hex }
}

/// 16 bytes of an id, as two words: what the seen-caches hold (section 6).
struct SeenKey: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    init(_ bytes: [UInt8]) {
        var h: UInt64 = 0, l: UInt64 = 0
        for i in 0..<8 where i < bytes.count { h = h << 8 | UInt64(bytes[i]) }
        for i in 8..<16 where i < bytes.count { l = l << 8 | UInt64(bytes[i]) }
        high = h
        low = l
    }
}
