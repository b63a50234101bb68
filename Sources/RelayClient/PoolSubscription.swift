import Foundation
import Nostr

/// A live pool subscription: merges what every relay's session reports into one stream,
/// drops events another relay already delivered (by id), and reports EOSE per relay and
/// once overall (when every relay has sent EOSE, closed, failed, or timed out). The stream
/// ends when every relay has closed the subscription.
///
/// `@unchecked Sendable`: every mutable field is touched only under `lock` (the stream's
/// continuation is finished outside it, see `finish`).
final class PoolSubscription: SessionSink, @unchecked Sendable {
    let id: String
    let filters: [Filter]
    private let lock = NSLock()
    private var seen: BoundedIDSet
    private var awaitingEOSE: Set<RelayURL>
    /// Relays still carrying the subscription; when the last one closes it, the stream ends.
    private var carriedBy: Set<RelayURL>
    private var reportedAllEOSE = false
    private var finished = false
    private let continuation: AsyncStream<RelayPoolEvent>.Continuation
    private var eoseTimer: Task<Void, Never>?

    init(id: String, filters: [Filter], relays: [RelayURL], dedupCapacity: Int,
         continuation: AsyncStream<RelayPoolEvent>.Continuation) {
        self.id = id
        self.filters = filters
        self.seen = BoundedIDSet(capacity: dedupCapacity)
        self.awaitingEOSE = Set(relays)
        self.carriedBy = Set(relays)
        self.continuation = continuation
    }

    func receive(_ signal: SessionSignal, from relay: RelayURL) {
        let name = relay.description
        let noRelayLeft: Bool = lock.withLock {
            guard !finished else { return false }
            switch signal {
            case .event(let event):
                if seen.insert(event.id) { continuation.yield(.event(event, relay: name)) }
            case .eose:
                continuation.yield(.eose(relay: name))
                caughtUp(relay)
            case .closed(let message):
                continuation.yield(.closed(relay: name, message: message))
                caughtUp(relay)
                carriedBy.remove(relay)
                return carriedBy.isEmpty
            case .notice(let message):
                continuation.yield(.notice(relay: name, message: message))
            case .error(let error):
                continuation.yield(.error(relay: name, error))
                switch error {
                case .invalidEvent, .malformedMessage:
                    break
                default:
                    // A relay that cannot be reached must not hold back the overall EOSE.
                    caughtUp(relay)
                }
            case .connectionLost(let error):
                continuation.yield(.error(relay: name, error))
                caughtUp(relay)
            case .reconnected:
                continuation.yield(.reconnected(relay: name))
            }
            return false
        }
        if noRelayLeft { finish() }
    }

    /// After `timeout`, relays still without EOSE are reported and counted as caught up.
    func startEOSETimer(_ timeout: Duration) {
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self?.eoseTimedOut()
        }
        lock.withLock { eoseTimer = timer }
    }

    private func eoseTimedOut() {
        lock.withLock {
            guard !finished, !reportedAllEOSE else { return }
            for relay in awaitingEOSE.sorted(by: { $0.description < $1.description }) {
                continuation.yield(.error(relay: relay.description, .timeout("EOSE")))
            }
            awaitingEOSE.removeAll()
            reportedAllEOSE = true
            continuation.yield(.eoseAll)
        }
    }

    /// Must be called with the lock held.
    private func caughtUp(_ relay: RelayURL) {
        awaitingEOSE.remove(relay)
        if awaitingEOSE.isEmpty, !reportedAllEOSE {
            reportedAllEOSE = true
            eoseTimer?.cancel()
            continuation.yield(.eoseAll)
        }
    }

    /// Ends the stream (pool closed, subscription ended, or closed by every relay).
    /// `continuation.finish()` runs outside the lock: it calls the stream's termination
    /// handler synchronously, which comes back here.
    func finish() {
        let timer: Task<Void, Never>?? = lock.withLock {
            guard !finished else { return nil }
            finished = true
            return .some(eoseTimer)
        }
        guard let timer else { return }
        timer?.cancel()
        continuation.finish()
    }
}

/// A set of event ids that forgets the oldest entries past `capacity`, so a subscription
/// running for months does not grow without bound (the store dedups durably).
struct BoundedIDSet {
    let capacity: Int
    private var members = Set<EventID>()
    private var order: [EventID] = []
    private var head = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    var count: Int { members.count }

    /// Inserts `id`; false when it was already present.
    mutating func insert(_ id: EventID) -> Bool {
        guard members.insert(id).inserted else { return false }
        order.append(id)
        if members.count > capacity {
            members.remove(order[head])
            head += 1
            if head > capacity {
                order.removeFirst(head)
                head = 0
            }
        }
        return true
    }

    func contains(_ id: EventID) -> Bool { members.contains(id) }
}
