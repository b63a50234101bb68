import Foundation
import NIOCore

/// Runs the control handler for one request at a time, in the order the requests arrived.
///
/// The node's state has a single writer, so two commands must never run interleaved: requests
/// from any number of connections go into one queue (an `AsyncStream`, which keeps the order of
/// `submit` calls) drained by one task, which awaits each handler call before starting the next.
/// Each answer goes back through the promise of the connection that asked.
final class ControlDispatcher: @unchecked Sendable {
    typealias Handler = @Sendable (ControlRequest) async -> ControlResponse

    struct Job: Sendable {
        let request: ControlRequest
        let answer: EventLoopPromise<ControlResponse>
    }

    /// The dispatcher stops taking work; queued requests are dropped (their connections close
    /// without an answer), the one being handled finishes.
    struct Closed: Error {}

    private let lock = NSLock()
    private var closed = false
    private var queued = 0
    private let jobs: AsyncStream<Job>.Continuation
    private var worker: Task<Void, Never>?

    init(handler: @escaping Handler) {
        let (stream, continuation) = AsyncStream.makeStream(of: Job.self, bufferingPolicy: .unbounded)
        jobs = continuation
        // The task holds the dispatcher until `close` ends the stream.
        worker = Task { [self] in
            for await job in stream {
                guard take() else {
                    job.answer.fail(Closed())
                    continue
                }
                job.answer.succeed(await handler(job.request))
            }
        }
    }

    /// Requests received and not yet started.
    var queuedCount: Int { lock.withLock { queued } }

    /// Whether `close` has begun.
    var isClosed: Bool { lock.withLock { closed } }

    /// Queues a request behind those already received.
    func submit(_ request: ControlRequest, answer: EventLoopPromise<ControlResponse>) {
        let accepted: Bool = lock.withLock {
            guard !closed else { return false }
            queued += 1
            // Yield under the lock so the queue's order is the order of `submit` calls.
            if case .enqueued = jobs.yield(Job(request: request, answer: answer)) { return true }
            queued -= 1
            return false
        }
        if !accepted { answer.fail(Closed()) }
    }

    /// Takes the next job off the queue; false once closed.
    private func take() -> Bool {
        lock.withLock {
            queued -= 1
            return !closed
        }
    }

    /// Stops taking requests, drops the queued ones and waits for the one being handled.
    func close() async {
        let worker: Task<Void, Never>? = lock.withLock {
            closed = true
            jobs.finish()
            defer { self.worker = nil }
            return self.worker
        }
        await worker?.value
    }
}
