import Foundation
import HummingbirdWebSocket
import Logging
import Nostr

/// Serves one WebSocket connection: sends the NIP-42 challenge, reads messages in order and
/// answers each, and writes through the connection's outbox. Bad input is answered (NOTICE,
/// `OK false`, `CLOSED`) and never ends anything but, at worst, this one connection.
struct ConnectionHandler: Sendable {
    let configuration: RelayServerConfiguration
    let store: EventStore
    let hub: ConnectionHub
    let keyLimiter: KeyedRateLimiter<PublicKey>
    /// URLs accepted in a NIP-42 `relay` tag (known once the port is bound).
    let relayURLs: LockedValue<[String]>
    let clock: @Sendable () -> Int64
    let logger: Logger

    func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, from address: ClientAddress = ClientAddress(nil)) async throws {
        let limits = configuration.limits
        let counted = address.isLoopback && !limits.limitLoopback ? nil : address.host
        let made = hub.register(from: counted) { number in
            ClientConnection(number: number, challenge: Self.makeChallenge(), limits: limits, now: MonotonicClock.now())
        }
        let connection: ClientConnection
        switch made {
        case .success(let registered):
            connection = registered
        case .failure(.tooManyConnections):
            try? await outbound.write(.text(RelayMessage.notice("blocked: this relay has reached its \(limits.maxConnections) connections; try again later").jsonString))
            try? await outbound.close(.unknown(1013), reason: "too many connections")
            return
        case .failure(.tooManyFromAddress):
            logger.info("refused a connection: too many from one address", metadata: ["limit": "\(limits.maxConnectionsPerIP)"])
            try? await outbound.write(.text(RelayMessage.notice("blocked: at most \(limits.maxConnectionsPerIP) connections from one address").jsonString))
            try? await outbound.close(.unknown(1013), reason: "too many connections from this address")
            return
        }
        defer { hub.remove(connection) }
        connection.send(.auth(challenge: connection.challenge))

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await text in connection.outgoing {
                    try await outbound.write(.text(text))
                    connection.didWrite(bytes: text.utf8.count)
                }
                if connection.isOverflowed {
                    logger.info("closing a client that reads too slowly", metadata: ["connection": "\(connection.number)"])
                    try await outbound.close(.policyViolation, reason: "too slow: the outgoing queue is full")
                }
            }
            var failure: Error?
            do {
                for try await message in inbound.messages(maxSize: configuration.maxMessageBytes) {
                    await handle(message, on: connection)
                }
            } catch {
                // The frame layer refused something (e.g. a message over the size ceiling) or
                // the connection broke: say why, in case the client can still read it.
                connection.send(.notice("error: closing the connection (\(error))"))
                failure = error
            }
            connection.finishOutbox()
            try? await group.waitForAll()
            if let failure { throw failure }
        }
    }

    // MARK: - Messages

    func handle(_ message: WebSocketMessage, on connection: ClientConnection) async {
        guard case .text(let text) = message else {
            connection.send(.notice("invalid: binary frames are not Nostr messages"))
            return
        }
        let bytes = Array(text.utf8)
        switch IncomingMessage.decode(bytes) {
        case .failure(let failure):
            if let id = failure.eventID {
                connection.send(.ok(eventID: id, accepted: false, message: "invalid: \(failure.reason)"))
            } else if let subscriptionID = failure.subscriptionID {
                connection.send(.closed(subscriptionID: subscriptionID, message: "invalid: \(failure.reason)"))
            } else {
                connection.send(.notice("invalid: \(failure.reason)"))
            }
        case .success(.event(let event)):
            await publish(event, on: connection)
        case .success(.req(let subscriptionID, let filters)):
            await subscribe(subscriptionID, filters: filters, on: connection)
        case .success(.close(let subscriptionID)):
            connection.close(subscriptionID)
        case .success(.auth(let event)):
            authenticate(event, on: connection)
        case .success(.count(let subscriptionID)):
            connection.send(.closed(subscriptionID: subscriptionID, message: "error: COUNT (NIP-45) is not supported"))
        }
    }

    private func publish(_ unverified: UnverifiedEvent, on connection: ClientConnection) async {
        let id = unverified.id
        func answer(_ accepted: Bool, _ text: String) {
            connection.send(.ok(eventID: id, accepted: accepted, message: text))
        }
        guard connection.takeEventToken(now: MonotonicClock.now()) else {
            return answer(false, "rate-limited: at most \(configuration.limits.eventsPerMinute) events per minute per connection")
        }
        let event: Event
        do {
            event = try unverified.verified()
        } catch {
            return answer(false, "invalid: \(IncomingMessage.describe(error))")
        }
        let json = event.jsonBytes
        let now = clock()
        let authenticated = connection.authenticated
        let admission = EventAdmission.check(event, size: json.count, now: now, authenticated: authenticated, configuration: configuration)
        guard case .accept(let ephemeral) = admission else {
            if case .refuse(_, _, true) = admission { connection.send(.auth(challenge: connection.challenge)) }
            return answer(false, admission.text ?? "error: refused")
        }
        guard keyLimiter.take(event.pubkey, now: MonotonicClock.now()) else {
            return answer(false, "rate-limited: at most \(configuration.limits.eventsPerMinutePerKey) events per minute per key")
        }
        if ephemeral {
            hub.broadcast(event, json: json)
            return answer(true, "")
        }
        do {
            let mailbox = MailboxQuota(configuration.limits)
            let outcome = try await store.run {
                try EventStore.save(event, json: json, receivedAt: now, authenticated: authenticated, mailbox: mailbox, in: $0)
            }
            switch outcome {
            case .stored:
                hub.broadcast(event, json: json)
                answer(true, "")
            case .duplicate:
                answer(true, "duplicate: already have this event")
            case .superseded:
                answer(true, "duplicate: a newer version of this event is stored")
            case .deleted:
                answer(false, "blocked: this event was deleted by its author")
            case .wrapAlreadyRead:
                answer(true, "duplicate: already have this event")
            case .mailboxFull:
                answer(false, "rate-limited: mailbox full")
            case .relayMailboxFull:
                answer(false, "rate-limited: the relay holds all the gift wraps it can")
            case .deletedWraps:
                // Applied, neither stored nor broadcast: see `SaveOutcome.deletedWraps`.
                answer(true, "")
            case .wrapDeletionNeedsAuthentication:
                // Refused rather than stored as a plain NIP-09 deletion that matches nothing:
                // an `OK true` would tell the recipient its mailbox was emptied when it was not,
                // and the stored event would show everyone which wrap ids it received.
                connection.send(.auth(challenge: connection.challenge))
                answer(false, "auth-required: gift wraps are deleted only by their recipient, authenticated as such")
            }
        } catch {
            logger.error("could not store an event", metadata: ["error": "\(error)"])
            answer(false, "error: could not store the event")
        }
    }

    private func subscribe(_ subscriptionID: String, filters: [Filter], on connection: ClientConnection) async {
        func refuse(_ text: String) {
            connection.send(.closed(subscriptionID: subscriptionID, message: text))
        }
        guard connection.takeRequestToken(now: MonotonicClock.now()) else {
            return refuse("rate-limited: at most \(configuration.limits.requestsPerMinute) requests per minute per connection")
        }
        let authenticated = connection.authenticated
        let admission = RequestAdmission.check(filters, authenticated: authenticated, configuration: configuration)
        if case .refuse(_, _, let challenge) = admission {
            connection.close(subscriptionID)
            if challenge { connection.send(.auth(challenge: connection.challenge)) }
            return refuse(admission.text ?? "error: refused")
        }
        guard let generation = connection.open(subscriptionID, filters: filters, limit: configuration.limits.maxSubscriptions) else {
            return refuse("blocked: at most \(configuration.limits.maxSubscriptions) open subscriptions per connection")
        }
        let limit = configuration.limits.queryLimit
        let now = clock()
        let visibleTo = Set(authenticated.map(\.hex))
        do {
            let stored = try await store.run { try EventStore.query(filters, limit: limit, now: now, authenticated: visibleTo, in: $0) }
            connection.finishCatchingUp(subscriptionID, generation: generation, stored: stored)
        } catch {
            logger.error("could not query events", metadata: ["error": "\(error)"])
            connection.closeIfCurrent(subscriptionID, generation: generation)
            refuse("error: could not query stored events")
        }
    }

    private func authenticate(_ unverified: UnverifiedEvent, on connection: ClientConnection) {
        let id = unverified.id
        let limits = configuration.limits
        guard connection.takeAuthToken(now: MonotonicClock.now()) else {
            return connection.send(.ok(eventID: id, accepted: false, message: "rate-limited: at most \(limits.authPerMinute) AUTH messages per minute"))
        }
        let event: Event
        do {
            event = try unverified.verified()
        } catch {
            return connection.send(.ok(eventID: id, accepted: false, message: "invalid: \(IncomingMessage.describe(error))"))
        }
        guard event.jsonBytes.count <= limits.maxAuthEventBytes else {
            return connection.send(.ok(eventID: id, accepted: false, message: "invalid: an AUTH event is at most \(limits.maxAuthEventBytes) bytes"))
        }
        let now = clock()
        var firstProblem: Error?
        for url in relayURLs.get() {
            do {
                let key = try NIP42.validate(event, challenge: connection.challenge, relayURL: url, now: now)
                guard connection.authenticate(key) else {
                    return connection.send(.ok(eventID: id, accepted: false, message: "blocked: at most \(limits.maxAuthKeys) keys per connection"))
                }
                logger.debug("authenticated", metadata: ["connection": "\(connection.number)"])
                return connection.send(.ok(eventID: id, accepted: true, message: ""))
            } catch {
                if firstProblem == nil { firstProblem = error }
                // Only a relay-tag mismatch is worth trying against the next URL.
                guard case NostrError.invalidField("relay tag", _) = error else { break }
            }
        }
        let reason = firstProblem.map { IncomingMessage.describe($0) } ?? "no relay URL configured"
        connection.send(.ok(eventID: id, accepted: false, message: "invalid: \(reason)"))
    }

    /// 16 random bytes as hex: unguessable, so an AUTH event signed for one connection is
    /// useless on another.
    static func makeChallenge() -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
