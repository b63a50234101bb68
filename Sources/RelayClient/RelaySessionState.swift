import Nostr

/// What a relay session knows and decides, with no I/O: the subscriptions and what their REQs
/// carried, the OKs awaited, EOSE and resume points, NIP-42 state and the reconnect backoff.
///
/// `RelaySession` (an actor) owns one, feeds it what happened (a connection opened or ended, a
/// text arrived, the owner subscribed) with the clock's reading, and carries out the returned
/// actions: writing text, signalling sinks, answering OK waiters, starting tasks. swift-nio-ssh's
/// split of state machine and handler is the model; the state is tested without a relay.
struct RelaySessionState {
    struct OKAnswer: Sendable, Equatable {
        let accepted: Bool
        let message: String
    }

    /// A waiter for one OK, named by the session so its `OneShot` can be found again.
    typealias OKToken = Int

    struct Subscription {
        /// The filters as the owner asked; every delivered event must match one.
        let filters: [Filter]
        /// What the latest REQ carried (the resumed `since` after a reconnect).
        var sentFilters: [Filter]
        /// Live subscriptions outlast connections; fetch pages do not.
        let live: Bool
        var sentOnGeneration: Int?
        var lastSeenCreatedAt: Int64?
        var eoseAt: Int64?
        var authRetried = false
    }

    enum AuthState: Equatable {
        case none
        case inFlight(challenge: String)
        case authenticated(challenge: String)
    }

    /// What `authenticate` should do now.
    enum AuthStep: Equatable {
        /// No challenge yet: wait for the relay's AUTH.
        case awaitChallenge
        /// This challenge was answered and accepted on this connection.
        case alreadyAuthenticated
        /// Another caller is answering this challenge: wait for its outcome.
        case joinInFlight(challenge: String)
        /// Sign and send an AUTH for this challenge.
        case start(challenge: String)
    }

    enum Action {
        /// Write this text on the current connection.
        case send(String)
        /// Tell one subscription's sink.
        case signal(subscriptionID: String, SessionSignal)
        case answerOK(OKToken, OKAnswer)
        case failOK(OKToken, RelayClientError)
        /// The relay sent a challenge: wake whoever waits for one.
        case challengeArrived(String)
        /// The connection ended while waiting for a challenge or an AUTH OK.
        case failAuthWaiters(RelayClientError)
        /// Answer the challenge now (the configuration asks to when challenged).
        case authenticate
        /// A subscription was refused for want of authentication: authenticate, then re-send it.
        case authenticateAndResend(subscriptionID: String, relayMessage: String, generation: Int)
        /// A live subscription needs a connection that is not there.
        case connect
        /// Keep reconnecting with backoff.
        case startReconnecting
        case stopReconnecting
        /// Something only a log should hear of.
        case log(String)
    }

    struct Settings {
        var resubscribeMargin: Duration
        var giftWrapResubscribeMargin: Duration
        var canAuthenticate: Bool
        var authenticateWhenChallenged: Bool

        init(configuration: RelayConfiguration, canAuthenticate: Bool) {
            resubscribeMargin = configuration.resubscribeMargin
            giftWrapResubscribeMargin = configuration.giftWrapResubscribeMargin
            self.canAuthenticate = canAuthenticate
            authenticateWhenChallenged = configuration.authenticateWhenChallenged
        }
    }

    let settings: Settings
    private(set) var subscriptions: [String: Subscription] = [:]
    /// Counts connections, so signals from a stale one are ignored.
    private(set) var generation = 0
    private(set) var isConnected = false
    private(set) var isShutDown = false
    /// In send order: some relays answer a refusal with an empty event id.
    private(set) var pendingOKs: [(token: OKToken, id: EventID)] = []
    private var nextToken: OKToken = 0
    private(set) var challenge: String?
    private(set) var auth: AuthState = .none
    private(set) var backoff: Backoff
    private var backoffResetOnGeneration = 0
    /// Since when connecting here keeps failing (nil once a connection opens): tells a relay
    /// that went away during an operation from one that was down before it began.
    private(set) var unreachableSince: ContinuousClock.Instant?

    init(settings: Settings, backoff: Backoff) {
        self.settings = settings
        self.backoff = backoff
    }

    var hasLiveSubscriptions: Bool { subscriptions.values.contains { $0.live } }

    /// Whether waiting for this relay may pay off for an operation that began at `start`:
    /// this session has reached it before, and it was not already failing when the operation began.
    func mayComeBack(forOperationStartedAt start: ContinuousClock.Instant) -> Bool {
        guard generation > 0 else { return false }
        guard let unreachableSince else { return true }
        return unreachableSince >= start
    }

    // MARK: - Owner requests

