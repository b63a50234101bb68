/// Store-and-forward (section 9): carried packets (dm, nostr-event) kept for neighbours that
/// were out of reach, each with the TTL it is resent with. Bounded by the spec's quotas (32
/// packets / 64 KiB per DM recipient, 256 packets / 1 MiB of broadcasts, 4 MiB in all), the
/// oldest dropped first, and expired 24 h after its timestamp.
public struct PacketStore: Sendable {
    public static let perRecipientPackets = 32
    public static let perRecipientBytes = 64 * 1024
    public static let broadcastPackets = 256
    public static let broadcastBytes = 1024 * 1024
    public static let totalBytes = 4 * 1024 * 1024
    public static let lifetime: UInt64 = 24 * 3600 * 1000

    public struct Entry: Sendable {
        /// The packet with the TTL it is resent with.
        public let packet: Packet
        public let length: Int
    }

    private var entries: [SeenKey: Entry] = [:]
    private var byID8: [UInt64: SeenKey] = [:]
    public private(set) var bytes = 0
    /// Packets and bytes per DM recipient (`nil`: broadcasts), so a quota is only enforced —
    /// and the group sorted — when it is actually exceeded.
    private var usage: [MeshID?: (count: Int, bytes: Int)] = [:]

    public init() {}

    public var count: Int { entries.count }

    public func contains(id8: MeshID) -> Bool { byID8[id8.value] != nil }

    public func packet(id8: MeshID) -> Packet? { byID8[id8.value].flatMap { entries[$0]?.packet } }

    /// Keeps `packet` (already carrying its resend TTL), then enforces the quotas.
    public mutating func insert(_ packet: Packet, now: UInt64) {
        guard packet.type.isCarried, entries[packet.id.key] == nil, packet.timestamp &+ Self.lifetime > now else { return }
        let entry = Entry(packet: packet, length: packet.encodedLength)
        entries[packet.id.key] = entry
        byID8[packet.id.id8.value] = packet.id.key
        bytes += entry.length
        let before = usage[packet.recipient] ?? (0, 0)
        usage[packet.recipient] = (before.count + 1, before.bytes + entry.length)
        enforceQuotas(for: packet.recipient)
    }

    /// Replaces a stored packet's resend TTL with a higher one, before it was ever sent (a
    /// copy that came a shorter way during the forwarding jitter).
    mutating func raiseTTL(of packet: Packet) {
        guard let entry = entries[packet.id.key], entry.packet.ttl < packet.ttl else { return }
        entries[packet.id.key] = Entry(packet: packet, length: entry.length)
    }

    public mutating func expire(now: UInt64) {
        for (key, entry) in entries where entry.packet.timestamp &+ Self.lifetime <= now { remove(key) }
    }

    /// Stored packets with `since ≤ timestamp < before` (`before` 0: unbounded), newest first,
    /// ties by smaller id; at most `max`, and whether more exist.
    public func offer(since: UInt64, before: UInt64, max: Int) -> (entries: [Packet], more: Bool) {
        let matching = entries.values.map(\.packet).filter { p in
            p.timestamp >= since && (before == 0 || p.timestamp < before)
        }.sorted(by: Self.newestFirst)
        return (Array(matching.prefix(max)), matching.count > max)
    }

    static func newestFirst(_ a: Packet, _ b: Packet) -> Bool {
        if a.timestamp != b.timestamp { return a.timestamp > b.timestamp }
        return a.id.bytes.lexicographicallyPrecedes(b.id.bytes)
    }

    private mutating func remove(_ key: SeenKey) {
        guard let entry = entries.removeValue(forKey: key) else { return }
        if byID8[entry.packet.id.id8.value] == key { byID8[entry.packet.id.id8.value] = nil }
        bytes -= entry.length
        let before = usage[entry.packet.recipient] ?? (1, entry.length)
        usage[entry.packet.recipient] = before.count > 1 ? (before.count - 1, before.bytes - entry.length) : nil
    }

    /// Drops the oldest of a group until it is within its limits.
    private mutating func trim(where belongs: (Packet) -> Bool, maxPackets: Int, maxBytes: Int) {
        var group = entries.filter { belongs($0.value.packet) }.sorted { Self.newestFirst($1.value.packet, $0.value.packet) }
        var count = group.count, size = group.reduce(0) { $0 + $1.value.length }
        while count > maxPackets || size > maxBytes, !group.isEmpty {
            let oldest = group.removeFirst()
            remove(oldest.key)
            count -= 1
            size -= oldest.value.length
        }
    }

    private mutating func enforceQuotas(for recipient: MeshID?) {
        let group = usage[recipient] ?? (0, 0)
        if let recipient {
            if group.count > Self.perRecipientPackets || group.bytes > Self.perRecipientBytes {
                trim(where: { $0.recipient == recipient }, maxPackets: Self.perRecipientPackets, maxBytes: Self.perRecipientBytes)
            }
        } else if group.count > Self.broadcastPackets || group.bytes > Self.broadcastBytes {
            trim(where: { $0.recipient == nil }, maxPackets: Self.broadcastPackets, maxBytes: Self.broadcastBytes)
        }
        if bytes > Self.totalBytes { trim(where: { _ in true }, maxPackets: .max, maxBytes: Self.totalBytes) }
    }
}
