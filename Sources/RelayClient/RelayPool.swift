import Foundation
import Logging
import Nostr
import Synchronization

/// Burrow's view of several relays at once: publish to all, fetch from all (paginated,
/// merged, deduplicated), and live subscriptions that survive disconnects.
///
/// Connections open on first use. Every event handed out has had its id and signature
/// verified and matches the filters asked for; invalid ones are reported, never delivered.
/// With `authKeys`, relays that ask for NIP-42 authentication get it from that key.
public final class RelayPool: Sendable {
    /// The relays, normalized, in the order given (duplicates removed).
    public let urls: [String]
    public let configuration: RelayConfiguration
    private let sessions: [RelaySession]
    private let registry = SubscriptionRegistry()
    private let logger: Logger

    public init(
        urls: [String], authKeys: Keys?, configuration: RelayConfiguration = RelayConfiguration(),
        logger: Logger = Logger(label: "burrow.relay")
    ) throws {
        var parsed: [RelayURL] = []
        for text in urls {
            let url = try RelayURL.dialable(text)
            if !parsed.contains(url) { parsed.append(url) }
        }
        self.urls = parsed.map(\.description)
        self.configuration = configuration
        self.logger = logger
        self.sessions = parsed.map {
            RelaySession(url: $0, authKeys: authKeys, configuration: configuration, logger: logger)
        }
    }

    deinit {
        // A pool dropped without `close()` still stops reconnecting and closes its sockets.
        let sessions = self.sessions
        Task { for session in sessions { await session.shutDown() } }
    }

    // MARK: - Publish

    /// Sends `event` to every relay and returns each relay's answer, in `urls` order.
    /// `timeout` bounds connecting and the wait for each OK (per relay, concurrently). A relay
    /// whose connection fails or drops is tried again until `timeout` passes without its OK
    /// (sending the same event twice is harmless: relays answer `duplicate:`), unless it was
    /// down before this publish began and another relay has already accepted.
    public func publish(_ event: Event, timeout: Duration) async -> [PublishResult] {
        guard !registry.isClosed else {
            return urls.map { PublishResult(url: $0, accepted: false, message: RelayClientError.shutDown.description, error: .shutDown) }
        }
        let started = ContinuousClock.now
        let accepted = Flag()
        return await withTaskGroup(of: (Int, PublishResult).self) { group in
            for (index, session) in sessions.enumerated() {
                group.addTask {
                    (index, await self.publish(event, to: session, timeout: timeout, started: started, anyAccepted: accepted))
                }
            }
            var results = [PublishResult?](repeating: nil, count: sessions.count)
            for await (index, result) in group { results[index] = result }
            return results.compactMap { $0 }
        }
    }

    private func publish(_ event: Event, to session: RelaySession, timeout: Duration, started: ContinuousClock.Instant, anyAccepted: Flag) async -> PublishResult {
        var window = ReconnectWindow(timeout: timeout, backoff: configuration.operationBackoff, now: started)
        while true {
            let result = await session.publish(event, timeout: window.remaining())
            if result.accepted { anyAccepted.set() }
            guard let error = result.error,
                  let pause = await pauseBeforeRetry(after: error, on: session, window: &window, started: started, othersServed: anyAccepted.isSet)
            else { return result }
            do { try await Task.sleep(for: pause) } catch { return result }
        }
    }

    /// How long to wait before trying `session` again after `error` in one operation, or nil
    /// to give up: the error is final, the window closed, or the pool closed; or other relays
    /// already served the operation and this one was down before it began (a dead relay
    /// among live ones must not hold every command for its whole timeout).
    private func pauseBeforeRetry(
        after error: RelayClientError, on session: RelaySession, window: inout ReconnectWindow,
        started: ContinuousClock.Instant, othersServed: Bool
    ) async -> Duration? {
        guard !registry.isClosed else { return nil }
        if othersServed, !(await session.mayComeBack(forOperationStartedAt: started)) { return nil }
        var rng = SystemRandomNumberGenerator()
        guard let pause = window.pause(after: error, using: &rng) else { return nil }
        logger.debug("trying the relay again", metadata: ["relay": "\(session.url)", "error": "\(error)", "pause": "\(pause)"])
        return pause
    }

    // MARK: - Fetch

