import Nostr

/// A client → relay message (NIP-01, NIP-42) decoded from untrusted text. Events stay
/// `UnverifiedEvent` here: the connection verifies them before anything else looks at them.
///
/// When a message cannot be decoded, `Failure` keeps what could still be recovered (the
/// event id or subscription id) so the answer can be an `OK` or `CLOSED` the client can match,
/// falling back to a `NOTICE`.
enum IncomingMessage: Sendable {
    case event(UnverifiedEvent)
    case req(subscriptionID: String, filters: [Filter])
    case close(subscriptionID: String)
    case auth(UnverifiedEvent)
    /// NIP-45 `COUNT`, which this relay refuses by subscription id.
    case count(subscriptionID: String)

    struct Failure: Error, Equatable {
        /// What was wrong, phrased for the client.
        let reason: String
        /// The `id` of an EVENT/AUTH whose event did not decode, when it was readable.
        var eventID: EventID?
        /// The subscription id of a REQ/COUNT whose filters did not decode.
        var subscriptionID: String?
        var isAuth = false
    }

    static let maxSubscriptionIDLength = 64

    /// Decodes one text frame.
    static func decode(_ text: [UInt8]) -> Result<IncomingMessage, Failure> {
        let root: JSONValue
        do {
            root = try JSONValue.parse(text)
        } catch {
            return .failure(Failure(reason: "message is not valid JSON (\(error))"))
        }
        guard case .array(let elements) = root, let first = elements.first else {
            return .failure(Failure(reason: "message is not a non-empty JSON array"))
        }
        guard case .string(let type) = first else {
            return .failure(Failure(reason: "message type is not a string"))
        }
        switch type {
        case "EVENT", "AUTH":
            let isAuth = type == "AUTH"
            guard elements.count == 2 else {
                return .failure(Failure(reason: "\(type) has \(elements.count) elements, expected 2",
                                        eventID: elements.count > 1 ? readableID(elements[1]) : nil, isAuth: isAuth))
            }
            do {
                let event = try UnverifiedEvent(jsonValue: elements[1])
                return .success(isAuth ? .auth(event) : .event(event))
            } catch {
                return .failure(Failure(reason: "event is malformed: \(describe(error))", eventID: readableID(elements[1]), isAuth: isAuth))
            }
        case "REQ", "COUNT":
            guard elements.count >= 2, case .string(let subscriptionID) = elements[1] else {
                return .failure(Failure(reason: "\(type) needs a subscription id string"))
            }
            if let problem = subscriptionIDProblem(subscriptionID) {
                return .failure(Failure(reason: problem))
            }
            if type == "COUNT" { return .success(.count(subscriptionID: subscriptionID)) }
            guard elements.count >= 3 else {
                return .failure(Failure(reason: "REQ has no filter", subscriptionID: subscriptionID))
            }
            do {
                let filters = try elements[2...].map { try Filter(jsonValue: $0) }
                return .success(.req(subscriptionID: subscriptionID, filters: filters))
            } catch {
                return .failure(Failure(reason: "filter is malformed: \(describe(error))", subscriptionID: subscriptionID))
            }
        case "CLOSE":
            guard elements.count == 2, case .string(let subscriptionID) = elements[1] else {
                return .failure(Failure(reason: "CLOSE needs exactly one subscription id string"))
            }
            return .success(.close(subscriptionID: subscriptionID))
        default:
            return .failure(Failure(reason: "unknown message type \(quoted(type))"))
        }
    }

    /// NIP-01: a non-empty string of at most 64 characters.
    static func subscriptionIDProblem(_ id: String) -> String? {
        if id.isEmpty { return "subscription id is empty" }
        if id.count > maxSubscriptionIDLength { return "subscription id is longer than \(maxSubscriptionIDLength) characters" }
        return nil
    }

    /// The `id` member of something event-shaped, when it is a well-formed event id.
    private static func readableID(_ value: JSONValue) -> EventID? {
        guard case .string(let text)? = value["id"], text.utf8.count == 64,
              text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else { return nil }
        return try? EventID(hex: text)
    }

    /// A NostrError in the words a client can act on.
    static func describe(_ error: Error) -> String {
        guard let error = error as? NostrError else { return "\(error)" }
        switch error {
        case .malformedJSON(let where_): return "malformed JSON (\(where_))"
        case .expectedObject: return "not a JSON object"
        case .missingField(let field): return "missing \(field)"
        case .invalidField(let field, let reason): return "\(field) \(reason)"
        case .invalidHex(let field, let bytes): return "\(field) is not \(bytes * 2) lowercase hex digits"
        case .kindOutOfRange(let kind): return "kind \(kind) is outside 0…65535"
        case .idMismatch: return "the id is not the hash of the event"
        case .invalidSignature: return "the signature does not verify"
        case .invalidPublicKey: return "pubkey is not a valid secp256k1 key"
        case .invalidFilter(let why): return why
        default: return "\(error)"
        }
    }

    /// At most 32 printable characters of an untrusted name, for error text.
    static func quoted(_ text: String) -> String {
        let shown = String(text.unicodeScalars.prefix(32).map { $0.isASCII && $0.value >= 0x20 ? Character($0) : "?" })
        return "\"\(shown)\(text.unicodeScalars.count > 32 ? "…" : "")\""
    }
}
