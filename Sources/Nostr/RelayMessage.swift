/// NIP-01 (and NIP-42) messages between a client and a relay, as typed values.
///
/// Relay → client text is untrusted: `RelayMessage(json:)` checks the shape of every message
/// and throws `NostrError` naming what was wrong. An `EVENT`'s event stays an
/// `UnverifiedEvent`; only `verified()` makes it an `Event`. Client → relay messages are built
/// from already valid values and serialize with NIP-01's escaping.

/// A message a relay sends to a client.
public enum RelayMessage: Sendable, Hashable {
    /// `["EVENT", <subscription id>, <event>]`: a stored or live event for a subscription.
    case event(subscriptionID: String, event: UnverifiedEvent)
    /// `["OK", <event id>, <accepted>, <message>]`: the answer to an `EVENT` or `AUTH`.
    /// `eventID` is nil when the relay sent an empty id (some relays do when they refuse).
    case ok(eventID: EventID?, accepted: Bool, message: String)
    /// `["EOSE", <subscription id>]`: stored events are done, live ones follow.
    case eose(subscriptionID: String)
    /// `["CLOSED", <subscription id>, <message>]`: the relay ended (or refused) a subscription.
    case closed(subscriptionID: String, message: String)
    /// `["NOTICE", <message>]`: human-readable information.
    case notice(String)
    /// `["AUTH", <challenge>]` (NIP-42): the relay asks the client to authenticate.
    case auth(challenge: String)

    /// The message type, as the first array element names it.
    public var type: String {
        switch self {
        case .event: return "EVENT"
        case .ok: return "OK"
        case .eose: return "EOSE"
        case .closed: return "CLOSED"
        case .notice: return "NOTICE"
        case .auth: return "AUTH"
        }
    }

    /// Decodes one relay message from untrusted bytes.
    public init(json: [UInt8]) throws {
        try self.init(jsonValue: JSONValue.parse(json))
    }

    public init(json: String) throws {
        try self.init(json: Array(json.utf8))
    }

    public init(jsonValue: JSONValue) throws {
        guard case .array(let elements) = jsonValue, let first = elements.first else {
            throw NostrError.invalidField("relay message", reason: "not a non-empty array")
        }
        guard case .string(let type) = first else {
            throw NostrError.invalidField("relay message", reason: "type is not a string")
        }
        let fields = RelayMessageFields(type: type, elements: elements)
        switch type {
        case "EVENT":
            try fields.expectCount(3)
            let subscriptionID = try fields.string(1, name: "subscription id")
            self = .event(subscriptionID: subscriptionID, event: try UnverifiedEvent(jsonValue: elements[2]))
        case "OK":
            try fields.expectCount(4)
            let idText = try fields.string(1, name: "event id")
            let eventID = idText.isEmpty ? nil : try EventID(bytes: EventFields.lowercaseHex(idText, field: "OK event id", bytes: 32))
            guard case .bool(let accepted) = elements[2] else {
                throw NostrError.invalidField("OK accepted", reason: "not a boolean")
            }
            self = .ok(eventID: eventID, accepted: accepted, message: try fields.string(3, name: "message"))
        case "EOSE":
            try fields.expectCount(2)
            self = .eose(subscriptionID: try fields.string(1, name: "subscription id"))
        case "CLOSED":
            // The message is optional in practice (older relays send just the id).
            try fields.expectCount(2...3)
            let message = elements.count == 3 ? try fields.string(2, name: "message") : ""
            self = .closed(subscriptionID: try fields.string(1, name: "subscription id"), message: message)
        case "NOTICE":
            try fields.expectCount(2)
            self = .notice(try fields.string(1, name: "message"))
        case "AUTH":
            try fields.expectCount(2)
            self = .auth(challenge: try fields.string(1, name: "challenge"))
        default:
            throw NostrError.invalidField("relay message", reason: "unknown type \(Self.quoted(type))")
        }
    }

    /// The message as JSON text (what a relay would send; used by tests and relay code).
    public var jsonString: String { String(decoding: jsonBytes, as: UTF8.self) }

