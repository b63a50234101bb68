import Foundation

/// A third-party peer (nostr-sdk, mdk-python, …) driven by a Python script of the interop venv
/// over JSON lines: one request object per stdin line, one response object per stdout line.
///
/// The script's contract (see `Tests/Interop/peers/nostr_peer.py`):
/// - its first stdout line is `{"ok": true, "ready": true, …}` once its imports succeeded;
/// - every request is an object with an `"op"`; every response has `"ok"`, and failures are
///   `{"ok": false, "error": "…"}` (the script keeps serving);
/// - it exits on EOF on stdin (and should leave when its parent dies).
///
/// Every wait is bounded. A timeout, a dead peer or an unreadable line terminates the process;
/// `terminate()` is idempotent and also runs on deinit, so tests use `PythonPeer.with { … }`
/// or `addTeardownBlock { peer.terminate() }` to stop it whatever the outcome.
/// Requests may carry test secrets: they are never included in errors or descriptions.
public final class PythonPeer: @unchecked Sendable {
    public enum PeerError: Error, CustomStringConvertible, Equatable {
        case pythonMissing(path: String)
        case scriptMissing(path: String)
        case launchFailed(reason: String)
        /// No complete response line arrived within the bound; the peer was terminated.
        case timedOut(op: String, seconds: Double, stderrTail: String)
        /// The process closed stdout (exited) before answering.
        case exited(op: String, status: Int32?, stderrTail: String)
        case malformedResponse(op: String, reason: String)
        /// The peer answered `{"ok": false, "error": …}`.
        case failed(op: String, error: String)
        case missingField(op: String, field: String)
        case terminated

        public var description: String {
            switch self {
            case .pythonMissing(let path):
                return "interop venv Python not found at \(path) (run `make setup` or set BURROW_VENV)"
            case .scriptMissing(let path): return "peer script not found at \(path)"
            case .launchFailed(let reason): return "could not start peer: \(reason)"
            case .timedOut(let op, let seconds, let tail):
                return "peer did not answer \(op) within \(seconds)s; stderr: \(tail)"
            case .exited(let op, let status, let tail):
                return "peer exited (status \(status.map(String.init) ?? "?")) during \(op); stderr: \(tail)"
            case .malformedResponse(let op, let reason): return "peer answered \(op) with a malformed line: \(reason)"
            case .failed(let op, let error): return "peer failed \(op): \(error)"
            case .missingField(let op, let field): return "peer response to \(op) lacks \(field)"
            case .terminated: return "peer was already terminated"
            }
        }
    }

    /// One response object, with typed accessors that throw instead of trapping.
    public struct Response: @unchecked Sendable {
        public let op: String
        public let object: [String: Any]

        public func string(_ key: String) throws -> String {
            guard let value = object[key] as? String else { throw PeerError.missingField(op: op, field: key) }
            return value
        }

        public func bool(_ key: String) throws -> Bool {
            guard let value = object[key] as? Bool else { throw PeerError.missingField(op: op, field: key) }
            return value
        }

        public func int(_ key: String) throws -> Int {
            guard let value = object[key] as? Int else { throw PeerError.missingField(op: op, field: key) }
            return value
        }

        public subscript(key: String) -> Any? { object[key] }
    }

    public let script: URL
    /// The object the script printed when it became ready (its name, version, operations).
    public private(set) var hello: [String: Any] = [:]

    private let process = Process()
    private let stdinPipe = Pipe()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var lines: [[UInt8]] = []
    private var stdoutClosed = false
    private var stderrClosed = false
    private var stderrTail: [UInt8] = []
    private var isTerminated = false
    /// Serializes requests: responses are matched to requests by order.
    private let requestLock = NSLock()

    private static let stderrTailLimit = 8192

    /// Starts `script` with the interop venv's Python and waits (at most `readyTimeout`) for its
    /// ready line.
    public init(
        script: URL,
        arguments: [String] = [],
        environment: [String: String] = [:],
        python: URL = Fixtures.venvPython,
        readyTimeout: TimeInterval = 60
    ) throws {
        self.script = script
        let fm = FileManager.default
        guard fm.isExecutableFile(atPath: python.path) else { throw PeerError.pythonMissing(path: python.path) }
        guard fm.fileExists(atPath: script.path) else { throw PeerError.scriptMissing(path: script.path) }
        // A write to a peer that just died must surface as an error, not kill the test process.
        signal(SIGPIPE, SIG_IGN)

        var env = ProcessInfo.processInfo.environment
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        for (key, value) in environment { env[key] = value }
        process.executableURL = python
        process.arguments = [script.path] + arguments
        process.environment = env
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        do {
            try PeerProcess.withSignalsUnblocked { try process.run() }
        } catch {
            throw PeerError.launchFailed(reason: "\(error)")
        }
        startReader(stdoutPipe.fileHandleForReading.fileDescriptor, isStdout: true)
        startReader(stderrPipe.fileHandleForReading.fileDescriptor, isStdout: false)

        do {
            let ready = try readResponse(op: "startup", timeout: readyTimeout)
            guard ready.object["ok"] as? Bool == true else {
                throw PeerError.malformedResponse(op: "startup", reason: "first line is not a ready object")
            }
            hello = ready.object
        } catch {
            terminate()
            throw error
        }
    }

    deinit { terminate() }

