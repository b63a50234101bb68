import Foundation
import Logging
import Nostr

/// One relay of a pool: its connection (opened on demand, re-opened with backoff while live
/// subscriptions need it), the subscriptions sent on it, the OKs we wait for, and NIP-42.
///
/// Everything the relay sends is decoded here, and every event is verified (id and
/// signature) and checked against its subscription's filters before a sink sees it; what
/// fails is reported as an error and dropped.
actor RelaySession {
    struct OKAnswer: Sendable, Equatable {
        let accepted: Bool
        let message: String
    }

    private struct Subscription {
        /// The filters as the owner asked; every delivered event must match one.
        let filters: [Filter]
        /// What the latest REQ carried (the resumed `since` after a reconnect).
        var sentFilters: [Filter]
        let sink: SessionSink
        /// Live subscriptions outlast connections; fetch pages do not.
        let live: Bool
        var sentOnGeneration: Int?
        var lastSeenCreatedAt: Int64?
        var eoseAt: Int64?
        var authRetried = false
    }

    private enum AuthState {
        case none
        case inFlight(challenge: String, done: OneShot<Void>)
        case authenticated(challenge: String)
    }

    nonisolated let url: RelayURL
    private let configuration: RelayConfiguration
    private let authKeys: Keys?
    private let logger: Logger

    private var connection: RelayConnection?
    /// Counts connections, so signals from a stale one are ignored.
    private var generation = 0
    /// The connection attempt in progress, shared by everyone who needs the connection.
    private var connecting: OneShot<RelayConnection>?
    private var reconnectLoop: Task<Void, Never>?
    private var reconnectToken = 0
    private var backoff: Backoff
    private var backoffResetOnGeneration = 0
    /// Since when connecting here keeps failing (nil once a connection opens): tells a relay
    /// that went away during an operation from one that was down before it began.
    private var unreachableSince: ContinuousClock.Instant?
    private var subscriptions: [String: Subscription] = [:]
    /// In send order: some relays answer a refusal with an empty event id.
    private var pendingOKs: [(id: EventID, answer: OneShot<OKAnswer>)] = []
    private var challenge: String?
    private var challengeArrived = OneShot<Void>()
    private var auth: AuthState = .none
    private var isShutDown = false
    private var rng = SystemRandomNumberGenerator()

    init(url: RelayURL, authKeys: Keys?, configuration: RelayConfiguration, logger: Logger) {
        self.url = url
        self.authKeys = authKeys
        self.configuration = configuration
        self.backoff = configuration.backoff
        var logger = logger
        logger[metadataKey: "relay"] = .string(url.description)
        self.logger = logger
    }

    // MARK: - Publishing

    /// Sends `event` and waits for the relay's OK; after `OK false "auth-required: …"`
    /// authenticates (NIP-42) and sends it once more. Never throws: failures are results.
    func publish(_ event: Event, timeout: Duration) async -> PublishResult {
        do {
            _ = try await connected(within: timeout)
            var answer = try await sendAwaitingOK(.event(event), id: event.id, timeout: timeout)
            if !answer.accepted, RelayReason.isAuthRequired(answer.message), authKeys != nil {
                logger.debug("publish needs authentication", metadata: ["event": "\(event.id.hex)"])
                try await authenticate()
                answer = try await sendAwaitingOK(.event(event), id: event.id, timeout: timeout)
            }
            return PublishResult(url: url.description, accepted: answer.accepted, message: answer.message)
        } catch {
            let failure = Self.relayError(error)
            return PublishResult(url: url.description, accepted: false, message: failure.description, error: failure)
        }
    }

    /// Sends a text message as is (for callers that already hold serialized JSON).
    func sendRaw(_ text: String, timeout: Duration) async throws {
        let connection = try await connected(within: timeout)
        try await connection.send(text)
    }

    private func sendAwaitingOK(_ message: ClientMessage, id: EventID, timeout: Duration) async throws -> OKAnswer {
        guard let connection else { throw RelayClientError.connectionClosed("not connected") }
        let answer = OneShot<OKAnswer>()
        pendingOKs.append((id, answer))
        defer { pendingOKs.removeAll { $0.answer === answer } }
        try await connection.send(message.jsonString)
        return try await answer.value(timeout: timeout, waitingFor: "OK from \(url)")
    }

    // MARK: - Subscriptions

    /// Registers a subscription and sends its REQ now if connected. A live subscription
    /// connects (and keeps reconnecting) as needed; a page requires a connection.
    func subscribe(id: String, filters: [Filter], sink: SessionSink, live: Bool) async throws {
        guard !isShutDown else { throw RelayClientError.shutDown }
        guard live || connection != nil else { throw RelayClientError.connectionClosed("not connected") }
        subscriptions[id] = Subscription(filters: filters, sentFilters: filters, sink: sink, live: live)
        if connection != nil {
            await sendREQ(id)
        } else if connecting == nil, reconnectLoop == nil {
            Task { _ = try? await self.ensureConnected() }
        }
    }

    /// Forgets a subscription and sends CLOSE if the relay has it.
    func unsubscribe(id: String) async {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        if let connection, subscription.sentOnGeneration == generation {
            try? await connection.send(ClientMessage.close(subscriptionID: id).jsonString)
        }
        if !hasLiveSubscriptions {
            reconnectLoop?.cancel()
            reconnectLoop = nil
        }
    }

    /// One REQ until EOSE, then CLOSE: the events (verified, matching) and what was dropped.
    /// `timeout` bounds connecting and each wait without progress.
    func page(_ filters: [Filter], timeout: Duration) async throws -> (events: [Event], problems: [RelayClientError]) {
        _ = try await connected(within: timeout)
        let collector = PageCollector()
        let id = SubscriptionID.make()
        try await subscribe(id: id, filters: filters, sink: collector, live: false)
        do {
            let result = try await collector.waitForEnd(idleTimeout: timeout)
            await unsubscribe(id: id)
            return result
        } catch {
            await unsubscribe(id: id)
            throw Self.relayError(error)
        }
    }

    /// Whether waiting for this relay may pay off for an operation that began at `start`:
    /// this pool has reached it before, and it was not already failing when the operation began.
    func mayComeBack(forOperationStartedAt start: ContinuousClock.Instant) -> Bool {
        guard generation > 0 else { return false }
        guard let unreachableSince else { return true }
        return unreachableSince >= start
    }

    private var hasLiveSubscriptions: Bool { subscriptions.values.contains { $0.live } }

    private func sendREQ(_ id: String) async {
        guard let connection, var subscription = subscriptions[id], subscription.sentOnGeneration != generation else { return }
        let resumed = subscription.sentOnGeneration != nil
        if resumed {
            subscription.sentFilters = Resubscription.filters(
                subscription.filters,
                lastSeenCreatedAt: subscription.lastSeenCreatedAt, eoseAt: subscription.eoseAt,
                margin: configuration.resubscribeMargin, giftWrapMargin: configuration.giftWrapResubscribeMargin)
            subscription.authRetried = false
        }
        subscription.sentOnGeneration = generation
        subscriptions[id] = subscription
        do {
            try await connection.send(ClientMessage.req(subscriptionID: id, filters: subscription.sentFilters).jsonString)
            if resumed { subscription.sink.receive(.reconnected, from: url) }
        } catch {
            // The connection is going away; its end re-sends live subscriptions.
            logger.debug("REQ not sent", metadata: ["error": "\(error)"])
        }
    }

    // MARK: - Connection lifecycle

    private func connected(within timeout: Duration) async throws -> RelayConnection {
        try await withTimeout(min(timeout, configuration.connectTimeout), waitingFor: "connecting to \(url)") {
            try await self.ensureConnected()
        }
    }

    private func ensureConnected() async throws -> RelayConnection {
        guard !isShutDown else { throw RelayClientError.shutDown }
        if let connection { return connection }
        if let connecting { return try await connecting.value() }
        let attempt = OneShot<RelayConnection>()
        connecting = attempt
        Task {
            do {
                attempt.succeed(try await self.openConnection())
                self.connectAttemptEnded(attempt, error: nil)
            } catch {
                attempt.fail(error)
                self.connectAttemptEnded(attempt, error: error)
            }
        }
        // Waiting is cancellable (callers bound it); the attempt itself is bounded by connectTimeout.
        return try await attempt.value()
    }

    private func connectAttemptEnded(_ attempt: OneShot<RelayConnection>, error: Error?) {
        if connecting === attempt { connecting = nil }
        if error != nil, unreachableSince == nil { unreachableSince = .now }
        if let error, !isShutDown, hasLiveSubscriptions {
            broadcast(.error(Self.relayError(error)), liveOnly: true)
            startReconnectLoop()
        }
    }

    private func openConnection() async throws -> RelayConnection {
        let fresh = RelayConnection(url: url, configuration: configuration, logger: logger)
        try await fresh.connect()
        guard !isShutDown else {
            await fresh.close()
            throw RelayClientError.shutDown
        }
        generation += 1
        let current = generation
        connection = fresh
        unreachableSince = nil
        challenge = nil
        challengeArrived = OneShot<Void>()
        auth = .none
        Task { [weak self] in
            for await item in fresh.inbound {
                guard let self else { return }
                await self.handle(item, generation: current)
            }
        }
        logger.debug("connected", metadata: ["generation": "\(current)"])
        for id in subscriptions.keys where subscriptions[id]?.live == true {
            await sendREQ(id)
        }
        return fresh
    }

    private func connectionEnded(_ reason: RelayClientError) {
        connection = nil
        let pending = pendingOKs
        pendingOKs.removeAll()
        for item in pending { item.answer.fail(reason) }
        if case .inFlight(_, let done) = auth { done.fail(reason) }
        auth = .none
        challenge = nil
        challengeArrived.fail(reason)
        for (id, subscription) in subscriptions where !subscription.live {
            subscriptions[id] = nil
            subscription.sink.receive(.connectionLost(reason), from: url)
        }
        broadcast(.connectionLost(reason), liveOnly: true)
        if !isShutDown, hasLiveSubscriptions { startReconnectLoop() }
    }

    private func startReconnectLoop() {
        guard reconnectLoop == nil, !isShutDown else { return }
        reconnectToken += 1
        let token = reconnectToken
        reconnectLoop = Task { await self.runReconnectLoop(token: token) }
    }

    private func runReconnectLoop(token: Int) async {
        defer { if token == reconnectToken { reconnectLoop = nil } }
        while !isShutDown, hasLiveSubscriptions, connection == nil {
            let delay = backoff.nextDelay(using: &rng)
            logger.debug("reconnecting", metadata: ["delay": "\(delay)", "attempt": "\(backoff.attempts)"])
            do { try await Task.sleep(for: delay) } catch { return }
            guard !isShutDown, hasLiveSubscriptions, !Task.isCancelled else { return }
            // A failure is reported to the subscriptions by connectAttemptEnded.
            if (try? await ensureConnected()) != nil { return }
        }
    }

    /// Stops everything: no reconnects, pending waits fail with `shutDown`, socket closed.
    func shutDown() async {
        isShutDown = true
        reconnectLoop?.cancel()
        reconnectLoop = nil
        let closing = connection
        connectionEnded(.shutDown)
        subscriptions.removeAll()
        if let closing { await closing.close() }
    }

    // MARK: - Inbound

    private func handle(_ item: RelayConnection.Inbound, generation: Int) {
        guard generation == self.generation, connection != nil else { return }
        switch item {
        case .text(let text):
            handleText(text)
        case .binary(let count):
            broadcast(.error(.malformedMessage("binary message of \(count) bytes (NIP-01 is text)")))
        case .closed(let reason):
            logger.debug("connection ended", metadata: ["reason": "\(reason)"])
            connectionEnded(reason)
        }
    }

    private func handleText(_ text: String) {
        let message: RelayMessage
        do {
            message = try RelayMessage(json: text)
        } catch {
            logger.debug("malformed relay message", metadata: ["error": "\(error)"])
            broadcast(.error(.malformedMessage("\(error)")))
            return
        }
        if backoffResetOnGeneration != generation {
            // The relay speaks NIP-01 on this connection: forget earlier failures.
            backoffResetOnGeneration = generation
            backoff.reset()
        }
        switch message {
        case .event(let subscriptionID, let unverified):
            deliver(unverified, subscriptionID: subscriptionID)
        case .ok(let eventID, let accepted, let text):
            let answer = OKAnswer(accepted: accepted, message: text)
            if let eventID {
                // Everyone waiting for this event (it may be published twice at once).
                let waiting = pendingOKs.filter { $0.id == eventID }
                pendingOKs.removeAll { $0.id == eventID }
                for item in waiting { item.answer.succeed(answer) }
            } else if !pendingOKs.isEmpty {
                // No id (some relays refuse that way): relays answer in order, so the oldest.
                pendingOKs.removeFirst().answer.succeed(answer)
            }
        case .eose(let subscriptionID):
            guard var subscription = subscriptions[subscriptionID] else { return }
            subscription.eoseAt = Self.now()
            subscriptions[subscriptionID] = subscription
            subscription.sink.receive(.eose, from: url)
        case .closed(let subscriptionID, let text):
            relayClosed(subscriptionID, message: text)
        case .notice(let text):
            logger.debug("notice", metadata: ["notice": "\(text.prefix(200))"])
            broadcast(.notice(text))
        case .auth(let newChallenge):
            challenge = newChallenge
            challengeArrived.succeed(())
            if authKeys != nil, configuration.authenticateWhenChallenged {
                Task { try? await self.authenticate() }
            }
        }
    }

    private func deliver(_ unverified: UnverifiedEvent, subscriptionID: String) {
        guard var subscription = subscriptions[subscriptionID] else { return }
        let event: Event
        do {
            event = try unverified.verified()
        } catch {
            subscription.sink.receive(.error(.invalidEvent("\(unverified.id.hex): \(error)")), from: url)
            return
        }
        guard subscription.filters.contains(where: { $0.matches(event) }) else {
            subscription.sink.receive(.error(.invalidEvent("\(event.id.hex): does not match the subscription")), from: url)
            return
        }
        // A relay's clock (or a forged created_at) must not push the resume point into the future.
        let seen = min(event.createdAt, Self.now())
        subscription.lastSeenCreatedAt = max(subscription.lastSeenCreatedAt ?? seen, seen)
        subscriptions[subscriptionID] = subscription
        subscription.sink.receive(.event(event), from: url)
    }

    private func relayClosed(_ subscriptionID: String, message: String) {
        guard let subscription = subscriptions[subscriptionID] else { return }
        if RelayReason.isAuthRequired(message), authKeys != nil, !subscription.authRetried {
            subscriptions[subscriptionID]?.authRetried = true
            let current = generation
            Task { await self.authenticateAndResend(subscriptionID, relayMessage: message, generation: current) }
            return
        }
        subscriptions[subscriptionID] = nil
        subscription.sink.receive(.closed(message), from: url)
    }

    private func authenticateAndResend(_ subscriptionID: String, relayMessage: String, generation current: Int) async {
        do {
            try await authenticate()
        } catch {
            guard let subscription = subscriptions.removeValue(forKey: subscriptionID) else { return }
            subscription.sink.receive(.error(Self.relayError(error)), from: url)
            subscription.sink.receive(.closed(relayMessage), from: url)
            return
        }
        guard current == generation, let connection, let subscription = subscriptions[subscriptionID] else { return }
        logger.debug("authenticated; re-sending subscription")
        try? await connection.send(ClientMessage.req(subscriptionID: subscriptionID, filters: subscription.sentFilters).jsonString)
    }

    private func broadcast(_ signal: SessionSignal, liveOnly: Bool = false) {
        for subscription in subscriptions.values where !liveOnly || subscription.live {
            subscription.sink.receive(signal, from: url)
        }
    }

    // MARK: - NIP-42

    /// Answers the relay's latest challenge with a kind-22242 event signed by the identity
    /// key and waits for its OK. Concurrent callers share one attempt per challenge.
    func authenticate() async throws {
        guard let keys = authKeys else {
            throw RelayClientError.authenticationFailed("no identity key to authenticate with")
        }
        if challenge == nil {
            // The relay may send its AUTH just after the refusal that made us ask.
            try await challengeArrived.value(timeout: configuration.authTimeout, waitingFor: "an AUTH challenge from \(url)")
        }
        guard let challenge else { throw RelayClientError.authenticationFailed("the relay sent no challenge") }
        switch auth {
        case .authenticated(let done) where done == challenge:
            return
        case .inFlight(let pending, let done) where pending == challenge:
            try await done.value(timeout: configuration.authTimeout, waitingFor: "AUTH OK from \(url)")
            return
        default:
            break
        }
        let done = OneShot<Void>()
        auth = .inFlight(challenge: challenge, done: done)
        do {
            let event = try NIP42.authEvent(
                challenge: challenge, relayURL: url.description, createdAt: Self.now(), keys: keys, rng: &rng)
            let answer = try await sendAwaitingOK(.auth(event), id: event.id, timeout: configuration.authTimeout)
            guard answer.accepted else { throw RelayClientError.authenticationFailed(answer.message) }
            if case .inFlight(let pending, _) = auth, pending == challenge { auth = .authenticated(challenge: challenge) }
            logger.debug("authenticated")
            done.succeed(())
        } catch {
            if case .inFlight(let pending, _) = auth, pending == challenge { auth = .none }
            let failure: RelayClientError
            switch Self.relayError(error) {
            case .authenticationFailed(let why): failure = .authenticationFailed(why)
            case let other: failure = .authenticationFailed(other.description)
            }
            done.fail(failure)
            throw failure
        }
    }

    // MARK: - Helpers

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    static func relayError(_ error: Error) -> RelayClientError {
        if let error = error as? RelayClientError { return error }
        if error is CancellationError { return .timeout("cancelled") }
        return .connectionClosed("\(error)")
    }
}

/// Subscription ids: random, short, well under NIP-01's 64 characters.
enum SubscriptionID {
    static func make() -> String {
        var rng = SystemRandomNumberGenerator()
        return "burrow-" + Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }
}
