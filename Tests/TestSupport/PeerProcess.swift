import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process that a test drives: started with its stdin on a pipe (so it exits when the
/// test process goes away, however that happens), stdout collected line by line, and stopped
/// by pid. Every wait is bounded.
public final class PeerProcess: @unchecked Sendable {
    public enum Failure: Error, CustomStringConvertible {
        case launchFailed(String)
        case notReady(String)
        case exitedEarly(status: Int32, output: String)

        public var description: String {
            switch self {
            case .launchFailed(let why): return "peer did not launch: \(why)"
            case .notReady(let why): return "peer not ready: \(why)"
            case .exitedEarly(let status, let output): return "peer exited (\(status)) before it was ready: \(output)"
            }
        }
    }

    public let executable: URL
    public let arguments: [String]
    private let process = Process()
    private let stdinPipe = Pipe()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let lock = NSLock()
    private var _lines: [String] = []
    private var _stderr = Data()
    private var partial = Data()

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// Every complete line the process has printed on stdout so far.
    public var lines: [String] { lock.lock(); defer { lock.unlock() }; return _lines }

    /// What it printed on stderr so far (for failure messages).
    public var standardError: String {
        lock.lock(); defer { lock.unlock() }
        return String(decoding: _stderr, as: UTF8.self)
    }

    public init(executable: URL, arguments: [String], environment: [String: String]? = nil) throws {
        self.executable = executable
        self.arguments = arguments
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        stdoutPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.appendStdout(data)
        }
        stderrPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            self.lock.lock()
            if self._stderr.count < 1 << 20 { self._stderr.append(data) }
            self.lock.unlock()
        }
        do {
            try Self.withSignalsUnblocked { try process.run() }
        } catch {
            throw Failure.launchFailed("\(executable.path): \(error)")
        }
    }

    deinit { stop() }

    /// Runs `body` (a spawn) with no signal blocked in this thread: a child inherits the
    /// spawning thread's mask, and the test runner's Dispatch threads block nearly every signal,
    /// so children started from them ignored `stop()`'s SIGTERM until the SIGKILL 3 s later.
    public static func withSignalsUnblocked<T>(_ body: () throws -> T) rethrows -> T {
        var none = sigset_t(), previous = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return try body()
    }

    private func appendStdout(_ data: Data) {
        guard !data.isEmpty else { return }
        lock.lock()
        defer { lock.unlock() }
        partial.append(data)
        while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
            let line = partial[partial.startIndex..<newline]
            _lines.append(String(decoding: line, as: UTF8.self))
            partial.removeSubrange(partial.startIndex...newline)
        }
    }

    /// Waits until the process prints a line starting with `prefix` and returns that line.
    public func waitForLine(prefix: String, timeout: Duration) async throws -> String {
        try await waitForLine(where: { $0.hasPrefix(prefix) }, described: "starting with \(prefix)", timeout: timeout)
    }

    /// Waits until the process prints a line containing `text` and returns that line.
    public func waitForLine(containing text: String, timeout: Duration) async throws -> String {
        try await waitForLine(where: { $0.contains(text) }, described: "containing \(text)", timeout: timeout)
    }

    private func waitForLine(where matches: (String) -> Bool, described: String, timeout: Duration) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = lines.first(where: matches) { return line }
            if !process.isRunning {
                // Let the reader drain what was printed just before exit.
                try? await Task.sleep(for: .milliseconds(50))
                if let line = lines.first(where: matches) { return line }
                throw Failure.exitedEarly(status: process.terminationStatus, output: standardError)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw Failure.notReady("no line \(described) within \(timeout); stderr: \(standardError)")
    }

    /// Kills the process at once (SIGKILL), like a crash or power loss would.
    public func kill() {
        guard process.isRunning else { return }
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        waitForExit(timeout: .seconds(5))
    }

    /// Stops the process: closes its stdin, asks with SIGTERM, then SIGKILL if it lingers.
    public func stop() {
        try? stdinPipe.fileHandleForWriting.close()
        if process.isRunning {
            _ = Glibc.kill(process.processIdentifier, SIGTERM)
            if !waitForExit(timeout: .seconds(3)) {
                _ = Glibc.kill(process.processIdentifier, SIGKILL)
                waitForExit(timeout: .seconds(5))
            }
        }
        stdoutPipe.fileHandleForReading.readabilityHandler = nil
        stderrPipe.fileHandleForReading.readabilityHandler = nil
    }

    /// Sends `signal` and waits up to `timeout` for the process to end: its exit status, or
    /// nil when it still runs (or was itself ended by a signal).
    public func signalAndWait(_ signal: Int32, timeout: Duration) -> Int32? {
        if process.isRunning { _ = Glibc.kill(process.processIdentifier, signal) }
        guard waitForExit(timeout: timeout), process.terminationReason == .exit else { return nil }
        return process.terminationStatus
    }

    @discardableResult
    private func waitForExit(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline { return false }
            usleep(10_000)
        }
        return true
    }
}
