import ArgumentParser
import Foundation
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
        do {
            let output = try await execute()
            if globals.json {
                Console.out(JSONOutput.object([("ok", .bool(true))] + output.fields).serialized)
            } else if !output.human.isEmpty {
                Console.out(output.human)
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            let failure = CLIError.from(error)
            // Another process owns the home: if it is `burrow run`, it does the work.
            if failure.code == .busy, ServingNode.current == nil, let status = try await Forwarding.forward(globals) {
                throw ExitCode(status)
            }
            Console.report(failure, json: globals.json)
            throw ExitCode(failure.exitCode)
        }
    }
}

/// Where a command's output goes: stdout/stderr, or a buffer when `burrow run` executes a
/// forwarded command and sends the text back over the control socket.
final class OutputBuffer: Sendable {
    private let text = Mutex((out: "", err: ""))

    func append(_ line: String, error: Bool) {
        text.withLock { if error { $0.err += line } else { $0.out += line } }
    }

    var contents: (stdout: String, stderr: String) {
        text.withLock { ($0.out, $0.err) }
    }
}

enum Console {
    @TaskLocal static var capture: OutputBuffer?

    static func out(_ text: String) {
        if let capture { return capture.append(text + "\n", error: false) }
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func err(_ text: String) {
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