    /// Queries every relay for `filter` and returns the stored events, each once, newest
    /// first. Follows relays' result caps back in time with `until` (see `Paginator`).
    /// `timeout` bounds each wait that makes no progress, so a long catch-up that keeps
    /// receiving events runs to its end. With `filter.limit`, at most that many are returned.
    ///
    /// Throws only when the pool is closed (`shutDown`) or no relay answered a single page
    /// (`noRelayAnswered`, with each relay's failure); otherwise failures are in `errors`
    /// and what did arrive is returned.
    ///
    /// With `stragglerGrace`, once one relay has answered every page (EOSE), the others get
    /// that long more: a relay that accepts the connection but never answers then costs the
    /// fetch `stragglerGrace`, not `timeout`. It is recorded as a `timeout` failure. For reads
    /// that a later sync repeats (inboxes, catch-up, profiles), never for "does any relay hold
    /// this event?".
    public func fetch(_ filter: Filter, timeout: Duration, stragglerGrace: Duration? = nil) async throws -> FetchResult {
        guard !registry.isClosed else { throw RelayClientError.shutDown }
        let merged = FetchMerger()
        if let grace = stragglerGrace, sessions.count > 1 {
            await fetchLeavingStragglers(filter, timeout: timeout, grace: grace, into: merged)
        } else {
            await withTaskGroup(of: Void.self) { group in
                for session in sessions {
                    group.addTask { await self.fetchAll(filter, from: session, timeout: timeout, into: merged) }
                }
            }
        }
        var result = merged.result()
        if let limit = filter.limit, result.events.count > limit {
            result.events.removeSubrange(limit...)
        }
        if !merged.anyPageAnswered, !sessions.isEmpty {
            if registry.isClosed { throw RelayClientError.shutDown }
            throw RelayClientError.noRelayAnswered(result.errors)
        }
        return result
    }

    /// Every relay's fetch in its own task; returns when all have ended, or `grace` after the
    /// first relay answered every page, leaving the rest (their late answers are dropped).
    private func fetchLeavingStragglers(_ filter: Filter, timeout: Duration, grace: Duration, into merged: FetchMerger) async {
        let tasks = sessions.map { session in
            Task {
                await self.fetchAll(filter, from: session, timeout: timeout, into: merged)
                merged.ended(session.url.description)
            }
        }
        var deadline: ContinuousClock.Instant?
        while merged.endedCount < sessions.count {
            if deadline == nil, merged.anyCompleted { deadline = ContinuousClock.now + grace }
            if let deadline, ContinuousClock.now >= deadline { break }
            do { try await Task.sleep(for: .milliseconds(25)) } catch { break }
        }
        for (session, task) in zip(sessions, tasks) where !merged.hasEnded(session.url.description) {
            task.cancel()
            merged.fail(session.url.description, .timeout("an answer within \(grace) of another relay's complete one"))
            merged.ended(session.url.description)
        }
    }

    private func fetchAll(_ filter: Filter, from session: RelaySession, timeout: Duration, into merged: FetchMerger) async {
        var paginator = Paginator(filter: filter, smallestCap: configuration.smallestRelayCap)
        let url = session.url.description
        let started = ContinuousClock.now
        var window = ReconnectWindow(timeout: timeout, backoff: configuration.operationBackoff, now: started)
        while let next = paginator.nextFilter {
            guard paginator.pages < configuration.maxPages else {
                merged.fail(url, .timeout("more than \(configuration.maxPages) pages"))
                return
            }
            do {
                let page = try await session.page([next], timeout: window.remaining())
                for problem in page.problems { merged.fail(url, problem) }
                merged.add(paginator.record(page: page.events), from: url)
                merged.pageAnswered()
                window.progressed()
            } catch {
                // A dropped connection asks for the same page again once the relay is back.
                let failure = RelaySession.relayError(error)
                if let pause = await pauseBeforeRetry(
                    after: failure, on: session, window: &window, started: started, othersServed: merged.anyCompleted) {
                    do {
                        try await Task.sleep(for: pause)
                        continue
                    } catch {}
                }
                merged.fail(url, failure)
                return
            }
        }
        merged.completed(url)
        logger.debug("fetched", metadata: ["relay": "\(url)", "pages": "\(paginator.pages)", "events": "\(paginator.seen.count)"])
    }

    // MARK: - Subscribe

