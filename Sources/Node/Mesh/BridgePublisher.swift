import Synchronization

/// Passing mesh-received group events on to relays (Docs/protocols/mesh.md 8.4) in the background, with a
/// bound on how many publishes run at once: each holds a relay pool (a WebSocket per relay)
/// for up to its timeout, and what arrives on the mesh is paced by strangers' radios, not by us.
/// An event that finds every slot taken is not bridged (counted in `refused`): it is already
/// processed here, and its sender or another bridge still owes it to the relays.
final class BridgePublisher: Sendable {
    /// Publishes running at once. A family's groups carry a few events a minute and a publish
    /// settles within seconds, so 4 never queue honest traffic, while a flood of accepted
    /// events costs at most 4 × the group's relays in sockets.
    static let maxConcurrent = 4

    private struct State {
        var running = 0
        var started = 0
        var refused = 0
    }

    private let state = Mutex(State())

    init() {}

    /// Publishes started so far.
    var started: Int { state.withLock { $0.started } }
    /// Events not bridged because `maxConcurrent` publishes were running.
    var refused: Int { state.withLock { $0.refused } }
    /// Publishes running now.
    var running: Int { state.withLock { $0.running } }

    /// Runs `publish` in the background unless `maxConcurrent` already run; whether it started.
    @discardableResult
    func launch(_ publish: @escaping @Sendable () async -> Void) -> Bool {
        let admitted = state.withLock { state -> Bool in
            guard state.running < Self.maxConcurrent else {
                state.refused += 1
                return false
            }
            state.running += 1
            state.started += 1
            return true
        }
        guard admitted else { return false }
        Task { [self] in
            await publish()
            state.withLock { $0.running -= 1 }
        }
        return true
    }
}
