import ArgumentParser
import Control
import Foundation
import Node
import Store

/// The command line as `main` parsed it (global options hoisted), for forwarding.
enum CommandContext {
    nonisolated(unsafe) static var arguments: [String] = []
}

/// Hands a command to the `burrow run` that owns the home, and executes such forwarded
/// commands inside it.
enum Forwarding {
    /// Sends this command to the running node and prints its answer; returns its exit status,
    /// or nil when nothing answers on the socket (the caller then reports `busy`).
    static func forward(_ globals: GlobalOptions) async throws -> Int32? {
        let passphrase = try Passphrase.resolve(globals)
        var args = Arguments.resolvingPaths(CommandContext.arguments, in: FileManager.default.currentDirectoryPath)
        // The node's stdin is not ours: what the command reads from stdin travels with it.
        var stdin = Arguments.readsStdin(args) ? Array(FileHandle.standardInput.readDataToEndOfFile()) : nil
        if stdin == nil, let secret = ForwardedSecret.resolved {
            args.append(secret.flag)
            stdin = secret.bytes
        }
        let request = ControlRequest(args: args, passphrase: passphrase, stdin: stdin)
        let response: ControlResponse
        do {
            // The forwarded command bounds its own relay waits; allow it a long run (each piece
            // of progress it prints restarts this).
            response = try await WaitIndicator.whileWaiting(for: "the running node", json: globals.json) {
                try await ControlClient.send(request, home: globals.homeURL, timeout: globals.timeoutDuration * 30 + .seconds(30)) { text in
                    // The waiting line goes first, so progress starts at the line's beginning.
                    if isatty(STDERR_FILENO) == 1 { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
                    FileHandle.standardOutput.write(Data(text.utf8))
                }
            }
        } catch ControlError.notAnswering {
            return nil
        }
        if !response.stdout.isEmpty { FileHandle.standardOutput.write(Data(response.stdout.utf8)) }
        if !response.stderr.isEmpty { FileHandle.standardError.write(Data(response.stderr.utf8)) }
        return response.exitCode
    }

    /// Runs a forwarded command on `node` (the caller holds the node's gate), after checking
    /// its passphrase as opening the store would.
    static func execute(_ request: ControlRequest, node: BurrowNode, home: URL) async -> ControlResponse {
        let buffer = OutputBuffer(live: request.progress)
        let json = Arguments.wantsJSON(request.args)
        let status: Int32 = await Console.$capture.withValue(buffer) {
          await Console.$forwardedStdin.withValue(request.stdin) {
            do {
                try BurrowStore.verifyPassphrase(home: home, passphrase: request.passphrase)
            } catch {
                let failure = CLIError.from(error)
                Console.report(failure, json: json)
                return failure.exitCode
            }
            let parsed: ParsableCommand
            do { parsed = try Burrow.parseAsRoot(request.args) } catch {
                if Burrow.exitCode(for: error) == .success {
                    Console.out(Burrow.fullMessage(for: error))
                    return 0
                }
                if json { Console.report(CLIError(.usage, Burrow.message(for: error)), json: true) } else {
                    Console.err(Burrow.fullMessage(for: error))
                }
                return 2
            }
            guard var command = parsed as? any ForwardableCommand else {
                Console.report(CLIError(.busy, "`burrow run` owns this home; this command cannot run inside it"), json: json)
                return 1
            }
            // A locked node answers only `unlock` and `lock`: everything else needs its keys.
            if node.isLocked, !(command is UnlockCommand), !(command is LockCommand) {
                Console.report(CLIError.from(StoreError.locked), json: json)
                return 1
            }
            node.touch()
            do {
                try await ServingNode.$current.withValue(node) {
                    try await Console.$forwardedPassphrase.withValue(request.passphrase) { try await command.runAsync() }
                }
                return 0
            } catch let exit as ExitCode {
                return exit.rawValue
            } catch {
                Console.report(CLIError.from(error), json: json)
                return 1
            }
          }
        }
        let (out, err) = buffer.contents
        return ControlResponse(exitCode: status, stdout: out, stderr: err)
    }
}

/// A secret a command resolved in this process from the environment or the terminal (a
/// backup's passphrase, a new store passphrase): the running node sees neither, so when the
/// command is handed to `burrow run` the secret travels on the forwarded stdin, behind the
/// command's `--…-stdin` flag.
enum ForwardedSecret {
    nonisolated(unsafe) private(set) static var resolved: (flag: String, bytes: [UInt8])?

    static func remember(_ bytes: [UInt8], flag: String) {
        // Inside `burrow run` a forwarded command's secret came on its stdin already.
        guard Console.capture == nil else { return }
        resolved = (flag, bytes)
    }
}
