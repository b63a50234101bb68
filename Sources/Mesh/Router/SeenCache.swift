/// The seen-cache of section 6: ids of verified packets, each kept until its timestamp plus its
/// class's past bound, i.e. exactly as long as a replay could pass the freshness check. Bounded
/// at 16384 entries; when full the soonest-expiring entry goes. A second instance holds the
/// event ids of carried Nostr events (one event may come in two packets).
public struct SeenCache: Sendable {
    public static let defaultCapacity = 16384

    public let capacity: Int
    private var expiries: [SeenKey: UInt64] = [:]
    /// A min-heap of (expiry, key); entries whose expiry no longer matches are stale and skipped.
    private var heap: [(expiry: UInt64, key: SeenKey)] = []
    /// How many held ids start with each 8-byte prefix: sync offers name packets by id8 (8.5).
    private var prefixes: [UInt64: Int] = [:]

    public init(capacity: Int = SeenCache.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    public var count: Int { expiries.count }

    func contains(_ key: SeenKey, now: UInt64) -> Bool {
        guard let expiry = expiries[key] else { return false }
        return expiry > now
    }

    public func contains(_ id: PacketID, now: UInt64) -> Bool { contains(id.key, now: now) }

    /// Whether an id starting with `id8` is held (expired entries may linger until the next purge,
    /// which only makes sync skip a packet already seen a day ago).
    public func contains(id8: MeshID) -> Bool { prefixes[id8.value, default: 0] > 0 }

    public mutating func insert(_ id: PacketID, expiresAt: UInt64, now: UInt64) {
        insert(id.key, expiresAt: expiresAt, now: now)
    }

    mutating func insert(_ key: SeenKey, expiresAt: UInt64, now: UInt64) {
        guard expiresAt > now else { return }
        if let existing = expiries[key], existing >= expiresAt { return }
        purge(now: now)
        while expiries.count >= capacity, popSoonest() {}
        if expiries.updateValue(expiresAt, forKey: key) == nil { prefixes[key.high, default: 0] += 1 }
        push((expiresAt, key))
        // Stale heap entries (superseded expiries) are bounded by compacting when they pile up.
        if heap.count > 2 * capacity + 16 { rebuild() }
    }

    /// Removes expired entries.
    public mutating func purge(now: UInt64) {
        while let top = heap.first, top.expiry <= now { _ = popSoonest() }
    }

    @discardableResult
    private mutating func popSoonest() -> Bool {
        guard !heap.isEmpty else { return false }
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        if expiries[top.key] == top.expiry {
            expiries[top.key] = nil
            let remaining = prefixes[top.key.high, default: 1] - 1
            prefixes[top.key.high] = remaining > 0 ? remaining : nil
        }
        return true
    }

    private mutating func push(_ entry: (expiry: UInt64, key: SeenKey)) {
        heap.append(entry)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i].expiry < heap[parent].expiry else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var smallest = i
            if l < heap.count, heap[l].expiry < heap[smallest].expiry { smallest = l }
            if r < heap.count, heap[r].expiry < heap[smallest].expiry { smallest = r }
            guard smallest != i else { return }
            heap.swapAt(i, smallest)
            i = smallest
        }
    }

    private mutating func rebuild() {
        heap = []
        for (key, expiry) in expiries { push((expiry, key)) }
    }
}
