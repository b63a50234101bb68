import Dispatch

/// Where the node's blocking work runs: SQLCipher transactions, Argon2id key derivation and
/// the MLS/HPKE work between them, none of which may hold one of Swift's few cooperative
/// threads (there is one per core; a blocked one stalls every actor, relay socket reader and
/// timer behind it). `RelayServer`'s `EventStore` keeps its SQLite on a queue the same way.
///
/// It is a task executor: code run under `BlockingWorkExecutor.run` has its nonisolated async
/// work (every `BurrowNode` method and what they call) and its default actors' work (SE-0417)
/// scheduled on a Dispatch queue, whose threads may block. SwiftNIO's event loops are untouched.
public final class BlockingWorkExecutor: TaskExecutor {
    public static let shared = BlockingWorkExecutor()

    /// Concurrent: independent tasks (a sync's per-relay fetches, the control socket) may each
    /// wait on the store at once; the store's own lock orders their transactions.
    private let queue = DispatchQueue(label: "burrow.blocking-work", qos: .userInitiated, attributes: .concurrent)

    private static let marker = DispatchSpecificKey<Bool>()

    private init() {
        queue.setSpecific(key: Self.marker, value: true)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Runs `operation` (and the child tasks it makes) off the cooperative pool.
    public static func run<T, Failure: Error>(_ operation: () async throws(Failure) -> T) async throws(Failure) -> T {
        try await withTaskExecutorPreference(shared, operation: operation)
    }

    /// Whether the calling code runs on this executor's queue (what the tests check).
    public static var isCurrent: Bool { DispatchQueue.getSpecific(key: marker) == true }
}
