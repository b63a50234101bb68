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
        if event.kind == Kind.giftWrap, let problem = GiftWrapMailbox.recipientProblem(event) {
            return .refuse(prefix: RelayReason.invalid, message: problem)
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

/// The mailbox rules for gift wraps (Docs/protocols/pigeon-dm.md 6.3) that need no database: a wrap is
/// kept for exactly one recipient, so quotas, deletion by the recipient and visibility all
/// refer to one key, and a wrap can never be made to count against (or be deleted by)
/// someone it does not belong to.
enum GiftWrapMailbox {
    /// How long a wrap is kept after it arrived, whatever its `expiration` says (spec 6.3:
    /// 30 days; senders set the same expiry, so a recipient offline longer loses nothing a
    /// sender still retries).
    static let lifetimeSeconds: Int64 = 30 * 24 * 60 * 60

    /// Why `wrap` (kind 1059) cannot be kept, or nil: it must carry exactly one `p` tag, whose
    /// value is a public key as 64 lowercase hex digits (the form NIP-42 keys are compared in,
    /// so the recipient can both read it and delete it).
    static func recipientProblem(_ wrap: Event) -> String? {
        let recipients = wrap.tags.filter { $0.first == "p" }
        guard recipients.count == 1, let tag = recipients.first else {
            return "a gift wrap names exactly one recipient (one p tag), this one has \(recipients.count)"
        }
        guard tag.count >= 2, recipient(hex: tag[1]) != nil else {
            return "a gift wrap's p tag names its recipient's public key as 64 lowercase hex digits"
        }
        return nil
    }

    /// The recipient of a wrap that passed `recipientProblem`.
    static func recipient(of wrap: Event) -> PublicKey? {
        guard let tag = wrap.tags.first(where: { $0.first == "p" }), tag.count >= 2 else { return nil }
        return recipient(hex: tag[1])
    }

    private static func recipient(hex: String) -> PublicKey? {
        guard let key = try? PublicKey(hex: hex), key.hex == hex else { return nil }
        return key
    }
}
