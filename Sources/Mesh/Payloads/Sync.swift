/// A sync request (8.5): either an offer request (count 0: "offer me what you stored with
/// `since ≤ timestamp < before`, newest first, at most `max`") or a want (count 1–32: "send me
/// these", with since, before and max 0). Any other shape is `bad_payload`.
public enum SyncRequest: Sendable, Hashable {
    case offer(since: UInt64, before: UInt64, max: UInt8)
    case want([MeshID])

    public static let maxOffer: UInt8 = 64
    public static let maxWant = 32

    public static func decode(_ payload: [UInt8]) throws(MeshError) -> SyncRequest {
        var reader = ByteReader(payload)
        guard let since = try? reader.u64(), let before = try? reader.u64(), let max = try? reader.u8(),
              let count = try? reader.u8(), reader.remaining == Int(count) * 8
        else { throw .badPayload }
        if count == 0 {
            guard (1...maxOffer).contains(max) else { throw .badPayload }
            return .offer(since: since, before: before, max: max)
        }
        guard Int(count) <= maxWant, since == 0, before == 0, max == 0 else { throw .badPayload }
        var ids: [MeshID] = []
        for _ in 0..<count {
            guard let id = try? reader.u64() else { throw .badPayload }
            ids.append(MeshID(id))
        }
        return .want(ids)
    }

    public func encoded() throws(MeshError) -> [UInt8] {
        var out: [UInt8] = []
        switch self {
        case .offer(let since, let before, let max):
            guard (1...Self.maxOffer).contains(max) else { throw .invalidArgument }
            out.appendU64(since)
            out.appendU64(before)
            out += [max, 0]
        case .want(let ids):
            guard (1...Self.maxWant).contains(ids.count) else { throw .invalidArgument }
            out.appendU64(0)
            out.appendU64(0)
            out += [0, UInt8(ids.count)]
            for id in ids { out.appendU64(id.value) }
        }
        return out
    }
}

/// One stored packet as a sync offer lists it: its id8, type and recipient (`ff×8` for a
/// broadcast), enough to decide whether to want it without fetching it.
public struct SyncEntry: Sendable, Hashable {
    public let id: MeshID
    public let type: PacketType
    public let recipient: MeshID

    public init(id: MeshID, type: PacketType, recipient: MeshID) {
        self.id = id
        self.type = type
        self.recipient = recipient
    }
}

/// A sync offer (8.5): up to 64 entries, newest first; `oldest` is the last entry's timestamp
/// (0 if none) and `more` says whether a next page exists (asked with `before = oldest`).
public struct SyncOffer: Sendable, Hashable {
    public static let maxEntries = 64

    public var oldest: UInt64
    public var more: Bool
    public var entries: [SyncEntry]

    public init(oldest: UInt64, more: Bool, entries: [SyncEntry]) {
        self.oldest = oldest
        self.more = more
        self.entries = entries
    }

    public static func decode(_ payload: [UInt8]) throws(MeshError) -> SyncOffer {
        var reader = ByteReader(payload)
        guard let oldest = try? reader.u64(), let more = try? reader.u8(), more <= 1, let count = try? reader.u8(),
              Int(count) <= maxEntries, reader.remaining == Int(count) * 17, count > 0 || oldest == 0
        else { throw .badPayload }
        var entries: [SyncEntry] = []
        for _ in 0..<count {
            guard let id = try? reader.u64(), let typeByte = try? reader.u8(), let recipient = try? reader.u64(),
                  let type = PacketType(rawValue: typeByte), type.isCarried
            else { throw .badPayload }
            // A DM names its recipient; a broadcast writes ff×8 there.
            guard (type == .dm) == (recipient != MeshID.broadcast.value) else { throw .badPayload }
            entries.append(SyncEntry(id: MeshID(id), type: type, recipient: MeshID(recipient)))
        }
        return SyncOffer(oldest: oldest, more: more == 1, entries: entries)
    }

    public func encoded() throws(MeshError) -> [UInt8] {
        guard entries.count <= Self.maxEntries else { throw .invalidArgument }
        var out: [UInt8] = []
        out.appendU64(oldest)
        out += [more ? 1 : 0, UInt8(entries.count)]
        for entry in entries {
            out.appendU64(entry.id.value)
            out.append(entry.type.rawValue)
            out.appendU64(entry.recipient.value)
        }
        return out
    }
}