    public var jsonBytes: [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        JSONWriter.writeString(type, to: &out)
        out.append(UInt8(ascii: ","))
        switch self {
        case .event(let subscriptionID, let event):
            JSONWriter.writeString(subscriptionID, to: &out)
            out.append(UInt8(ascii: ","))
            out.append(contentsOf: Self.objectBytes(event))
        case .ok(let eventID, let accepted, let message):
            JSONWriter.writeString(eventID?.hex ?? "", to: &out)
            out.append(contentsOf: (accepted ? ",true," : ",false,").utf8)
            JSONWriter.writeString(message, to: &out)
        case .eose(let subscriptionID):
            JSONWriter.writeString(subscriptionID, to: &out)
        case .closed(let subscriptionID, let message):
            JSONWriter.writeString(subscriptionID, to: &out)
            out.append(UInt8(ascii: ","))
            JSONWriter.writeString(message, to: &out)
        case .notice(let message):
            JSONWriter.writeString(message, to: &out)
        case .auth(let challenge):
            JSONWriter.writeString(challenge, to: &out)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    private static func objectBytes(_ event: UnverifiedEvent) -> [UInt8] {
        JSONValue.object([
            JSONMember("id", .string(event.id.hex)),
            JSONMember("pubkey", .string(event.pubkey.hex)),
            JSONMember("created_at", .integer(event.createdAt)),
            JSONMember("kind", .integer(Int64(event.kind))),
            JSONMember("tags", .array(event.tags.map { .array($0.map { .string($0) }) })),
            JSONMember("content", .string(event.content)),
            JSONMember("sig", .string(Hex.encode(event.sig))),
        ]).jsonBytes
    }

    /// At most 32 characters of an untrusted type name, for error text.
    fileprivate static func quoted(_ text: String) -> String {
        let prefix = String(text.unicodeScalars.prefix(32).map { $0.isASCII && $0.value >= 0x20 ? Character($0) : "?" })
        return "\"\(prefix)\(text.unicodeScalars.count > 32 ? "…" : "")\""
    }
}

/// Positional access to a relay message's elements with typed failures.
private struct RelayMessageFields {
    let type: String
    let elements: [JSONValue]

    func expectCount(_ count: Int) throws {
        try expectCount(count...count)
    }

    func expectCount(_ range: ClosedRange<Int>) throws {
        guard range.contains(elements.count) else {
            throw NostrError.invalidField(type, reason: "has \(elements.count) elements, expected \(range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound)–\(range.upperBound)")")
        }
    }

    func string(_ index: Int, name: String) throws -> String {
        guard case .string(let s) = elements[index] else {
            throw NostrError.invalidField("\(type) \(name)", reason: "not a string")
        }
        return s
    }
}

/// A message a client sends to a relay.
public enum ClientMessage: Sendable, Equatable {
    /// `["EVENT", <event>]`: publish.
    case event(Event)
    /// `["REQ", <subscription id>, <filter>…]`: query stored events and subscribe to new ones.
    case req(subscriptionID: String, filters: [Filter])
    /// `["CLOSE", <subscription id>]`: end a subscription.
    case close(subscriptionID: String)
    /// `["AUTH", <signed kind-22242 event>]` (NIP-42).
    case auth(Event)

    public var jsonString: String { String(decoding: jsonBytes, as: UTF8.self) }

    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        switch self {
        case .event(let event):
            out.reserveCapacity(300 + event.content.utf8.count)
            out.append(contentsOf: "[\"EVENT\",".utf8)
            event.write(to: &out)
        case .req(let subscriptionID, let filters):
            out.append(contentsOf: "[\"REQ\",".utf8)
            JSONWriter.writeString(subscriptionID, to: &out)
            for filter in filters {
                out.append(UInt8(ascii: ","))
                filter.jsonValue.write(to: &out)
            }
        case .close(let subscriptionID):
            out.append(contentsOf: "[\"CLOSE\",".utf8)
            JSONWriter.writeString(subscriptionID, to: &out)
        case .auth(let event):
            out.append(contentsOf: "[\"AUTH\",".utf8)
            event.write(to: &out)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}

/// The machine-readable prefix NIP-01 puts before the human text of `OK` and `CLOSED`
/// messages (`"auth-required: …"`, `"duplicate: …"`, `"invalid: …"`).
public enum RelayReason {
    public static let authRequired = "auth-required"
    public static let duplicate = "duplicate"
    public static let restricted = "restricted"
    public static let rateLimited = "rate-limited"
    public static let invalid = "invalid"
    public static let blocked = "blocked"
    public static let error = "error"

    /// The prefix before the first `:` when it looks like one (lowercase letters and `-`).
    public static func prefix(of message: String) -> String? {
        guard let colon = message.firstIndex(of: ":") else { return nil }
        let candidate = message[..<colon]
        guard !candidate.isEmpty, candidate.count <= 32,
              candidate.unicodeScalars.allSatisfy({ ($0 >= "a" && $0 <= "z") || $0 == "-" }) else { return nil }
        return String(candidate)
    }

    public static func isAuthRequired(_ message: String) -> Bool {
        prefix(of: message) == authRequired
    }
}
