import Foundation

/// A relay under load, in its own process on 127.0.0.1: started, watched (peak memory,
/// still alive) and always stopped. The relay prints one line with its `ws://` URL when it
/// accepts connections; everything it writes after that is drained and kept for a report.
/// `@unchecked Sendable`: the process handle is set in `init`; its output is behind `Output`'s lock.
final class RelayBenchProcess: @unchecked Sendable {
    enum Failure: Error, CustomStringConvertible {
        case missing(String)
        case launch(String)
        case notReady(String)

        var description: String {
            switch self {
            case .missing(let what): return "not found: \(what)"
            case .launch(let reason): return "could not start the relay: \(reason)"
            case .notReady(let reason): return "the relay did not become ready: \(reason)"
            }
        }
    }

    let url: String
    let pid: Int32
    private let process: Process
    private let stdin: Pipe
    private let output: Output

    /// Starts `executable` and waits (at most `timeout` seconds) for a stdout line that
    /// starts with `readyPrefix` and holds the relay's `ws://127.0.0.1:PORT` URL.
    init(executable: URL, arguments: [String], readyPrefix: String, timeout: Double) throws {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else { throw Failure.missing(executable.path) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        process.environment = env
        let stdout = Pipe()
        let stderr = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        let output = Output()
        for (pipe, isOut) in [(stdout, true), (stderr, false)] {
            Thread.detachNewThread {
                let handle = pipe.fileHandleForReading
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    output.append(data, isStdout: isOut)
                }
            }
        }
        do {
            try process.run()
        } catch {
            throw Failure.launch("\(error)")
        }
        self.process = process
        self.stdin = stdin
        self.output = output
        self.pid = process.processIdentifier

        let deadline = Date().addingTimeInterval(timeout)
        var found: String?
        while found == nil && Date() < deadline && process.isRunning {
            found = output.stdoutLines.first(where: { $0.hasPrefix(readyPrefix) })
            if found == nil { usleep(20_000) }
        }
        guard let line = found,
              let start = line.range(of: "ws://127.0.0.1:")
        else {
            let why = process.isRunning ? "no ready line within \(Int(timeout)) s" : "exited: \(output.stderrTail)"
            Self.terminate(process, stdin: stdin)
            throw Failure.notReady(why)
        }
        let rest = line[start.lowerBound...]
        self.url = String(rest.prefix { !$0.isWhitespace && $0 != ")" })
    }

    deinit { stop() }

    var isRunning: Bool { process.isRunning }

    /// `VmHWM` and `VmRSS` from /proc (kB), while the process lives.
    func memoryKilobytes() -> (peak: Int, current: Int)? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Int? {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
            return line.split(separator: " ").compactMap { Int($0) }.first
        }
        guard let peak = field("VmHWM"), let current = field("VmRSS") else { return nil }
        return (peak, current)
    }

    /// The last of what the relay wrote to stderr, for a report when it died.
    var stderrTail: String { output.stderrTail }

    /// Stops the relay: stdin closed and SIGTERM, then SIGKILL after 5 s. Returns its exit status.
    @discardableResult
    func stop() -> Int32? {
        Self.terminate(process, stdin: stdin)
        return process.isRunning ? nil : process.terminationStatus
    }

    private static func terminate(_ process: Process, stdin: Pipe) {
        try? stdin.fileHandleForWriting.close()
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// `@unchecked Sendable`: every field is touched only under `lock`.
    private final class Output: @unchecked Sendable {
        private let lock = NSLock()
        private var out = Data()
        private var err = Data()

        func append(_ data: Data, isStdout: Bool) {
            lock.lock()
            if isStdout {
                if out.count < 1 << 16 { out.append(data) }
            } else {
                err.append(data)
                if err.count > 1 << 16 { err = err.suffix(1 << 15) }
            }
            lock.unlock()
        }

        var stdoutLines: [String] {
            lock.lock()
            defer { lock.unlock() }
            return String(decoding: out, as: UTF8.self).split(separator: "\n").map(String.init)
        }

        var stderrTail: String {
            lock.lock()
            defer { lock.unlock() }
            return String(decoding: err.suffix(1000), as: UTF8.self)
        }
    }
}
