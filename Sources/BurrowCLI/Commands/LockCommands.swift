import ArgumentParser
import Foundation
import Node
import Store

/// `burrow lock` / `burrow unlock` (issue 25): the running node wipes its keys from memory and
/// holds what arrives until it is unlocked. A home no `burrow run` serves is at rest, encrypted
/// under its passphrase: there is nothing to lock.
struct LockCommand: BurrowCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock", abstract: "Lock the running node: its keys leave memory until `burrow unlock`.")
    @OptionGroup var globals: GlobalOptions

    func execute() async throws -> CommandOutput {
        guard let node = ServingNode.current else { return try LockAnswer.atRest(globals) }
        if !node.isLocked { node.lock() }
        return CommandOutput(fields: [("locked", .bool(true)), ("running", .bool(true))],
                             human: "Locked. The node stays connected and keeps what arrives; `burrow unlock` resumes it.")
    }
}

struct UnlockCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "unlock", abstract: "Unlock the running node with the passphrase.")
    @OptionGroup var globals: GlobalOptions

    func execute() async throws -> CommandOutput {
        guard let node = ServingNode.current else { return try LockAnswer.atRest(globals) }
        guard let passphrase = Console.forwardedPassphrase else { throw CLIError(.passphrase_required, "no passphrase came with the command") }
        let was = node.isLocked
        try node.unlock(passphrase: passphrase)
        return CommandOutput(fields: [("locked", .bool(false)), ("running", .bool(true))],
                             human: was ? "Unlocked: what arrived meanwhile is being processed." : "The node was not locked.")
    }
}

enum LockAnswer {
    /// Outside `burrow run`: a busy home goes to the run that holds it (`busy` is forwarded);
    /// a free one is at rest.
    static func atRest(_ globals: GlobalOptions) throws -> CommandOutput {
        guard BurrowNode.exists(home: globals.homeURL) else {
            throw CLIError(.not_initialized, "no store in \(globals.homeURL.path): run `burrow init` first")
        }
        guard BurrowStore.waitUntilFree(home: globals.homeURL, timeout: .zero) else { throw StoreError.busy }
        return CommandOutput(fields: [("locked", .bool(true)), ("running", .bool(false))],
                             human: "No `burrow run` serves this home: at rest it is locked already (encrypted under its passphrase).")
    }
}

/// `--lock-after`: a number with s, m or h (seconds without a unit), 10 s to 7 days.
enum LockDuration {
    static func parse(_ text: String) throws -> Duration {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Int64)] = [("s", 1), ("m", 60), ("h", 3600)]
        var multiplier: Int64 = 1
        var number = trimmed
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            multiplier = factor
            number = String(trimmed.dropLast())
        }
        guard let value = Int64(number), value > 0, value <= 7 * 86_400 / multiplier, value * multiplier >= 10 else {
            throw CLIError(.invalid_input, "--lock-after takes 10s to 168h (a number with s, m or h), not \(text)")
        }
        return .seconds(value * multiplier)
    }
}
