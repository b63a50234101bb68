import Foundation

/// Runs the real `burrow` program the way scripts do, for the CLI contract tests.
public struct BurrowResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    /// The single JSON document printed with `--json`.
    public func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any] else {
            throw BurrowProcess.Failure.notJSON(stdout)
        }
        return object
    }
}

public enum BurrowProcess {
    public enum Failure: Error { case notJSON(String), timedOut([String]) }

    /// `$BURROW_BIN`, else the `burrow` built beside the running test bundle.
    public static var binary: URL {
        if let bin = ProcessInfo.processInfo.environment["BURROW_BIN"], !bin.isEmpty { return URL(fileURLWithPath: bin) }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // swift-corelibs-xctest runs `<config>/BurrowPackageTests.xctest`; the program sits beside it.
        if dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        return dir.appendingPathComponent("burrow")
    }

    /// `burrow-failpoint-probe`, built beside `burrow`: the same program with the failpoint
    /// named by BURROW_TEST_FAILPOINT armed (the real `burrow` ignores that variable).
    public static var failpointProbe: URL {
        binary.deletingLastPathComponent().appendingPathComponent("burrow-failpoint-probe")
    }

    /// Every failpoint's name, as the probe lists them.
    public static func failpointNames() throws -> [String] {
        let result = try run(["--list-failpoints"], executable: failpointProbe)
        return result.stdout.split(whereSeparator: \.isNewline).map(String.init)
    }

    /// Runs `burrow args…` (or `executable`) with `environment` added, optional stdin, and a
    /// hard time limit.
    @discardableResult
    /// This process's environment without the user's passphrase and home (a child must get
    /// them only from its arguments), plus `extra`.
    public static func childEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "BURROW_PASSPHRASE")
        env.removeValue(forKey: "BURROW_HOME")
        for (key, value) in extra { env[key] = value }
        return env
    }

    public static func run(
        _ args: [String], environment: [String: String] = [:], stdin: String? = nil, timeout: TimeInterval = 60,
        executable: URL? = nil, directory: URL? = nil
    ) throws -> BurrowResult {
        let process = Process()
        process.executableURL = executable ?? binary
        process.arguments = args
        if let directory { process.currentDirectoryURL = directory }
        process.environment = childEnvironment(environment)
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try PeerProcess.withSignalsUnblocked { try process.run() }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? input.fileHandleForWriting.close()
        let outData = Collector(out.fileHandleForReading), errData = Collector(err.fileHandleForReading)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw Failure.timedOut(args)
        }
        process.waitUntilExit()
        return BurrowResult(status: process.terminationStatus, stdout: outData.text(), stderr: errData.text())
    }

    /// Reads a pipe on a background thread so a chatty child never blocks on a full pipe.
    final class Collector: @unchecked Sendable {
        private var data = Data()
        private let lock = NSLock()
        private let done = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            Thread.detachNewThread { [self] in
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    lock.lock(); data.append(chunk); lock.unlock()
                }
                done.signal()
            }
        }

        func text() -> String {
            done.wait()
            lock.lock(); defer { lock.unlock() }
            return String(decoding: data, as: UTF8.self)
        }
    }
}
