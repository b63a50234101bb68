import Synchronization

/// One of `burrow run`'s bounded queues of input waiting for a mailbox turn: mesh deliveries
/// (paced by whoever is in range) and relay events (paced by the relays and whoever writes to
/// them). The live loop may be busy (a relay wait, a nearby invite's commit); an element that
/// finds the inbox full is dropped and counted. A dropped mesh delivery is fetched again by the
/// mesh's sync (`mesh status`: `dropped.queue_full`); dropped relay events are fetched again by
/// the catch-up sync the loop runs after any drop.
///
/// The consumer is woken once per batch: `push` answers `.wake` only when no wake-up is
/// pending, and `take` clears that when it finds the inbox empty, so at most one wake-up is
/// ever outstanding and none is lost.
final class LiveInbox<Element: Sendable>: Sendable {
    enum Push: Equatable {
        /// Queued, and the consumer must be woken.
        case wake
        /// Queued; a wake-up is already pending.
        case queued
        /// The inbox is full: dropped.
        case dropped
    }

    private struct State {
        var items: [Element] = []
        var wakePending = false
        var dropped = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) { self.capacity = max(1, capacity) }

    func push(_ element: Element) -> Push {
        state.withLock { state in
            guard state.items.count < capacity else {
                state.dropped += 1
                return .dropped
            }
            state.items.append(element)
            guard !state.wakePending else { return .queued }
            state.wakePending = true
            return .wake
        }
    }

    /// The oldest delivery; nil when empty (and the next `push` wakes the consumer again).
    func take() -> Element? {
        state.withLock { state in
            guard !state.items.isEmpty else {
                state.wakePending = false
                return nil
            }
            return state.items.removeFirst()
        }
    }

    var count: Int { state.withLock { $0.items.count } }
    var dropped: Int { state.withLock { $0.dropped } }
}
