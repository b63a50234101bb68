import Nostr
import Synchronization

/// `burrow run`'s DM sender: the outbox flush and the mailbox deletions that follow live gift
/// wraps run here, outside the mailbox, one round at a time. A relay that never answers (a
/// stranger's inbox list can name such relays) then costs a round its deadline, and never the
/// live loop's turn: a contact's DM behind a flood is still processed at once (issue 19).
final class LiveSender: Sendable {
    private struct State {
        var running = false
        var again = false
        var deletions: [EventID] = []
    }

    /// Wrap ids waiting for deletion at most; beyond, the oldest are forgotten (their wraps
    /// expire on the relay anyway).
    static let maxPendingDeletions = 10_000

    private let state = Mutex(State())

    /// Asks for a round: flush the DM outbox, then delete `deletions` from our mailbox. A round
    /// already running is followed by one more.
    func kick(_ node: BurrowNode, deletions: [EventID], timeout: Duration) {
        let start = state.withLock { state -> Bool in
            state.deletions += deletions
            if state.deletions.count > Self.maxPendingDeletions { state.deletions.removeFirst(state.deletions.count - Self.maxPendingDeletions) }
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
                let ids = state.withLock { state -> [EventID] in
                    state.again = false
                    defer { state.deletions = [] }
                    return state.deletions
                }
                await node.flushDMOutbox(timeout: timeout)
                await node.deleteSettledWraps(ids, timeout: timeout)
                let done = state.withLock { state -> Bool in
                    guard !state.again, state.deletions.isEmpty else { return false }
                    state.running = false
                    return true
                }
                if done { return }
            }
        }
    }

    var isIdle: Bool { state.withLock { !$0.running } }
}
