import Logging
import ArgumentParser
import Foundation
import Node

/// The `burrow` program, as a library so the crash tests' probe runs the very same code.
public enum BurrowMain {
    /// Entry point: hoists global options, parses, runs, and maps parse failures to the
    /// contract's `usage` error (exit 2) — with `--json`, still as one JSON document.
    /// `BURROW_LOG_LEVEL` (trace, debug, info, notice, warning, error, critical) sets how much
    /// goes to stderr; info by default. For diagnosing a node: the tests' mesh runs set debug
    /// so a failure shows what each session did. Logs never carry secrets at any level.
    static func bootstrapLogging() {
        guard let name = ProcessInfo.processInfo.environment["BURROW_LOG_LEVEL"], let level = Logger.Level(rawValue: name) else { return }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }

    public static func run(_ rawArguments: [String]) async -> Never {
        bootstrapLogging()
        let arguments = Arguments.bareWeb(Arguments.hoistGlobals(rawArguments))
        CommandContext.arguments = arguments
        do {
            var command = try Burrow.parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncRunnable {
                // The store, Argon2id and MLS work block: keep them off the cooperative pool.
                try await BlockingWorkExecutor.run { try await asyncCommand.runAsync() }
            } else {
                try command.run()
            }
            exit(0)
        } catch let exitCode as ExitCode {
            exit(exitCode.rawValue)
        } catch {
            if Burrow.exitCode(for: error) == .success {
                if arguments.contains("--version"), Arguments.wantsJSON(arguments) {
                    Console.out(JSONOutput.object([("ok", .bool(true)), ("version", .string(BurrowVersion.program)),
                                                   ("description", .string(BurrowVersion.line))]).serialized)
                } else {
                    Console.out(Burrow.fullMessage(for: error))
                }
                exit(0)
            }
            let message = Burrow.message(for: error)
            if Arguments.wantsJSON(arguments) {
                Console.report(CLIError(.usage, message), json: true)
            } else {
                Console.err(Burrow.fullMessage(for: error))
            }
            exit(2)
        }
    }
}
