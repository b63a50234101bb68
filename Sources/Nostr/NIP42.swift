/// NIP-42: a client proves to a relay that it holds a key by signing an ephemeral kind-22242
/// event that names the relay and repeats the relay's challenge. The clock and the signing
/// randomness are passed in, like everywhere in this module.
public enum NIP42 {
    public static let kind = Kind.clientAuthentication

    /// How far an auth event's created_at may be from a relay's clock (NIP-42 suggests ~10 min).
    public static let defaultWindow: Int64 = 600

    /// Builds and signs the `["AUTH", …]` event answering `challenge` from the relay at
    /// `relayURL`, with tags `["relay", relayURL]` and `["challenge", challenge]`.
    public static func authEvent<R: RandomNumberGenerator>(
        challenge: String, relayURL: String, createdAt: Int64, keys: Keys, rng: inout R
    ) throws -> Event {
        try Event.sign(
            kind: kind, content: "",
            tags: [["relay", relayURL], ["challenge", challenge]],
            createdAt: createdAt, keys: keys, rng: &rng
        )
    }

    /// What a relay checks before it accepts an AUTH event (the signature is already checked:
    /// the argument is an `Event`): the kind, the challenge it issued, its own URL (compared
    /// without case, trailing slash or default port differences), and the time window.
    /// Returns the authenticated public key.
    @discardableResult
    public static func validate(
        _ event: Event, challenge: String, relayURL: String, now: Int64, window: Int64 = defaultWindow
    ) throws -> PublicKey {
        guard event.kind == kind else { throw NostrError.invalidField("kind", reason: "not \(kind)") }
        guard event.firstTagValue("challenge") == challenge else {
            throw NostrError.invalidField("challenge tag", reason: "does not match the challenge")
        }
        guard let relay = event.firstTagValue("relay"), normalize(relay) == normalize(relayURL) else {
            throw NostrError.invalidField("relay tag", reason: "does not name this relay")
        }
        guard abs(event.createdAt - now) <= window else {
            throw NostrError.invalidField("created_at", reason: "outside the \(window)-second window")
        }
        return event.pubkey
    }

    /// `wss://Relay.Example.com:443/` and `wss://relay.example.com` name the same relay.
    static func normalize(_ url: String) -> String {
        var text = Substring(url)
        while text.last == "/" { text = text.dropLast() }
        guard let schemeEnd = text.range(of: "://") else { return text.lowercased() }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<authorityEnd].lowercased()
        let defaultPort = scheme == "wss" ? ":443" : scheme == "ws" ? ":80" : nil
        if let defaultPort, authority.hasSuffix(defaultPort) { authority.removeLast(defaultPort.count) }
        return "\(scheme)://\(authority)\(rest[authorityEnd...])"
    }
}