    /// Runs `body` with a started peer and terminates it afterwards, whether `body` threw or not.
    public static func with<T>(
        script: URL,
        arguments: [String] = [],
        environment: [String: String] = [:],
        readyTimeout: TimeInterval = 60,
        _ body: (PythonPeer) throws -> T
    ) throws -> T {
        let peer = try PythonPeer(script: script, arguments: arguments, environment: environment, readyTimeout: readyTimeout)
        defer { peer.terminate() }
        return try body(peer)
    }

    /// Sends `{"op": op, …fields}` and returns the response; throws `failed` on `"ok": false`.
    @discardableResult
    public func request(_ op: String, _ fields: [String: Any] = [:], timeout: TimeInterval = 30) throws -> Response {
        requestLock.lock()
        defer { requestLock.unlock() }
        condition.lock()
        let dead = isTerminated
        condition.unlock()
        if dead { throw PeerError.terminated }

        var object = fields
        object["op"] = op
        var line: Data
        do {
            line = try JSONSerialization.data(withJSONObject: object, options: [])
        } catch {
            throw PeerError.malformedResponse(op: op, reason: "request is not serializable to JSON")
        }
        line.append(UInt8(ascii: "\n"))
        try write(line, op: op)

        let response = try readResponse(op: op, timeout: timeout)
        guard let ok = response.object["ok"] as? Bool else {
            throw PeerError.malformedResponse(op: op, reason: "response has no boolean \"ok\"")
        }
        guard ok else {
            throw PeerError.failed(op: op, error: response.object["error"] as? String ?? "(no error text)")
        }
        return response
    }

    /// Closes stdin (the script exits on EOF), then escalates to SIGTERM and SIGKILL, each
    /// after a bounded wait. Safe to call more than once.
    public func terminate() {
        condition.lock()
        if isTerminated {
            condition.unlock()
            return
        }
        isTerminated = true
        condition.unlock()

        try? stdinPipe.fileHandleForWriting.close()
        guard process.processIdentifier > 0 else { return }
        if !waitForExit(seconds: 3) {
            kill(process.processIdentifier, SIGTERM)
            if !waitForExit(seconds: 3) {
                kill(process.processIdentifier, SIGKILL)
                _ = waitForExit(seconds: 5)
            }
        }
    }

    /// The peer's process id (for checks that it is gone).
    public var processIdentifier: Int32 { process.processIdentifier }

    /// What the script wrote to stderr most recently (bounded), for diagnostics.
    public var stderrText: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: stderrTail, as: UTF8.self)
    }

    // MARK: - Internals

    private func write(_ data: Data, op: String) throws {
        let fd = stdinPipe.fileHandleForWriting.fileDescriptor
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, base + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    let tail = stderrText
                    terminate()
                    throw PeerError.exited(op: op, status: exitStatus, stderrTail: tail)
                }
                offset += n
            }
        }
    }

    private var exitStatus: Int32? { process.isRunning ? nil : process.terminationStatus }

    private func readResponse(op: String, timeout: TimeInterval) throws -> Response {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        while lines.isEmpty && !stdoutClosed {
            if !condition.wait(until: deadline) { break }
        }
        if lines.isEmpty {
            let closed = stdoutClosed
            condition.unlock()
            if closed {
                // It is exiting: let it finish and the stderr reader drain what it said last.
                _ = waitForExit(seconds: 5)
                let status = exitStatus
                let tail = drainedStderr(within: 5)
                terminate()
                throw PeerError.exited(op: op, status: status, stderrTail: tail)
            }
            terminate()
            throw PeerError.timedOut(op: op, seconds: timeout, stderrTail: drainedStderr(within: 5))
        }
        let line = lines.removeFirst()
        condition.unlock()

        guard let parsed = try? JSONSerialization.jsonObject(with: Data(line), options: []),
              let object = parsed as? [String: Any]
        else {
            terminate()
            throw PeerError.malformedResponse(op: op, reason: "not a JSON object (\(line.count) bytes)")
        }
        return Response(op: op, object: object)
    }

    private func drainedStderr(within seconds: TimeInterval) -> String {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while !stderrClosed && process.isRunning == false {
            if !condition.wait(until: deadline) { break }
        }
        return String(decoding: stderrTail, as: UTF8.self)
    }

    private func waitForExit(seconds: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            if Date() >= deadline { return false }
            usleep(10_000)
        }
        return true
    }

    /// A thread per pipe: blocking reads, split stdout into lines, keep a bounded stderr tail.
    private func startReader(_ fd: Int32, isStdout: Bool) {
        let thread = Thread { [weak self] in
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard let self else { return }
                self.condition.lock()
                if n <= 0 {
                    if isStdout {
                        if !pending.isEmpty { self.lines.append(pending) }
                        self.stdoutClosed = true
                    } else {
                        self.stderrClosed = true
                    }
                    self.condition.broadcast()
                    self.condition.unlock()
                    return
                }
                if isStdout {
                    pending.append(contentsOf: buffer[0..<n])
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        self.lines.append(Array(pending[..<newline]))
                        pending.removeSubrange(...newline)
                    }
                } else {
                    self.stderrTail.append(contentsOf: buffer[0..<n])
                    if self.stderrTail.count > Self.stderrTailLimit {
                        self.stderrTail.removeFirst(self.stderrTail.count - Self.stderrTailLimit)
                    }
                }
                self.condition.broadcast()
                self.condition.unlock()
            }
        }
        thread.name = "PythonPeer \(isStdout ? "stdout" : "stderr")"
        thread.start()
    }
}
