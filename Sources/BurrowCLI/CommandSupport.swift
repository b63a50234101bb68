import ArgumentParser
import Foundation
import Store
import Synchronization

/// What a command produced: the JSON fields after `"ok": true`, and the text for people.
struct CommandOutput {
    var fields: [(String, JSONOutput)]
    var human: String
}

/// Every leaf command: parses `GlobalOptions`, does its work in `execute`, and leaves printing,
/// error mapping and exit codes to one place.
/// A command `burrow run` may execute for another process (everything but `run` itself).
protocol ForwardableCommand: AsyncRunnable {}

protocol BurrowCommand: ForwardableCommand {
    var globals: GlobalOptions { get }
    func execute() async throws -> CommandOutput
}

/// A command main.swift runs with `await`. (Calling `run()` through an existential picks
/// ArgumentParser's synchronous default, so leaf commands expose this entry point instead.)
protocol AsyncRunnable: AsyncParsableCommand {
    mutating func runAsync() async throws
}

extension AsyncRunnable {
    mutating func run() async throws { try await runAsync() }
}

extension BurrowCommand {
    mutating func runAsync() async throws {
        try await CommandRunner.run(globals) {
            let output = try await execute()
            if globals.json {
                Console.out(JSONOutput.object([("ok", .bool(true))] + output.fields).serialized)
            } else if !output.human.isEmpty {
                Console.out(TerminalText.sanitized(output.human))
            }
        }
    }
}

/// Runs a command's body with the contract's error handling: a failure is reported (one JSON
/// document with `--json`) and becomes the exit status; a `busy` home is handed to the `burrow
/// run` that owns it, which does the work. Commands that print lines of their own (the nearby
/// ones) call this directly.
enum CommandRunner {
    /// How long a command waits for another command (not `run`) to let the home go.
    static let busyWait: Duration = .seconds(5)

    static func run(_ globals: GlobalOptions, _ body: () async throws -> Void) async throws {
        var waited = false
        while true {
            do {
                return try await body()
            } catch let exit as ExitCode {
                throw exit
            } catch {
                var failure = CLIError.from(error)
                if failure.code == .busy, ServingNode.current == nil {
                    // Forwarding can fail on its own (no passphrase, a dead socket): reported as
                    // any failure is, never as a Swift value dump.
                    do {
                        if let status = try await Forwarding.forward(globals) { throw ExitCode(status) }
                        // No `run` serves the home: another command holds it, most likely for
                        // a moment. Wait a few seconds for it once before giving up.
                        if !waited {
                            waited = true
                            if BurrowStore.waitUntilFree(home: globals.homeURL, timeout: busyWait) { continue }
                        }
                        failure = CLIError(.busy, "another burrow command has been using this home for over \(busyWait.components.seconds) s"
                                           + " (and no `burrow run` serves it); try again when it ends")
                    } catch let exit as ExitCode {
                        throw exit
                    } catch {
                        failure = CLIError.from(error)
                    }
                }
                Console.report(failure, json: globals.json)
                throw ExitCode(failure.exitCode)
            }
        }
    }
}

/// Where a command's output goes: stdout/stderr, or a buffer when `burrow run` executes a
/// forwarded command and sends the text back over the control socket.
final class OutputBuffer: Sendable {
    private let text = Mutex((out: "", err: ""))
    /// Where `Console.progress` lines go at once (the caller of a forwarded command).
    let live: (@Sendable (String) -> Void)?

    init(live: (@Sendable (String) -> Void)? = nil) { self.live = live }

    func append(_ line: String, error: Bool) {
        text.withLock { if error { $0.err += line } else { $0.out += line } }
    }

    var contents: (stdout: String, stderr: String) {
        text.withLock { ($0.out, $0.err) }
    }
}

enum Console {
    @TaskLocal static var capture: OutputBuffer?
    /// A forwarded command's stdin, read by the process that forwarded it.
    @TaskLocal static var forwardedStdin: [UInt8]?
    /// The store passphrase a forwarded command came with (checked before it ran): `unlock`'s key.
    @TaskLocal static var forwardedPassphrase: [UInt8]?

    /// A line of output that must reach the user now, not when the command ends (a nearby
    /// invite's code): straight to stdout, or to a forwarded command's caller as progress.
    static func progress(_ text: String) {
        if let capture {
            if let live = capture.live { return live(text + "\n") }
            return capture.append(text + "\n", error: false)
        }
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// All of stdin (the forwarding process's, for a forwarded command).
    static func readAllStdin() -> [UInt8] {
        if capture != nil { return forwardedStdin ?? [] }
        return Array(FileHandle.standardInput.readDataToEndOfFile())
    }

    /// The first line of stdin, without its newline; nil at its end.
    static func readStdinLine() -> String? {
        if capture != nil {
            guard let bytes = forwardedStdin, !bytes.isEmpty else { return nil }
            return String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init)
        }
        return readLine()
    }

    static func out(_ text: String) {
        if let capture { return capture.append(text + "\n", error: false) }
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Standard error carries only human text: it is always sanitized.
    static func err(_ text: String) {
        let text = TerminalText.sanitized(text)
        if let capture { return capture.append(text + "\n", error: true) }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func report(_ failure: CLIError, json: Bool) {
        if json {
            out(JSONOutput.object([
                ("ok", .bool(false)),
                ("error", .object([("code", .string(failure.code.rawValue)), ("message", .string(failure.message))])),
            ]).serialized)
        } else {
            err("error (\(failure.code.rawValue)): \(failure.message)")
        }
    }
}
