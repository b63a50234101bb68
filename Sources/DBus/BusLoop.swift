import CSystemd
import Glibc
import NIOConcurrencyHelpers

/// The loop has ended: nothing submitted runs.
public enum BusLoopError: Error, Equatable, Sendable {
    case notRunning
}

/// The thread the BlueZ link layer lives on: it polls the D-Bus socket, the descriptors BlueZ
/// hands over (AcquireWrite/AcquireNotify sockets) and an eventfd that wakes it for work posted
/// from other threads, and runs timers. Everything it runs is confined to it, so the link
/// state needs no locks and no blocking call ever lands on Swift's cooperative pool.
public final class BusLoop: @unchecked Sendable {
    // Touched from any thread: the job queue, behind a lock, and the eventfd.
    private let queue = NIOLockedValueBox(JobQueue())
    private let wakeFD: Int32
    private let stopped = NIOLockedValueBox(false)

    // Loop-thread only.
    private var watches: [Int32: Watch] = [:]
    private var timers: [Timer] = []
    private var nextTimerID = 0
    /// The connection whose socket the loop polls and processes, once opened on the loop.
    public var connection: DBusConnection?

    private struct JobQueue {
        var jobs: [() -> Void] = []
        /// The loop has ended: nothing posted will run.
        var finished = false
    }

    private struct Watch {
        let events: Int16
        let handler: (Int16) -> Void
    }

    private struct Timer {
        let id: Int
        let deadline: UInt64
        let body: () -> Void
    }

    /// Starts the thread.
    public init() throws {
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeFD >= 0 else { throw DBusError(errno: -errno, "eventfd") }
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let r = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let loop = Unmanaged<BusLoop>.fromOpaque(argument).takeRetainedValue()
            loop.run()
            return nil
        }, box)
        guard r == 0 else {
            Unmanaged<BusLoop>.fromOpaque(box).release()
            Glibc.close(wakeFD)
            throw DBusError(errno: -r, "start the D-Bus thread")
        }
        pthread_detach(thread)
    }

    /// Runs `job` on the loop thread; false (and `job` dropped) once the loop has ended.
    @discardableResult
    public func execute(_ job: @escaping @Sendable () -> Void) -> Bool {
        let accepted = queue.withLockedValue { queue -> Bool in
            guard !queue.finished else { return false }
            queue.jobs.append(job)
            return true
        }
        guard accepted else { return false }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        return true
    }

    /// Runs `body` on the loop thread and returns its result to an async caller;
    /// `BusLoopError.notRunning` once the loop has ended.
    public func submit<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let accepted = execute { continuation.resume(with: Result { try body() }) }
            if !accepted { continuation.resume(throwing: BusLoopError.notRunning) }
        }
    }

    /// Ends the loop after the jobs queued so far; it closes the connection and every watched
    /// descriptor's handler is dropped (their owners close them).
    public func stop() {
        execute { [self] in stopped.withLockedValue { $0 = true } }
    }

    // MARK: Loop-thread API

    /// Calls `handler` with the returned events whenever `fd` polls ready for `events`.
    public func watch(_ fd: Int32, events: Int16 = Int16(POLLIN), handler: @escaping (Int16) -> Void) {
        watches[fd] = Watch(events: events, handler: handler)
    }

    public func unwatch(_ fd: Int32) { watches[fd] = nil }

    /// Runs `body` after `seconds` unless cancelled with the returned id.
    @discardableResult
    public func after(_ seconds: Double, _ body: @escaping () -> Void) -> Int {
        nextTimerID += 1
        timers.append(Timer(id: nextTimerID, deadline: BusLoop.now() + UInt64(max(0, seconds) * 1_000_000), body: body))
        return nextTimerID
    }

    public func cancelTimer(_ id: Int) { timers.removeAll { $0.id == id } }

    /// CLOCK_MONOTONIC in µs, sd-bus's clock for deadlines.
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000 + UInt64(time.tv_nsec) / 1000
    }

    // MARK: The loop

    private func run() {
        while !stopped.withLockedValue({ $0 }) {
            runJobs()
            if let connection, !connection.process() { self.connection = nil }
            runDueTimers()
            // Jobs and timers may have queued messages: process once more before sleeping.
            if let connection, !connection.process() { self.connection = nil }
            if stopped.withLockedValue({ $0 }) { break }
            poll()
        }
        runJobs()
        let late = queue.withLockedValue { queue -> [() -> Void] in
            queue.finished = true
            defer { queue.jobs.removeAll() }
            return queue.jobs
        }
        for job in late { job() }
        connection?.close()
        connection = nil
        watches.removeAll()
        timers.removeAll()
        Glibc.close(wakeFD)
    }

    private func runJobs() {
        let pending = queue.withLockedValue { queue -> [() -> Void] in
            defer { queue.jobs.removeAll() }
            return queue.jobs
        }
        for job in pending { job() }
    }

    private func runDueTimers() {
        let now = BusLoop.now()
        let due = timers.filter { $0.deadline <= now }
        guard !due.isEmpty else { return }
        timers.removeAll { $0.deadline <= now }
        for timer in due { timer.body() }
    }

    private func poll() {
        var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        var deadline = timers.map(\.deadline).min()
        if let connection, connection.isOpen {
            fds.append(pollfd(fd: connection.fileDescriptor, events: connection.pollEvents, revents: 0))
            if let busDeadline = connection.deadline { deadline = min(deadline ?? .max, busDeadline) }
        }
        let watched = Array(watches.keys)
        for fd in watched { fds.append(pollfd(fd: fd, events: watches[fd]?.events ?? 0, revents: 0)) }
        var timeout: Int32 = -1
        if let deadline {
            let now = BusLoop.now()
            timeout = deadline <= now ? 0 : Int32(min((deadline - now + 999) / 1000, 60_000))
        }
        let r = fds.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), timeout) }
        guard r > 0 else { return }
        if fds[0].revents != 0 {
            var value: UInt64 = 0
            _ = read(wakeFD, &value, 8)
        }
        let busSlots = connection?.isOpen == true ? 1 : 0
        for (index, fd) in watched.enumerated() {
            let revents = fds[1 + busSlots + index].revents
            guard revents != 0, let watch = watches[fd] else { continue }
            watch.handler(revents)
        }
    }
}
