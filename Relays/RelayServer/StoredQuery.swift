import Nostr
import SQLite

/// One NIP-01 filter as SQL over `events` and `tags`, newest first, with the relay's rules
/// built in: expired events (NIP-40) are never returned, and gift wraps only when a `p` tag
/// names a key the connection authenticated as and while they are within the mailbox lifetime.
///
/// Ids, authors and kinds are written into the SQL as literals made from already decoded
/// bytes and integers (hex of 32 bytes, decimal numbers), so only tag values and the
/// authenticated keys are bound: that keeps large id lists clear of SQLite 3.15's limit of
/// 999 parameters (tag values are capped by `max_filter_values` ≤ 900).
struct StoredQuery {
    let sql: String
    let values: [SQLiteValue]

    /// nil when the filter cannot match anything (an empty list, `limit` 0, since > until).
    init?(filter: Filter, limit: Int, now: Int64, authenticated: Set<String>) {
        if filter.ids?.isEmpty == true || filter.authors?.isEmpty == true || filter.kinds?.isEmpty == true { return nil }
        if filter.tags.values.contains(where: \.isEmpty) { return nil }
        if let since = filter.since, let until = filter.until, since > until { return nil }
        let limit = min(filter.limit ?? limit, limit)
        guard limit > 0 else { return nil }

        var conditions: [String] = []
        var values: [SQLiteValue] = []
        if let ids = filter.ids {
            conditions.append("e.id IN (\(ids.map { "X'\(Hex.encode($0.bytes))'" }.joined(separator: ",")))")
        }
        if let authors = filter.authors {
            conditions.append("e.pubkey IN (\(authors.map { "X'\(Hex.encode($0.bytes))'" }.joined(separator: ",")))")
        }
        if let kinds = filter.kinds {
            conditions.append("e.kind IN (\(kinds.map(String.init).joined(separator: ",")))")
        }
        if let since = filter.since {
            conditions.append("e.created_at >= ?")
            values.append(.integer(since))
        }
        if let until = filter.until {
            conditions.append("e.created_at <= ?")
            values.append(.integer(until))
        }
        for name in filter.tags.keys.sorted() {
            let wanted = filter.tags[name] ?? []
            conditions.append("e.seq IN (SELECT t.seq FROM tags t WHERE t.name = ? AND t.value IN (\(Self.placeholders(wanted.count))))")
            values.append(.text(name))
            values.append(contentsOf: wanted.map(SQLiteValue.text))
        }
        conditions.append("(e.expiration IS NULL OR e.expiration >= ?)")
        values.append(.integer(now))
        // A wrap past the mailbox lifetime is never served, even before the purge removes it.
        conditions.append("(e.kind != \(Kind.giftWrap) OR e.received_at > ?)")
        values.append(.integer(now - GiftWrapMailbox.lifetimeSeconds))
        if authenticated.isEmpty {
            conditions.append("e.kind != \(Kind.giftWrap)")
        } else {
            let keys = authenticated.sorted()
            conditions.append("(e.kind != \(Kind.giftWrap) OR e.seq IN (SELECT t.seq FROM tags t WHERE t.name = 'p' AND t.value IN (\(Self.placeholders(keys.count)))))")
            values.append(contentsOf: keys.map(SQLiteValue.text))
        }
        sql = "SELECT e.json, e.created_at, e.id FROM events e WHERE \(conditions.joined(separator: " AND ")) ORDER BY e.created_at DESC, e.id ASC LIMIT \(limit)"
        self.values = values
    }

    private static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ",")
    }
}

/// A stored event as a query returns it: the exact JSON, with what is needed to merge the
/// results of several filters.
struct StoredEvent: Sendable {
    let json: [UInt8]
    let createdAt: Int64
    let id: [UInt8]
}

extension EventStore {
    /// The stored events matching any of `filters` (each capped at `limit`), each once, newest
    /// first (ties by lowest id).
    static func query(
        _ filters: [Filter], limit: Int, now: Int64, authenticated: Set<String>, in db: SQLiteConnection
    ) throws -> [StoredEvent] {
        var seen = Set<[UInt8]>()
        var results: [StoredEvent] = []
        for filter in filters {
            guard let query = StoredQuery(filter: filter, limit: limit, now: now, authenticated: authenticated) else { continue }
            let rows = try db.query(query.sql, query.values) { StoredEvent(json: $0.blob(0) ?? [], createdAt: $0.int64(1), id: $0.blob(2) ?? []) }
            for row in rows where seen.insert(row.id).inserted { results.append(row) }
        }
        if filters.count > 1 {
            results.sort { $0.createdAt != $1.createdAt ? $0.createdAt > $1.createdAt : $0.id.lexicographicallyPrecedes($1.id) }
        }
        return results
    }
}
