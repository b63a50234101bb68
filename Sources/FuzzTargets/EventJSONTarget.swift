import Nostr

/// NIP-01 JSON from relays and peers: the JSON parser itself, events (`UnverifiedEvent` and
/// `verified()`), filters, relay → client messages, client → relay REQ/CLOSE, and rumors.
///
/// Properties: parsed JSON written out parses back equal and writes the same bytes again; an
/// event's canonical serialization is the JSON array NIP-01 defines; filters, relay messages
/// and rumors survive their own serializers; REQ and CLOSE serialize to the array they were
/// built from.
public enum EventJSONTarget: FuzzTarget {
    public static let name = "event-json"

    public static func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        guard let value = try? JSONValue.parse(bytes) else { return .rejected("json") }
        let written = value.jsonBytes
        guard let reparsed = try? JSONValue.parse(written), reparsed == value else {
            throw PropertyViolation(name, "parsed JSON does not survive its own serializer")
        }
        guard reparsed.jsonBytes == written else { throw PropertyViolation(name, "JSON serialization is not stable") }

        var outcome = FuzzOutcome.rejected("nostr")
        if let event = try? UnverifiedEvent(jsonValue: value) {
            try checkEvent(event)
            outcome = .accepted((try? event.verified()) != nil ? "Event" : "UnverifiedEvent")
        }
        if let filter = try? Filter(jsonValue: value) {
            guard (try? Filter(json: filter.jsonString)) == filter else {
                throw PropertyViolation(name, "a filter does not survive its own serializer")
            }
            if !outcome.isAccepted { outcome = .accepted("Filter") }
        }
        if let message = try? RelayMessage(jsonValue: value) {
            guard (try? RelayMessage(json: message.jsonBytes)) == message else {
                throw PropertyViolation(name, "a \(message.type) relay message does not survive its own serializer")
            }
            outcome = .accepted("RelayMessage.\(message.type)")
        }
        if let rumor = try? Rumor(jsonValue: value) {
            try checkRumor(rumor)
            outcome = .accepted("Rumor")
        }
        if let client = clientMessage(value) {
            guard (try? JSONValue.parse(client.message.jsonBytes)) == client.expected else {
                throw PropertyViolation(name, "a client message does not serialize to the array it was built from")
            }
            outcome = .accepted("ClientMessage")
        }
        return outcome
    }

    static func checkEvent(_ event: UnverifiedEvent) throws {
        let expected = JSONValue.array([
            .integer(0), .string(event.pubkey.hex), .integer(event.createdAt), .integer(Int64(event.kind)),
            .array(event.tags.map { .array($0.map { .string($0) }) }), .string(event.content),
        ])
        guard (try? JSONValue.parse(event.canonicalSerialization)) == expected else {
            throw PropertyViolation(name, "an event's canonical serialization is not its NIP-01 array")
        }
        // The event as a rumor (same fields, id computed): what inner events and gift-wrap
        // contents are.
        if let rumor = try? Rumor(pubkey: event.pubkey, createdAt: event.createdAt, kind: event.kind, tags: event.tags,
                                  content: event.content) {
            try checkRumor(rumor)
        }
        // Embedded in a relay message, the event is written by the relay-message serializer.
        let message = RelayMessage.event(subscriptionID: "fuzz", event: event)
        guard (try? RelayMessage(json: message.jsonBytes)) == message else {
            throw PropertyViolation(name, "an event does not survive the EVENT relay message serializer")
        }
    }

    static func checkRumor(_ rumor: Rumor) throws {
        guard (try? Rumor(json: rumor.jsonBytes)) == rumor else {
            throw PropertyViolation(name, "a rumor does not survive its own serializer")
        }
    }

    /// `["REQ", id, filter…]` and `["CLOSE", id]` rebuilt as the client would send them.
    static func clientMessage(_ value: JSONValue) -> (message: ClientMessage, expected: JSONValue)? {
        guard case .array(let elements) = value, elements.count >= 2, case .string(let type) = elements[0],
              case .string(let id) = elements[1]
        else { return nil }
        switch type {
        case "REQ":
            var filters: [Filter] = []
            for element in elements.dropFirst(2) {
                guard let filter = try? Filter(jsonValue: element) else { return nil }
                filters.append(filter)
            }
            return (.req(subscriptionID: id, filters: filters), .array([.string("REQ"), .string(id)] + filters.map(\.jsonValue)))
        case "CLOSE" where elements.count == 2:
            return (.close(subscriptionID: id), .array([.string("CLOSE"), .string(id)]))
        default:
            return nil
        }
    }
}
