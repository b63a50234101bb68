import Foundation
import Logging
import Nostr

/// One relay of a pool: its connection (opened on demand, re-opened with backoff while live
/// subscriptions need it), the subscriptions sent on it, the OKs we wait for, and NIP-42.
///
/// The protocol's decisions live in `RelaySessionState` (sans-I/O, tested without a relay); this
/// actor feeds it what happens, with the clock's reading, and carries out its actions: writing
/// text, telling sinks, answering waiters and running the connection and reconnect tasks.
/// Every event is verified (id and signature) and checked against its subscription's filters
/// before a sink sees it; what fails is reported as an error and dropped.
actor RelaySession {
    typealias OKAnswer = RelaySessionState.OKAnswer

    nonisolated let url: RelayURL
    private let configuration: RelayConfiguration
    private let authKeys: Keys?
    private let logger: Logger

    private var state: RelaySessionState
    private var connection: RelayConnection?
    /// The connection attempt in progress, shared by everyone who needs the connection.
    private var connecting: OneShot<RelayConnection>?
    private var reconnectLoop: Task<Void, Never>?
    private var reconnectToken = 0
    private var sinks: [String: SessionSink] = [:]
    private var okWaiters: [RelaySessionState.OKToken: OneShot<OKAnswer>] = [:]
    private var challengeArrived = OneShot<Void>()
    /// Callers waiting for the AUTH of a challenge another caller is answering.
    private var authWaiters: [String: OneShot<Void>] = [:]
    private var rng = SystemRandomNumberGenerator()

    init(url: RelayURL, authKeys: Keys?, configuration: RelayConfiguration, logger: Logger) {
        self.url = url
        self.authKeys = authKeys
        self.configuration = configuration
        self.state = RelaySessionState(
            settings: .init(configuration: configuration, canAuthenticate: authKeys != nil), backoff: configuration.backoff)
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
        let token = state.expectOK(for: id)
        okWaiters[token] = answer
        defer {
            state.forgetOK(token)
            okWaiters[token] = nil
        }
        try await connection.send(message.jsonString)
        return try await answer.value(timeout: timeout, waitingFor: "OK from \(url)")
    }

    // MARK: - Subscriptions

    /// Registers a subscription and sends its REQ now if connected. A live subscription
    /// connects (and keeps reconnecting) as needed; a page requires a connection.
    func subscribe(id: String, filters: [Filter], sink: SessionSink, live: Bool) async throws {
        let actions = try state.subscribe(id: id, filters: filters, live: live)
        sinks[id] = sink
        await perform(actions)
    }

    /// Forgets a subscription and sends CLOSE if the relay has it.
    func unsubscribe(id: String) async {
        await perform(state.unsubscribe(id: id))
        sinks[id] = nil
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

    /// Whether waiting for this relay may pay off for an operation that began at `start`.
    func mayComeBack(forOperationStartedAt start: ContinuousClock.Instant) -> Bool {
        state.mayComeBack(forOperationStartedAt: start)
    }

    // MARK: - Carrying out the state's actions

    private func perform(_ actions: [RelaySessionState.Action]) async {
        for action in actions {
            switch action {
            case .send(let text):
                guard let connection else { continue }
                do {
                    try await connection.send(text)
                } catch {
                    // The connection is going away; its end re-sends live subscriptions.
                    logger.debug("send failed", metadata: ["error": "\(error)"])
                }
            case .signal(let id, let signal):
                sinks[id]?.receive(signal, from: url)
                if case .closed = signal, state.subscriptions[id] == nil { sinks[id] = nil }
                if case .connectionLost = signal, state.subscriptions[id] == nil { sinks[id] = nil }
            case .answerOK(let token, let answer):
                okWaiters.removeValue(forKey: token)?.succeed(answer)
            case .failOK(let token, let error):
                okWaiters.removeValue(forKey: token)?.fail(error)
            case .challengeArrived:
                challengeArrived.succeed(())
            case .failAuthWaiters(let error):
                challengeArrived.fail(error)
                for waiter in authWaiters.values { waiter.fail(error) }
                authWaiters.removeAll()
            case .authenticate:
                Task { try? await self.authenticate() }
            case .authenticateAndResend(let id, let relayMessage, let generation):
                Task { await self.authenticateAndResend(id, relayMessage: relayMessage, generation: generation) }
            case .connect:
                if connecting == nil, reconnectLoop == nil { Task { _ = try? await self.ensureConnected() } }
            case .startReconnecting:
                startReconnectLoop()
            case .stopReconnecting:
                reconnectLoop?.cancel()
                reconnectLoop = nil
            case .log(let text):
                logger.debug("\(text)")
            }
        }
    }

    // MARK: - Connection lifecycle

    private func connected(within timeout: Duration) async throws -> RelayConnection {
        try await withTimeout(min(timeout, configuration.connectTimeout), waitingFor: "connecting to \(url)") {
            try await self.ensureConnected()
        }
    }

    private func ensureConnected() async throws -> RelayConnection {
        guard !state.isShutDown else { throw RelayClientError.shutDown }
        if let connection { return connection }
        if let connecting { return try await connecting.value() }
        let attempt = OneShot<RelayConnection>()
        connecting = attempt
        Task {
            do {
                attempt.succeed(try await self.openConnection())
                self.connectAttemptEnded(attempt)
            } catch {
                attempt.fail(error)
                self.connectAttemptEnded(attempt)
                await self.perform(self.state.connectFailed(Self.relayError(error), now: .now))
            }
        }
        // Waiting is cancellable (callers bound it); the attempt itself is bounded by connectTimeout.
        return try await attempt.value()
    }

    private func connectAttemptEnded(_ attempt: OneShot<RelayConnection>) {
        if connecting === attempt { connecting = nil }
    }

    private func openConnection() async throws -> RelayConnection {
        let fresh = RelayConnection(url: url, configuration: configuration, logger: logger)
        try await fresh.connect()
        guard !state.isShutDown else {
            await fresh.close()
            throw RelayClientError.shutDown
        }
        connection = fresh
        challengeArrived = OneShot<Void>()
        let actions = state.connectionOpened()
        let current = state.generation
        Task { [weak self] in
            for await item in fresh.inbound {
                guard let self else { return }
                await self.handle(item, generation: current)
            }
        }
        logger.debug("connected", metadata: ["generation": "\(current)"])
        await perform(actions)
        return fresh
    }

    private func startReconnectLoop() {
        guard reconnectLoop == nil, !state.isShutDown else { return }
        reconnectToken += 1
        let token = reconnectToken
        reconnectLoop = Task { await self.runReconnectLoop(token: token) }
    }

    private func runReconnectLoop(token: Int) async {
        defer { if token == reconnectToken { reconnectLoop = nil } }
        while !state.isShutDown, state.hasLiveSubscriptions, connection == nil {
            let delay = state.nextReconnectDelay(using: &rng)
            logger.debug("reconnecting", metadata: ["delay": "\(delay)", "attempt": "\(state.backoff.attempts)"])
            do { try await Task.sleep(for: delay) } catch { return }
            guard !state.isShutDown, state.hasLiveSubscriptions, !Task.isCancelled else { return }
            // A failure is reported to the subscriptions through connectFailed.
            if (try? await ensureConnected()) != nil { return }
        }
    }

    /// Stops everything: no reconnects, pending waits fail with `shutDown`, socket closed.
    func shutDown() async {
        let closing = connection
        connection = nil
        await perform(state.shutDown())
        sinks.removeAll()
        if let closing { await closing.close() }
    }

    // MARK: - Inbound

    private func handle(_ item: RelayConnection.Inbound, generation: Int) async {
        guard generation == state.generation, connection != nil else { return }
        switch item {
        case .text(let text):
            await perform(state.receive(text: text, now: Self.now()))
        case .binary(let count):
            await perform(state.receiveBinary(count: count))
        case .closed(let reason):
            logger.debug("connection ended", metadata: ["reason": "\(reason)"])
            connection = nil
            await perform(state.connectionEnded(reason))
        }
    }

    private func authenticateAndResend(_ subscriptionID: String, relayMessage: String, generation: Int) async {
        do {
            try await authenticate()
        } catch {
            await perform(state.authenticationForSubscriptionFailed(subscriptionID, error: Self.relayError(error), relayMessage: relayMessage))
            return
        }
        logger.debug("authenticated; re-sending subscription")
        await perform(state.resendAfterAuthentication(subscriptionID, generation: generation))
    }

    // MARK: - NIP-42

    /// Answers the relay's latest challenge with a kind-22242 event signed by the identity
    /// key and waits for its OK. Concurrent callers share one attempt per challenge.
    func authenticate() async throws {
        guard let keys = authKeys else {
            throw RelayClientError.authenticationFailed("no identity key to authenticate with")
        }
        if state.authenticationStep() == .awaitChallenge {
            // The relay may send its AUTH just after the refusal that made us ask.
            try await challengeArrived.value(timeout: configuration.authTimeout, waitingFor: "an AUTH challenge from \(url)")
        }
        let challenge: String
        switch state.authenticationStep() {
        case .awaitChallenge:
            throw RelayClientError.authenticationFailed("the relay sent no challenge")
        case .alreadyAuthenticated:
            return
        case .joinInFlight(let pending):
            let waiter = authWaiters[pending] ?? OneShot<Void>()
            authWaiters[pending] = waiter
            try await waiter.value(timeout: configuration.authTimeout, waitingFor: "AUTH OK from \(url)")
            return
        case .start(let fresh):
            challenge = fresh
        }
        state.authenticationStarted(challenge: challenge)
        do {
            let event = try NIP42.authEvent(
                challenge: challenge, relayURL: url.description, createdAt: Self.now(), keys: keys, rng: &rng)
            let answer = try await sendAwaitingOK(.auth(event), id: event.id, timeout: configuration.authTimeout)
            guard answer.accepted else { throw RelayClientError.authenticationFailed(answer.message) }
            state.authenticationEnded(challenge: challenge, accepted: true)
            logger.debug("authenticated")
            authWaiters.removeValue(forKey: challenge)?.succeed(())
        } catch {
            state.authenticationEnded(challenge: challenge, accepted: false)
            let failure: RelayClientError
            switch Self.relayError(error) {
            case .authenticationFailed(let why): failure = .authenticationFailed(why)
            case let other: failure = .authenticationFailed(other.description)
            }
            authWaiters.removeValue(forKey: challenge)?.fail(failure)
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
