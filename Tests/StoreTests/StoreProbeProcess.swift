import Foundation
import XCTest

/// Runs the `StoreProbe` helper (built beside the test bundle) as a separate process and
/// collects its stdout lines. The passphrase goes in through the environment, never argv.
/// @unchecked Sendable: `buffer` and `finishedReading` are only touched under `condition`;
/// the rest is set in `init` before the reader thread starts.
final class StoreProbeProcess: @unchecked Sendable {
    /// `.build/<triple>/<config>/StoreProbe`: next to the running test executable, so it works
    /// for debug and release builds alike.
    static func executableURL() throws -> URL {
        let selfPath = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? Bundle.main.executablePath ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: selfPath).deletingLastPathComponent()
        // On Linux the test executable sits in the build directory; on macOS it is inside
        // `X.xctest/Contents/MacOS`, three levels below it.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("StoreProbe")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw ProbeNotBuilt(testExecutable: selfPath)
    }

    struct ProbeNotBuilt: Error, CustomStringConvertible {
        let testExecutable: String
        var description: String { "StoreProbe was not built next to the test executable \(testExecutable)" }
    }

    let process = Process()
    private let output = Pipe()
    private let input = Pipe()
    private let condition = NSCondition()
    private var buffer: [UInt8] = []
    private var finishedReading = false

    init(arguments: [String], passphrase: [UInt8]) throws {
        process.executableURL = try Self.executableURL()
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["STORE_PROBE_PASSPHRASE"] = String(decoding: passphrase, as: UTF8.self)
        process.environment = environment
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        let reader = output.fileHandleForReading
        let thread = Thread { [self] in
            while true {
                let chunk = reader.availableData
                condition.lock()
                if chunk.isEmpty { finishedReading = true } else { buffer.append(contentsOf: chunk) }
                condition.broadcast()
                condition.unlock()
                if chunk.isEmpty { return }
            }
        }
        thread.start()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// The complete (newline-terminated) lines printed so far; a line cut by a kill is dropped.
    var lines: [String] {
        condition.lock()
        defer { condition.unlock() }
        return Self.completeLines(buffer)
    }

    private static func completeLines(_ bytes: [UInt8]) -> [String] {
        guard let lastNewline = bytes.lastIndex(of: 0x0A) else { return [] }
        return String(decoding: bytes[...lastNewline], as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    /// Waits until the printed lines satisfy `predicate` or output ends; returns the lines.
    @discardableResult
    func waitForLines(timeout: TimeInterval = 60, until predicate: ([String]) -> Bool) -> [String] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let current = Self.completeLines(buffer)
            if predicate(current) || finishedReading { return current }
            if !condition.wait(until: deadline) { return Self.completeLines(buffer) }
        }
    }

    /// Waits until stdout is closed (the process exited) and returns every complete line.
    func waitForEndOfOutput(timeout: TimeInterval = 60) -> [String] {
        waitForLines(timeout: timeout) { _ in false }
    }

    func closeInput() { try? input.fileHandleForWriting.close() }

    func sigkill() { kill(process.processIdentifier, SIGKILL) }

    /// Waits for the process to exit; nil on timeout.
    func waitForExit(timeout: TimeInterval = 60) -> Int32? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning {
            if Date() > deadline { return nil }
            usleep(10_000)
        }
        return process.terminationStatus
    }
}
