import Synchronization

/// The node's one queue of work: `burrow run`'s live events and upkeep and every command
/// forwarded over the control socket are jobs here, run one at a time in the order they were
/// submitted, so the node's state has a single writer (ARCHITECTURE rule 8, inside the process).
///
/// One task drains an `AsyncStream` of jobs (which keeps the order of `submit` calls) and
/// awaits each job's turn before starting the next. A turn ends when its job ends, or earlier
/// when the job yields it (`yieldingTurn`: a nearby invite waits minutes on the mesh) and takes
/// its store work back through `exclusively`. Closing stops taking jobs and drops the queued
/// ones (their submitters get `Closed`); the running one finishes.
public final class NodeMailbox: Sendable {
    /// The mailbox was closed before the job started.
    public struct Closed: Error {}

    private struct Job: Sendable {
        let run: @Sendable () async -> Void
        let drop: @Sendable () -> Void
    }

    private struct State {
        var closed = false
        var queued = 0
        var worker: Task<Void, Never>?
    }

    private let state = Mutex(State())
    private let jobs: AsyncStream<Job>.Continuation

    public init() {
        let (stream, continuation) = AsyncStream.makeStream(of: Job.self, bufferingPolicy: .unbounded)
        jobs = continuation
        // Weak: the owner's reference keeps the mailbox alive; once it goes, the stream ends.
        let drain = Task { [weak self] in
            for await job in stream {
                guard let self, self.take() else {
                    job.drop()
                    continue
                }
                await withCheckedContinuation { (handBack: CheckedContinuation<Void, Never>) in
                    let turn = Turn(handBack)
                    Task {
                        await NodeMailbox.$currentTurn.withValue(turn) {
                            await NodeMailbox.$current.withValue(self) { await job.run() }
                        }
                        turn.end()
                    }
                }
            }
        }
        state.withLock { $0.worker = drain }
    }

    /// Jobs submitted and not yet started.
    public var queuedCount: Int { state.withLock { $0.queued } }

    /// Whether `close` has begun.
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Queues `body` behind the jobs already submitted; `completion` gets its result, or
    /// `Closed` when the mailbox closes before it starts. For callers that cannot await (NIO).
    public func submit<T: Sendable>(_ body: @escaping @Sendable () async -> T,
                                    completion: @escaping @Sendable (Result<T, Error>) -> Void) {
        let job = Job(run: { completion(.success(await body())) }, drop: { completion(.failure(Closed())) })
        let accepted: Bool = state.withLock { state in
            guard !state.closed else { return false }
            state.queued += 1
            // Yield under the lock so the queue's order is the order of `submit` calls.
            if case .enqueued = jobs.yield(job) { return true }
            state.queued -= 1
            return false
        }
        if !accepted { job.drop() }
    }

    /// Runs `body` after every job submitted before it and before every later one.
    public func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let result: Result<T, Error> = await withCheckedContinuation { continuation in
            submit({
                do { return Result<T, Error>.success(try await body()) } catch { return .failure(error) }
            }, completion: { outcome in
                switch outcome {
                case .success(let inner): continuation.resume(returning: inner)
                case .failure(let error): continuation.resume(returning: .failure(error))
                }
            })
        }
        return try result.get()
    }

    /// A running job's hold on the queue, given back once: when the job ends, or when it
    /// yields its turn.
    final class Turn: Sendable {
        private let handBack: Mutex<CheckedContinuation<Void, Never>?>

        init(_ handBack: CheckedContinuation<Void, Never>) { self.handBack = Mutex(handBack) }

        func end() { handBack.withLock { $0?.resume(); $0 = nil } }
    }

    /// The turn of the job this task runs in, if it still holds it.
    @TaskLocal static var currentTurn: Turn?
    /// The mailbox whose job this task runs in.
    @TaskLocal public static var current: NodeMailbox?

    /// Inside a job: gives the queue to the jobs after this one while `body` runs (it waits a
    /// long time, e.g. on the mesh), so the node keeps processing; `body` takes its store work
    /// back through `exclusively`. Outside a job it just runs `body`.
    public static func yieldingTurn<T>(_ body: () async throws -> T) async rethrows -> T {
        currentTurn?.end()
        return try await $currentTurn.withValue(nil) { try await body() }
    }

    /// Runs `body` as the node's single writer: as a new job when the caller yielded its turn,
    /// else at once (the caller holds the turn, or there is no mailbox: a plain command).
    public static func exclusively<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        if currentTurn == nil, let mailbox = current { return try await mailbox.run(body) }
        return try await body()
    }

    /// Takes the next job off the queue; false once closed.
    private func take() -> Bool {
        state.withLock { state in
            state.queued -= 1
            return !state.closed
        }
    }

    /// Stops taking jobs, drops the queued ones and waits for the one running. Idempotent.
    public func close() async {
        let worker: Task<Void, Never>? = state.withLock { state in
            state.closed = true
            jobs.finish()
            defer { state.worker = nil }
            return state.worker
        }
        await worker?.value
    }
}
