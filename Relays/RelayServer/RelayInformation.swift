import Nostr

/// The NIP-11 relay information document, served on an HTTP GET with
/// `Accept: application/nostr+json`.
enum RelayInformation {
    static let software = "burrow-relay"
    static let version = "0.1.0"
    /// NIPs this relay implements.
    static let supportedNIPs = [1, 9, 11, 40, 42, 70]

    static func document(_ configuration: RelayServerConfiguration) -> String {
        let info = configuration.information
        let limits = configuration.limits
        var members: [JSONMember] = [
            JSONMember("name", .string(info.name)),
            JSONMember("description", .string(info.description)),
        ]
        if let pubkey = info.pubkey { members.append(JSONMember("pubkey", .string(pubkey))) }
        if let contact = info.contact { members.append(JSONMember("contact", .string(contact))) }
        members += [
            JSONMember("supported_nips", .array(supportedNIPs.map { .integer(Int64($0)) })),
            JSONMember("software", .string(software)),
            JSONMember("version", .string(version)),
            JSONMember("limitation", .object([
                JSONMember("max_message_length", .integer(Int64(configuration.maxMessageBytes))),
                JSONMember("max_subscriptions", .integer(Int64(limits.maxSubscriptions))),
                JSONMember("max_filters", .integer(Int64(limits.maxFilters))),
                JSONMember("max_limit", .integer(Int64(limits.queryLimit))),
                JSONMember("default_limit", .integer(Int64(limits.queryLimit))),
                JSONMember("max_subid_length", .integer(Int64(IncomingMessage.maxSubscriptionIDLength))),
                JSONMember("created_at_upper_limit", .integer(Int64(limits.maxFutureSeconds))),
                JSONMember("auth_required", .bool(configuration.auth.read || configuration.auth.write)),
                JSONMember("restricted_writes", .bool(configuration.auth.write)),
                JSONMember("payment_required", .bool(false)),
            ])),
        ]
        if !configuration.retention.isEmpty {
            members.append(JSONMember("retention", .array(configuration.retention.map { rule in
                .object([
                    JSONMember("kinds", .array(rule.kinds.map { .integer(Int64($0)) })),
                    JSONMember("time", .integer(Int64(rule.maxAgeSeconds))),
                ])
            })))
        }
        return JSONValue.object(members).jsonString
    }
}
