import Foundation
import Synchronization

/// Runs `operation` and gives up with `RelayClientError.timeout(what)` after `timeout`.
/// The operation is cancelled when the time is up, so it must honour cancellation.
func withTimeout<T: Sendable>(
    _ timeout: Duration,
    waitingFor what: String,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let description = what
    return try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw RelayClientError.timeout(description)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw RelayClientError.timeout(description) }
        return first
    }
}

/// A value that arrives once (an OK, an EOSE, a connection result) and that any number of
/// tasks can await, each with its own timeout. Completing twice keeps the first result.
final class OneShot<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, Error>?
        var waiters: [Int: CheckedContinuation<Value, Error>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    init() {}

    var isCompleted: Bool { state.withLock { $0.result != nil } }

    func succeed(_ value: Value) { complete(.success(value)) }
    func fail(_ error: Error) { complete(.failure(error)) }

    func complete(_ outcome: Result<Value, Error>) {
        let toResume: [CheckedContinuation<Value, Error>] = state.withLock { state in
            guard state.result == nil else { return [] }
            state.result = outcome
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in toResume { waiter.resume(with: outcome) }
    }

    /// Waits for the value (cancellable).
    func value() async throws -> Value {
        let id: Int = state.withLock { $0.nextWaiter += 1; return $0.nextWaiter }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, Error>) in
                let ready: Result<Value, Error>? = state.withLock { state in
                    if let result = state.result { return result }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Waits for the value at most `timeout`.
    func value(timeout: Duration, waitingFor what: String) async throws -> Value {
        try await withTimeout(timeout, waitingFor: what) { try await self.value() }
    }
}
