import Nostr

/// Typed access to the members of an inner-event JSON payload with strict types: a number field
/// takes any JSON number, an integer field only an integer literal, a string only a string.
/// Absent or `null` optional members read as nil (as Swift's `decodeIfPresent` does for Whistle).
struct PayloadFields {
    let kind: Int
    let object: JSONValue

    /// Parses `content` as a JSON object; nil when it is not JSON or not an object.
    init?(kind: Int, content: String) {
        guard let value = try? JSONValue.parse(content), case .object = value else { return nil }
        self.kind = kind
        self.object = value
    }

    /// Like `init?`, but a payload that is not a JSON object is an error.
    init(requiredKind kind: Int, content: String) throws {
        guard let fields = PayloadFields(kind: kind, content: content) else {
            throw MarmotError.invalidPayload(kind: kind, field: "content", reason: "not a JSON object")
        }
        self = fields
    }

    func fail(_ field: String, _ reason: String) -> MarmotError { .invalidPayload(kind: kind, field: field, reason: reason) }

    private func present(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    func string(_ key: String) throws -> String {
        guard let value = present(key) else { throw fail(key, "missing") }
        guard case .string(let s) = value else { throw fail(key, "not a string") }
        return s
    }

    func optionalString(_ key: String) throws -> String? {
        guard present(key) != nil else { return nil }
        return try string(key)
    }

    func integer(_ key: String) throws -> Int64 {
        guard let value = present(key) else { throw fail(key, "missing") }
        guard case .integer(let i) = value else { throw fail(key, "not an integer") }
        return i
    }

    func optionalInteger(_ key: String) throws -> Int64? {
        guard present(key) != nil else { return nil }
        return try integer(key)
    }

    /// Any finite JSON number.
    func number(_ key: String) throws -> Double {
        guard let value = present(key) else { throw fail(key, "missing") }
        switch value {
        case .integer(let i): return Double(i)
        case .double(let d) where d.isFinite: return d
        default: throw fail(key, "not a number")
        }
    }

    func optionalBool(_ key: String) throws -> Bool? {
        guard let value = present(key) else { return nil }
        guard case .bool(let b) = value else { throw fail(key, "not a boolean") }
        return b
    }
}
