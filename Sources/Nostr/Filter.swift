/// A NIP-01 subscription filter. Conditions inside a filter are ANDed; the values inside one
/// condition are ORed. A `nil` condition matches everything, an empty list matches nothing.
public struct Filter: Sendable, Equatable {
    public var ids: [EventID]?
    public var authors: [PublicKey]?
    public var kinds: [Int]?
    /// Inclusive lower bound on `created_at`.
    public var since: Int64?
    /// Inclusive upper bound on `created_at`.
    public var until: Int64?
    /// How many of the newest stored events to return initially (not a matching condition).
    public var limit: Int?
    /// `#x` queries keyed by the single-letter tag name (`"e"`, `"p"`, `"h"`, `"d"`…): an event
    /// matches when it has a tag `[x, v, …]` with `v` in the list.
    public var tags: [String: [String]]

    public init(
        ids: [EventID]? = nil, authors: [PublicKey]? = nil, kinds: [Int]? = nil,
        since: Int64? = nil, until: Int64? = nil, limit: Int? = nil, tags: [String: [String]] = [:]
    ) {
        self.ids = ids
        self.authors = authors
        self.kinds = kinds
        self.since = since
        self.until = until
        self.limit = limit
        self.tags = tags
    }

    /// Whether `name` can be queried as `#name` (NIP-01: a single letter a–z or A–Z).
    public static func isQueryableTagName(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard utf8.count == 1, let c = utf8.first else { return false }
        return (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
    }

    /// Whether `event` satisfies every condition of the filter (`limit` plays no part).
    public func matches(_ event: Event) -> Bool {
        if let ids, !ids.contains(event.id) { return false }
        if let kinds, !kinds.contains(event.kind) { return false }
        if let since, event.createdAt < since { return false }
        if let until, event.createdAt > until { return false }
        if let authors, !authors.contains(event.pubkey) { return false }
        for (name, values) in tags {
            let found = event.tags.contains { tag in
                tag.count >= 2 && tag[0] == name && values.contains(tag[1])
            }
            if !found { return false }
        }
        return true
    }
}

// MARK: - JSON

extension Filter {
    public init(json: [UInt8]) throws {
        try self.init(jsonValue: JSONValue.parse(json))
    }

    public init(json: String) throws {
        try self.init(json: Array(json.utf8))
    }

    /// Decodes a filter object. Unknown members (e.g. NIP-50 `search`) are ignored; known ones
    /// must have their NIP-01 types.
    public init(jsonValue: JSONValue) throws {
        guard case .object(let members) = jsonValue else { throw NostrError.invalidFilter("not an object") }
        self.init()
        for member in members {
            switch member.key {
            case "ids":
                ids = try Self.stringArray(member.value, field: "ids").map {
                    try EventID(bytes: EventFields.lowercaseHex($0, field: "ids", bytes: 32))
                }
            case "authors":
                authors = try Self.stringArray(member.value, field: "authors").map {
                    try PublicKey(bytes: EventFields.lowercaseHex($0, field: "authors", bytes: 32))
                }
            case "kinds":
                guard case .array(let values) = member.value else { throw NostrError.invalidFilter("kinds is not an array") }
                kinds = try values.map { try EventFields.kind($0, field: "kinds") }
            case "since":
                since = try EventFields.timestamp(member.value, field: "since")
            case "until":
                until = try EventFields.timestamp(member.value, field: "until")
            case "limit":
                guard case .integer(let n) = member.value, n >= 0 else {
                    throw NostrError.invalidFilter("limit is not a non-negative integer")
                }
                limit = Int(clamping: n)
            default:
                guard member.key.hasPrefix("#") else { continue }
                let name = String(member.key.dropFirst())
                guard Self.isQueryableTagName(name) else { continue }
                tags[name] = try Self.stringArray(member.value, field: member.key)
            }
        }
    }

    private static func stringArray(_ value: JSONValue, field: String) throws -> [String] {
        guard case .array(let values) = value else { throw NostrError.invalidFilter("\(field) is not an array") }
        return try values.map {
            guard case .string(let s) = $0 else { throw NostrError.invalidFilter("\(field) has a non-string") }
            return s
        }
    }

    /// The filter as JSON: ids, authors, kinds, `#x` queries in letter order, since, until, limit.
    public var jsonValue: JSONValue {
        var members: [JSONMember] = []
        if let ids { members.append(JSONMember("ids", .array(ids.map { .string($0.hex) }))) }
        if let authors { members.append(JSONMember("authors", .array(authors.map { .string($0.hex) }))) }
        if let kinds { members.append(JSONMember("kinds", .array(kinds.map { .integer(Int64($0)) }))) }
        for name in tags.keys.sorted() {
            members.append(JSONMember("#" + name, .array((tags[name] ?? []).map { .string($0) })))
        }
        if let since { members.append(JSONMember("since", .integer(since))) }
        if let until { members.append(JSONMember("until", .integer(until))) }
        if let limit { members.append(JSONMember("limit", .integer(Int64(limit)))) }
        return .object(members)
    }

    public var jsonString: String { jsonValue.jsonString }
}
