import Foundation
import Logging
import Nostr

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
            let url = try RelayURL(text)
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
    /// `timeout` bounds connecting and the wait for each OK (per relay, concurrently).
    public func publish(_ event: Event, timeout: Duration) async -> [PublishResult] {
        guard !registry.isClosed else {
            return urls.map { PublishResult(url: $0, accepted: false, message: RelayClientError.shutDown.description, error: .shutDown) }
        }
        return await withTaskGroup(of: (Int, PublishResult).self) { group in
            for (index, session) in sessions.enumerated() {
                group.addTask { (index, await session.publish(event, timeout: timeout)) }
            }
            var results = [PublishResult?](repeating: nil, count: sessions.count)
            for await (index, result) in group { results[index] = result }
            return results.compactMap { $0 }
        }
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
    public func fetch(_ filter: Filter, timeout: Duration) async throws -> FetchResult {
        guard !registry.isClosed else { throw RelayClientError.shutDown }
        let merged = FetchMerger()
        await withTaskGroup(of: Void.self) { group in
            for session in sessions {
                group.addTask { await self.fetchAll(filter, from: session, timeout: timeout, into: merged) }
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

    private func fetchAll(_ filter: Filter, from session: RelaySession, timeout: Duration, into merged: FetchMerger) async {
        var paginator = Paginator(filter: filter, smallestCap: configuration.smallestRelayCap)
        let url = session.url.description
        while let next = paginator.nextFilter {
            guard paginator.pages < configuration.maxPages else {
                merged.fail(url, .timeout("more than \(configuration.maxPages) pages"))
                return
            }
            do {
                let page = try await session.page([next], timeout: timeout)
                for problem in page.problems { merged.fail(url, problem) }
                merged.add(paginator.record(page: page.events), from: url)
                merged.pageAnswered()
            } catch {
                merged.fail(url, RelaySession.relayError(error))
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
        let target = try RelayURL(url)
        guard let session = sessions.first(where: { $0.url == target }) else {
            throw RelayClientError.invalidURL("\(url) is not in this pool")
        }
        try await session.sendRaw(text, timeout: timeout)
    }

    /// Authenticates (NIP-42) to one relay now, answering its latest challenge.
    public func authenticate(to url: String) async throws {
        let target = try RelayURL(url)
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
private final class SubscriptionRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var subscriptions: [String: PoolSubscription] = [:]
    private var closed = false

    var isClosed: Bool { lock.withLock { closed } }

    func add(_ subscription: PoolSubscription) -> Bool {
        lock.withLock {
            guard !closed else { return false }
            subscriptions[subscription.id] = subscription
            return true
        }
    }

    func remove(_ id: String) -> PoolSubscription? {
        lock.withLock { subscriptions.removeValue(forKey: id) }
    }

    func closeAll() -> [PoolSubscription] {
        lock.withLock {
            closed = true
            defer { subscriptions.removeAll() }
            return Array(subscriptions.values)
        }
    }
}

/// Merges the pages of every relay of one fetch: each event once, failures per relay.
private final class FetchMerger: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [EventID: Event] = [:]
    private var errors: [RelayFailure] = []
    private var completed: [String] = []
    private var answered = false

    var anyPageAnswered: Bool { lock.withLock { answered } }

    func pageAnswered() {
        lock.withLock { answered = true }
    }

    func add(_ batch: [Event], from url: String) {
        lock.withLock {
            for event in batch where events[event.id] == nil { events[event.id] = event }
        }
    }

    func fail(_ url: String, _ error: RelayClientError) {
        lock.withLock { errors.append(RelayFailure(url: url, error: error)) }
    }

    func completed(_ url: String) {
        lock.withLock { completed.append(url) }
    }

    func result() -> FetchResult {
        lock.withLock {
            let sorted = events.values.sorted {
                $0.createdAt != $1.createdAt ? $0.createdAt > $1.createdAt : $0.id < $1.id
            }
            return FetchResult(events: sorted, errors: errors, completedRelays: completed)
        }
    }
}
