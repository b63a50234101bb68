import Nostr

/// What the relay decides about a verified event or a subscription request, before any I/O:
/// pure functions of the input, the clock value, who the connection authenticated as, and the
/// configuration. The connection carries the decision out.
enum Admission: Equatable {
    /// Refused: answer `OK false` / `CLOSED` with `prefix: message`. With `challenge`, send
    /// the connection's AUTH challenge first (the client can authenticate and retry).
    case refuse(prefix: String, message: String, challenge: Bool = false)
    /// Accepted: store it (and deliver it live) unless it is ephemeral.
    case accept(ephemeral: Bool)

    var text: String? {
        if case .refuse(let prefix, let message, _) = self { return "\(prefix): \(message)" }
        return nil
    }
}

enum EventAdmission {
    /// Checks an event whose id and signature are already verified (`Event`).
    /// `size` is the byte length of its JSON.
    static func check(
        _ event: Event, size: Int, now: Int64, authenticated: Set<PublicKey>, configuration: RelayServerConfiguration
    ) -> Admission {
        let limits = configuration.limits
        if event.kind == Kind.clientAuthentication {
            return .refuse(prefix: RelayReason.invalid, message: "kind 22242 events are sent with AUTH, not published")
        }
        if size > limits.maxEventBytes {
            return .refuse(prefix: RelayReason.invalid, message: "event is \(size) bytes, more than the \(limits.maxEventBytes) this relay accepts")
        }
        if event.createdAt > now + Int64(limits.maxFutureSeconds) {
            return .refuse(prefix: RelayReason.invalid, message: "created_at is more than \(limits.maxFutureSeconds) seconds in the future")
        }
        if event.expiration != nil, event.isExpired(now: now) {
            return .refuse(prefix: RelayReason.invalid, message: "event has expired (NIP-40)")
        }
        if let age = configuration.maxAge(ofKind: event.kind), event.createdAt < now - Int64(age) {
            return .refuse(prefix: RelayReason.blocked, message: "this relay keeps kind \(event.kind) for \(age) seconds and the event is older")
        }
        if configuration.auth.write, authenticated.isEmpty {
            return .refuse(prefix: RelayReason.authRequired, message: "this relay accepts events only from authenticated clients", challenge: true)
        }
        if isProtected(event), !authenticated.contains(event.pubkey) {
            // NIP-70: only its author may publish a protected event, and must prove it.
            return authenticated.isEmpty
                ? .refuse(prefix: RelayReason.authRequired, message: "this protected event may only be published by its author", challenge: true)
                : .refuse(prefix: RelayReason.restricted, message: "this protected event may only be published by its author")
        }
        return .accept(ephemeral: event.kindClass == .ephemeral)
    }

    /// NIP-70: a `["-"]` tag marks an event its author wants published by themselves only.
    static func isProtected(_ event: Event) -> Bool {
        event.tags.contains { $0.first == "-" }
    }
}

enum RequestAdmission {
    /// Checks a REQ's filters against the limits and the gift-wrap rule: kind 1059 is served
    /// only to the authenticated key named in its `p` tag, so a filter asking for kind 1059
    /// needs authentication and a `#p` naming only keys this connection proved.
    static func check(
        _ filters: [Filter], authenticated: Set<PublicKey>, configuration: RelayServerConfiguration
    ) -> Admission {
        let limits = configuration.limits
        if filters.count > limits.maxFilters {
            return .refuse(prefix: RelayReason.invalid, message: "a REQ may carry at most \(limits.maxFilters) filters")
        }
        for filter in filters where valueCount(filter) > limits.maxFilterValues {
            return .refuse(prefix: RelayReason.invalid, message: "a filter may hold at most \(limits.maxFilterValues) values")
        }
        if configuration.auth.read, authenticated.isEmpty {
            return .refuse(prefix: RelayReason.authRequired, message: "this relay serves only authenticated clients", challenge: true)
        }
        let authenticatedHex = Set(authenticated.map(\.hex))
        for filter in filters where filter.kinds?.contains(Kind.giftWrap) == true {
            if authenticated.isEmpty {
                return .refuse(prefix: RelayReason.authRequired, message: "gift wraps are served only to their authenticated recipient", challenge: true)
            }
            guard let recipients = filter.tags["p"], !recipients.isEmpty, recipients.allSatisfy(authenticatedHex.contains) else {
                return .refuse(prefix: RelayReason.restricted, message: "gift wraps are served only to their recipient: ask with #p naming the key you authenticated as")
            }
        }
        return .accept(ephemeral: false)
    }

    static func valueCount(_ filter: Filter) -> Int {
        (filter.ids?.count ?? 0) + (filter.authors?.count ?? 0) + (filter.kinds?.count ?? 0)
            + filter.tags.values.reduce(0) { $0 + $1.count }
    }
}

/// Who may see an event: everyone, except that a gift wrap (kind 1059) is shown only to a
/// connection authenticated as a key its `p` tags name.
enum Visibility {
    static func canSee(kind: Int, tags: [[String]], authenticated: Set<String>) -> Bool {
        guard kind == Kind.giftWrap else { return true }
        return tags.contains { $0.count >= 2 && $0[0] == "p" && authenticated.contains($0[1]) }
    }
}
