import Foundation
import Nostr

/// Reading `RelayServerConfiguration` from a JSON file. Keys are snake_case and optional (a
/// missing key keeps its default); unknown keys and wrong types are errors that name the key.
extension RelayServerConfiguration {
    /// Reads `path` over the defaults (`base`), then validates the result.
    public init(jsonFile path: String, over base: RelayServerConfiguration = RelayServerConfiguration()) throws {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw RelayServerError.configurationFile(path: path, reason: "cannot be read (\(error.localizedDescription))")
        }
        do {
            self = try RelayServerConfiguration(json: Array(data), over: base)
        } catch RelayServerError.invalidConfiguration(let why) {
            throw RelayServerError.configurationFile(path: path, reason: why)
        }
    }

    /// Decodes a JSON document over `base` (not validated: callers apply flags, then validate).
    public init(json: [UInt8], over base: RelayServerConfiguration = RelayServerConfiguration()) throws {
        let root: JSONValue
        do {
            root = try JSONValue.parse(json)
        } catch {
            throw RelayServerError.invalidConfiguration("not valid JSON (\(error))")
        }
        var config = base
        var reader = try ObjectReader(root, path: "")
        config.host = try reader.string("host") ?? config.host
        config.port = try reader.int("port") ?? config.port
        config.dataDirectory = try reader.string("data_directory") ?? config.dataDirectory
        config.publicURLs = try reader.strings("public_urls") ?? config.publicURLs
        config.purgeIntervalSeconds = try reader.int("purge_interval_seconds") ?? config.purgeIntervalSeconds
        if var info = try reader.object("info") {
            config.information.name = try info.string("name") ?? config.information.name
            config.information.description = try info.string("description") ?? config.information.description
            config.information.pubkey = try info.string("pubkey") ?? config.information.pubkey
            config.information.contact = try info.string("contact") ?? config.information.contact
            try info.finish()
        }
        if var limits = try reader.object("limits") {
            var l = config.limits
            l.maxEventBytes = try limits.int("max_event_bytes") ?? l.maxEventBytes
            l.maxSubscriptions = try limits.int("max_subscriptions") ?? l.maxSubscriptions
            l.maxFilters = try limits.int("max_filters") ?? l.maxFilters
            l.maxFilterValues = try limits.int("max_filter_values") ?? l.maxFilterValues
            l.queryLimit = try limits.int("query_limit") ?? l.queryLimit
            l.maxConnections = try limits.int("max_connections") ?? l.maxConnections
            l.eventsPerMinute = try limits.int("events_per_minute") ?? l.eventsPerMinute
            l.eventsPerMinutePerKey = try limits.int("events_per_minute_per_key") ?? l.eventsPerMinutePerKey
            l.requestsPerMinute = try limits.int("requests_per_minute") ?? l.requestsPerMinute
            l.maxFutureSeconds = try limits.int("max_future_seconds") ?? l.maxFutureSeconds
            l.outboundQueue = try limits.int("outbound_queue") ?? l.outboundQueue
            l.outboundBytes = try limits.int("outbound_bytes") ?? l.outboundBytes
            l.requestBytes = try limits.int("request_bytes") ?? l.requestBytes
            l.maxConnectionsPerIP = try limits.int("max_connections_per_ip") ?? l.maxConnectionsPerIP
            l.limitLoopback = try limits.bool("limit_loopback") ?? l.limitLoopback
            l.authPerMinute = try limits.int("auth_per_minute") ?? l.authPerMinute
            l.maxAuthKeys = try limits.int("max_auth_keys") ?? l.maxAuthKeys
            l.maxAuthEventBytes = try limits.int("max_auth_event_bytes") ?? l.maxAuthEventBytes
            l.mailboxWraps = try limits.int("mailbox_wraps") ?? l.mailboxWraps
            l.mailboxBytes = try limits.int("mailbox_bytes") ?? l.mailboxBytes
            l.relayWraps = try limits.int("relay_wraps") ?? l.relayWraps
            try limits.finish()
            config.limits = l
        }
        if var auth = try reader.object("auth") {
            config.auth.write = try auth.bool("write") ?? config.auth.write
            config.auth.read = try auth.bool("read") ?? config.auth.read
            try auth.finish()
        }
        if let rules = try reader.array("retention") {
            config.retention = try rules.enumerated().map { index, value in
                var rule = try ObjectReader(value, path: "retention[\(index)].")
                guard let kinds = try rule.ints("kinds") else {
                    throw RelayServerError.invalidConfiguration("retention[\(index)].kinds is missing")
                }
                guard let age = try rule.int("max_age_seconds") else {
                    throw RelayServerError.invalidConfiguration("retention[\(index)].max_age_seconds is missing")
                }
                try rule.finish()
                return RetentionRule(kinds: kinds, maxAgeSeconds: age)
            }
        }
        try reader.finish()
        self = config
    }
}

/// Typed access to one JSON object's members that remembers which keys were read, so the
/// rest can be reported as unknown.
private struct ObjectReader {
    private let members: [JSONMember]
    private let path: String
    private var read: Set<String> = []

    init(_ value: JSONValue, path: String) throws {
        guard case .object(let members) = value else {
            throw RelayServerError.invalidConfiguration("\(path.isEmpty ? "the document" : String(path.dropLast())) is not an object")
        }
        self.members = members
        self.path = path
    }

    private mutating func value(_ key: String) -> JSONValue? {
        read.insert(key)
        guard let member = members.first(where: { $0.key == key }), member.value != .null else { return nil }
        return member.value
    }

    private func wrong(_ key: String, _ expected: String) -> RelayServerError {
        .invalidConfiguration("\(path)\(key) is not \(expected)")
    }

    mutating func string(_ key: String) throws -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let s) = value else { throw wrong(key, "a string") }
        return s
    }

    mutating func int(_ key: String) throws -> Int? {
        guard let value = value(key) else { return nil }
        guard case .integer(let n) = value, let int = Int(exactly: n) else { throw wrong(key, "an integer") }
        return int
    }

    mutating func bool(_ key: String) throws -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let b) = value else { throw wrong(key, "true or false") }
        return b
    }

    mutating func array(_ key: String) throws -> [JSONValue]? {
        guard let value = value(key) else { return nil }
        guard case .array(let a) = value else { throw wrong(key, "an array") }
        return a
    }

    mutating func strings(_ key: String) throws -> [String]? {
        try array(key)?.map {
            guard case .string(let s) = $0 else { throw wrong(key, "an array of strings") }
            return s
        }
    }

    mutating func ints(_ key: String) throws -> [Int]? {
        try array(key)?.map {
            guard case .integer(let n) = $0, let int = Int(exactly: n) else { throw wrong(key, "an array of integers") }
            return int
        }
    }

    mutating func object(_ key: String) throws -> ObjectReader? {
        guard let value = value(key) else { return nil }
        return try ObjectReader(value, path: "\(path)\(key).")
    }

    /// Fails on the first member that no accessor asked for.
    func finish() throws {
        if let unknown = members.first(where: { !read.contains($0.key) }) {
            throw RelayServerError.invalidConfiguration("\(path)\(unknown.key) is not a known setting")
        }
    }
}