    /// A live subscription on every relay. The stream reports verified, deduplicated events
    /// and per-relay EOSE, notices, closures, errors and reconnects (see `RelayPoolEvent`);
    /// relays that drop are reconnected with backoff and the subscription resumes from the
    /// newest event seen minus a margin. Ends when the consumer stops listening (then CLOSE is
    /// sent), when every relay has closed the subscription, or when the pool is closed.
    public func subscribe(_ filters: [Filter]) -> AsyncStream<RelayPoolEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: RelayPoolEvent.self, bufferingPolicy: .unbounded)
        let id = SubscriptionID.make()
        let subscription = PoolSubscription(
            id: id, filters: filters, relays: sessions.map(\.url), dedupCapacity: 200_000, continuation: continuation)
        guard registry.add(subscription) else {
            continuation.finish()
            return stream
        }
        let sessions = self.sessions
        let registry = self.registry
        continuation.onTermination = { _ in
            guard let ended = registry.remove(id) else { return }
            ended.finish()
            Task { for session in sessions { await session.unsubscribe(id: id) } }
        }
        subscription.startEOSETimer(configuration.eoseTimeout)
        Task {
            for session in sessions {
                do {
                    try await session.subscribe(id: id, filters: filters, sink: subscription, live: true)
                } catch {
                    subscription.receive(.connectionLost(RelaySession.relayError(error)), from: session.url)
                }
            }
        }
        return stream
    }

    // MARK: - Raw access and shutdown

    /// Sends already serialized JSON to one relay (tests, and forwarding events verbatim).
    public func sendRaw(_ text: String, to url: String, timeout: Duration) async throws {
        let target = try RelayURL.dialable(url)
        guard let session = sessions.first(where: { $0.url == target }) else {
            throw RelayClientError.invalidURL("\(url) is not in this pool")
        }
        try await session.sendRaw(text, timeout: timeout)
    }

    /// Authenticates (NIP-42) to one relay now, answering its latest challenge.
    public func authenticate(to url: String) async throws {
        let target = try RelayURL.dialable(url)
        guard let session = sessions.first(where: { $0.url == target }) else {
            throw RelayClientError.invalidURL("\(url) is not in this pool")
        }
        try await session.authenticate()
    }

    /// Ends every subscription stream, stops reconnecting and closes every connection.
    public func close() async {
        for subscription in registry.closeAll() { subscription.finish() }
        await withTaskGroup(of: Void.self) { group in
            for session in sessions { group.addTask { await session.shutDown() } }
        }
    }
}

/// The pool's live subscriptions, and whether the pool is closed.
private final class SubscriptionRegistry: Sendable {
    private let state = Mutex((subscriptions: [String: PoolSubscription](), closed: false))

    var isClosed: Bool { state.withLock { $0.closed } }

    func add(_ subscription: PoolSubscription) -> Bool {
        state.withLock {
            guard !$0.closed else { return false }
            $0.subscriptions[subscription.id] = subscription
            return true
        }
    }

    func remove(_ id: String) -> PoolSubscription? {
        state.withLock { $0.subscriptions.removeValue(forKey: id) }
    }

    func closeAll() -> [PoolSubscription] {
        state.withLock { state in
            state.closed = true
            defer { state.subscriptions.removeAll() }
            return Array(state.subscriptions.values)
        }
    }
}

/// A fact that becomes true once, read from concurrent tasks.
private final class Flag: Sendable {
    private let value = Mutex(false)

    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

/// Merges the pages of every relay of one fetch: each event once, failures per relay.
private final class FetchMerger: Sendable {
    private struct State {
        var events: [EventID: Event] = [:]
        var sources: [EventID: [String]] = [:]
        var errors: [RelayFailure] = []
        var completed: [String] = []
        var answered = false
        /// Relays whose fetch is over (answered, failed, or left behind), with `stragglerGrace`.
        var ended: Set<String> = []
    }

    private let state = Mutex(State())

    var anyPageAnswered: Bool { state.withLock { $0.answered } }
    var anyCompleted: Bool { state.withLock { !$0.completed.isEmpty } }

    func pageAnswered() {
        state.withLock { $0.answered = true }
    }

    func add(_ batch: [Event], from url: String) {
        state.withLock { state in
            for event in batch {
                if state.events[event.id] == nil { state.events[event.id] = event }
                if !(state.sources[event.id]?.contains(url) ?? false) { state.sources[event.id, default: []].append(url) }
            }
        }
    }

    func fail(_ url: String, _ error: RelayClientError) {
        state.withLock { $0.errors.append(RelayFailure(url: url, error: error)) }
    }

    func completed(_ url: String) {
        state.withLock { $0.completed.append(url) }
    }

    /// Marks `url`'s fetch over; a fetch left behind that ends later changes nothing.
    func ended(_ url: String) {
        state.withLock { _ = $0.ended.insert(url) }
    }

    func hasEnded(_ url: String) -> Bool { state.withLock { $0.ended.contains(url) } }

    var endedCount: Int { state.withLock { $0.ended.count } }

    func result() -> FetchResult {
        state.withLock { state in
            let sorted = state.events.values.sorted {
                $0.createdAt != $1.createdAt ? $0.createdAt > $1.createdAt : $0.id < $1.id
            }
            return FetchResult(events: sorted, errors: state.errors, completedRelays: state.completed, sources: state.sources)
        }
    }
}
