/// The node's single writer, as a value: the MLS epochs, the DM engine's ratchets and the
/// dedup records must change one job at a time. `NodeMailbox.write` hands one to each job
/// and a process that owns the home with no mailbox (a plain command) makes its own
/// (`BurrowNode.exclusively`); the inbound pipeline's entry points take it.
///
/// Non-copyable and not `Sendable`: a job can lend it, but cannot keep it, copy it, or hand
/// it to a concurrent task, so a second writer does not compile.
public struct NodeWriter: ~Copyable {
    /// Only the mailbox and `BurrowNode.exclusively` make writers.
    init(job: Void) {}
}

@available(*, unavailable)
extension NodeWriter: Sendable {}

extension NodeMailbox {
    /// Runs `body` as a job with the node's writer.
    public func write<T: Sendable>(_ body: @escaping @Sendable (borrowing NodeWriter) async throws -> T) async throws -> T {
        try await run {
            let writer = NodeWriter(job: ())
            return try await body(writer)
        }
    }
}

extension BurrowNode {
    /// The writer of a process that owns the home (its lock) and runs no mailbox: the one
    /// command that opened it, or a test.
    func exclusively<T>(_ body: (borrowing NodeWriter) async throws -> T) async rethrows -> T {
        let writer = NodeWriter(job: ())
        return try await body(writer)
    }
}