    /// Registers a subscription: its REQ now if connected; a live one asks for a connection.
    mutating func subscribe(id: String, filters: [Filter], live: Bool) throws(RelayClientError) -> [Action] {
        guard !isShutDown else { throw .shutDown }
        guard live || isConnected else { throw .connectionClosed("not connected") }
        subscriptions[id] = Subscription(filters: filters, sentFilters: filters, live: live)
        return isConnected ? reqActions(for: id) : [.connect]
    }

    /// Forgets a subscription; CLOSE if the relay has it.
    mutating func unsubscribe(id: String) -> [Action] {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return [] }
        var actions: [Action] = []
        if isConnected, subscription.sentOnGeneration == generation {
            actions.append(.send(ClientMessage.close(subscriptionID: id).jsonString))
        }
        if !hasLiveSubscriptions { actions.append(.stopReconnecting) }
        return actions
    }

    /// A waiter for the OK to `id`; the token names it in `answerOK`/`failOK`.
    mutating func expectOK(for id: EventID) -> OKToken {
        nextToken += 1
        pendingOKs.append((nextToken, id))
        return nextToken
    }

    mutating func forgetOK(_ token: OKToken) {
        pendingOKs.removeAll { $0.token == token }
    }

    mutating func nextReconnectDelay<R: RandomNumberGenerator>(using rng: inout R) -> Duration {
        backoff.nextDelay(using: &rng)
    }

    // MARK: - NIP-42

    func authenticationStep() -> AuthStep {
        guard let challenge else { return .awaitChallenge }
        switch auth {
        case .authenticated(let done) where done == challenge: return .alreadyAuthenticated
        case .inFlight(let pending) where pending == challenge: return .joinInFlight(challenge: challenge)
        default: return .start(challenge: challenge)
        }
    }

    mutating func authenticationStarted(challenge: String) {
        auth = .inFlight(challenge: challenge)
    }

    /// The AUTH for `challenge` got its answer (or failed); a newer challenge meanwhile wins.
    mutating func authenticationEnded(challenge: String, accepted: Bool) {
        guard case .inFlight(let pending) = auth, pending == challenge else { return }
        auth = accepted ? .authenticated(challenge: challenge) : .none
    }

    /// After an AUTH for a refused subscription: its REQ again, if it still lives on this connection.
    func resendAfterAuthentication(_ id: String, generation sent: Int) -> [Action] {
        guard sent == generation, isConnected, let subscription = subscriptions[id] else { return [] }
        return [.send(ClientMessage.req(subscriptionID: id, filters: subscription.sentFilters).jsonString)]
    }

    /// Authentication for a refused subscription failed: it ends with the relay's reason.
    mutating func authenticationForSubscriptionFailed(_ id: String, error: RelayClientError, relayMessage: String) -> [Action] {
        guard subscriptions.removeValue(forKey: id) != nil else { return [] }
        return [.signal(subscriptionID: id, .error(error)), .signal(subscriptionID: id, .closed(relayMessage))]
    }

    // MARK: - Connection events

    /// A connection opened: a new generation, fresh NIP-42 state, every live subscription sent
    /// again (resuming from what it saw).
    mutating func connectionOpened() -> [Action] {
        generation += 1
        isConnected = true
        unreachableSince = nil
        challenge = nil
        auth = .none
        return subscriptions.keys.sorted().filter { subscriptions[$0]?.live == true }.flatMap { reqActions(for: $0) }
    }

    /// An attempt to connect failed at `now`.
    mutating func connectFailed(_ error: RelayClientError, now: ContinuousClock.Instant) -> [Action] {
        if unreachableSince == nil { unreachableSince = now }
        guard !isShutDown, hasLiveSubscriptions else { return [] }
        return broadcast(.error(error), liveOnly: true) + [.startReconnecting]
    }

    /// The connection ended: waiters fail, pages end, live subscriptions wait for the next one.
    mutating func connectionEnded(_ reason: RelayClientError) -> [Action] {
        guard isConnected else { return [] }
        isConnected = false
        var actions: [Action] = pendingOKs.map { .failOK($0.token, reason) }
        pendingOKs.removeAll()
        actions.append(.failAuthWaiters(reason))
        auth = .none
        challenge = nil
        for id in subscriptions.keys.sorted() where subscriptions[id]?.live == false {
            subscriptions[id] = nil
            actions.append(.signal(subscriptionID: id, .connectionLost(reason)))
        }
        actions += broadcast(.connectionLost(reason), liveOnly: true)
        if !isShutDown, hasLiveSubscriptions { actions.append(.startReconnecting) }
        return actions
    }

    /// Stops everything: connection state ended with `shutDown`, no subscriptions left.
    mutating func shutDown() -> [Action] {
        isShutDown = true
        var actions = isConnected ? connectionEnded(.shutDown) : broadcast(.connectionLost(.shutDown))
        actions += [.failAuthWaiters(.shutDown), .stopReconnecting]
        subscriptions.removeAll()
        return actions
    }

    // MARK: - Inbound

    /// A text message from the relay at `now` (seconds): decoded, verified and routed.
    mutating func receive(text: String, now: Int64) -> [Action] {
        guard isConnected else { return [] }
        let message: RelayMessage
        do {
            message = try RelayMessage(json: text)
        } catch {
            return [.log("malformed relay message: \(error)")] + broadcast(.error(.malformedMessage("\(error)")))
        }
        if backoffResetOnGeneration != generation {
            // The relay speaks NIP-01 on this connection: forget earlier failures.
            backoffResetOnGeneration = generation
            backoff.reset()
        }
        switch message {
        case .event(let subscriptionID, let unverified):
            return deliver(unverified, subscriptionID: subscriptionID, now: now)
        case .ok(let eventID, let accepted, let text):
            let answer = OKAnswer(accepted: accepted, message: text)
            if let eventID {
                // Everyone waiting for this event (it may be published twice at once).
                let waiting = pendingOKs.filter { $0.id == eventID }
                pendingOKs.removeAll { $0.id == eventID }
                return waiting.map { .answerOK($0.token, answer) }
            } else if !pendingOKs.isEmpty {
                // No id (some relays refuse that way): relays answer in order, so the oldest.
                return [.answerOK(pendingOKs.removeFirst().token, answer)]
            }
            return []
        case .eose(let subscriptionID):
            guard subscriptions[subscriptionID] != nil else { return [] }
            subscriptions[subscriptionID]?.eoseAt = now
            return [.signal(subscriptionID: subscriptionID, .eose)]
        case .closed(let subscriptionID, let text):
            return relayClosed(subscriptionID, message: text)
        case .notice(let text):
            return [.log("notice: \(text.prefix(200))")] + broadcast(.notice(text))
        case .auth(let newChallenge):
            challenge = newChallenge
            var actions: [Action] = [.challengeArrived(newChallenge)]
            if settings.canAuthenticate, settings.authenticateWhenChallenged { actions.append(.authenticate) }
            return actions
        }
    }

    /// A binary WebSocket message: NIP-01 is text only.
    func receiveBinary(count: Int) -> [Action] {
        guard isConnected else { return [] }
        return broadcast(.error(.malformedMessage("binary message of \(count) bytes (NIP-01 is text)")))
    }

    // MARK: - Internals

    private mutating func reqActions(for id: String) -> [Action] {
        guard isConnected, var subscription = subscriptions[id], subscription.sentOnGeneration != generation else { return [] }
        let resumed = subscription.sentOnGeneration != nil
        if resumed {
            subscription.sentFilters = Resubscription.filters(
                subscription.filters,
                lastSeenCreatedAt: subscription.lastSeenCreatedAt, eoseAt: subscription.eoseAt,
                margin: settings.resubscribeMargin, giftWrapMargin: settings.giftWrapResubscribeMargin)
            subscription.authRetried = false
        }
        subscription.sentOnGeneration = generation
        subscriptions[id] = subscription
        var actions: [Action] = [.send(ClientMessage.req(subscriptionID: id, filters: subscription.sentFilters).jsonString)]
        if resumed { actions.append(.signal(subscriptionID: id, .reconnected)) }
        return actions
    }

    private mutating func deliver(_ unverified: UnverifiedEvent, subscriptionID: String, now: Int64) -> [Action] {
        guard var subscription = subscriptions[subscriptionID] else { return [] }
        let event: Event
        do {
            event = try unverified.verified()
        } catch {
            return [.signal(subscriptionID: subscriptionID, .error(.invalidEvent("\(unverified.id.hex): \(error)")))]
        }
        guard subscription.filters.contains(where: { $0.matches(event) }) else {
            return [.signal(subscriptionID: subscriptionID, .error(.invalidEvent("\(event.id.hex): does not match the subscription")))]
        }
        // A relay's clock (or a forged created_at) must not push the resume point into the future.
        let seen = min(event.createdAt, now)
        subscription.lastSeenCreatedAt = max(subscription.lastSeenCreatedAt ?? seen, seen)
        subscriptions[subscriptionID] = subscription
        return [.signal(subscriptionID: subscriptionID, .event(event))]
    }

    private mutating func relayClosed(_ subscriptionID: String, message: String) -> [Action] {
        guard let subscription = subscriptions[subscriptionID] else { return [] }
        if RelayReason.isAuthRequired(message), settings.canAuthenticate, !subscription.authRetried {
            subscriptions[subscriptionID]?.authRetried = true
            return [.authenticateAndResend(subscriptionID: subscriptionID, relayMessage: message, generation: generation)]
        }
        subscriptions[subscriptionID] = nil
        return [.signal(subscriptionID: subscriptionID, .closed(message))]
    }

    private func broadcast(_ signal: SessionSignal, liveOnly: Bool = false) -> [Action] {
        subscriptions.keys.sorted().filter { !liveOnly || subscriptions[$0]?.live == true }.map { .signal(subscriptionID: $0, signal) }
    }
}
