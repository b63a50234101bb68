import Nostr
import Synchronization

/// `burrow run`'s senders: the DM outbox flush and the mailbox deletions that follow live gift
/// wraps run here, outside the mailbox, each in its own lane, one round at a time per lane. A
/// relay that never answers (a stranger's inbox list can name such relays) then costs a flush
/// round its deadline, and never the live loop's turn nor the deletions that keep our mailbox
/// under its quota: a contact's DM behind a flood is still stored and processed (issue 19).
final class LiveSender: Sendable {
    /// One lane: runs `work` with what was queued, again while more arrives.
    private final class Lane<Item: Sendable>: Sendable {
        private struct State {
            var running = false
            var again = false
            var items: [Item] = []
        }
        private let state = Mutex(State())
        private let limit: Int

        init(limit: Int) { self.limit = limit }

        func kick(_ items: [Item], _ work: @escaping @Sendable ([Item]) async -> Void) {
            let start = state.withLock { state -> Bool in
                state.items += items
                if state.items.count > limit { state.items.removeFirst(state.items.count - limit) }
                if state.running {
                    state.again = true
                    return false
                }
                state.running = true
                return true
            }
            guard start else { return }
            Task {
                while true {
                    let batch = state.withLock { state -> [Item] in
                        state.again = false
                        defer { state.items = [] }
                        return state.items
                    }
                    await work(batch)
                    let done = state.withLock { state -> Bool in
                        guard !state.again, state.items.isEmpty else { return false }
                        state.running = false
                        return true
                    }
                    if done { return }
                }
            }
        }
    }

    /// Wrap ids waiting for deletion at most; beyond, the oldest are forgotten (their wraps
    /// expire on the relay anyway).
    static let maxPendingDeletions = 10_000

    private let flushes = Lane<Never>(limit: 0)
    private let deletions = Lane<EventID>(limit: LiveSender.maxPendingDeletions)

    /// Asks for a flush of the DM outbox and the deletion of `deletions` from our mailbox; a
    /// round already running in a lane is followed by one more.
    func kick(_ node: DirectMessageService, deletions ids: [EventID], timeout: Duration) {
        if !ids.isEmpty { deletions.kick(ids) { batch in await node.deleteSettledWraps(batch, timeout: timeout) } }
        flushes.kick([]) { _ in await node.flushDMOutbox(timeout: timeout) }
    }
}
