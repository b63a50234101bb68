/// One writer at a time: `burrow run` funnels live events, upkeep and forwarded commands
/// through a gate, in arrival order, so the node's single-writer state is never shared.
public actor NodeGate {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public init() {}

    private func acquire() async {
        if !held {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    private func release() {
        if waiters.isEmpty { held = false } else { waiters.removeFirst().resume() }
    }

    /// Runs `body` alone: after every earlier caller, before every later one.
    public func locked<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await acquire()
        do {
            let value = try await body()
            release()
            return value
        } catch {
            release()
            throw error
        }
    }
}
