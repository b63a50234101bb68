import ArgumentParser
import Foundation
import Node

/// `burrow passphrase change`: re-encrypts the store under a new passphrase.
struct PassphraseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "passphrase", abstract: "The store's passphrase.",
                                                    subcommands: [PassphraseChangeCommand.self])
}

struct PassphraseChangeCommand: BurrowCommand {
    static let configuration = CommandConfiguration(
        commandName: "change",
        abstract: "Re-encrypt the store under a new passphrase (a crash at any point leaves the old or the new one working).")
    @OptionGroup var globals: GlobalOptions
    @Option(name: .customLong("new-passphrase-file"), help: "Read the new passphrase from this file.") var newFile: String?
    @Flag(name: .customLong("new-passphrase-stdin"), help: "Read the new passphrase from standard input.") var newStdin = false
    @Option(name: .customLong("kdf-memory-mib"), help: "Argon2id memory for the new key in MiB (default: as now, 8 to 4096).")
    var kdfMemoryMiB: Int?

    func execute() async throws -> CommandOutput {
        let newPassphrase = try resolveNew()
        let kdf = try await NodeOpener.with(globals) { try $0.changePassphrase(to: newPassphrase, kdfMemoryMiB: kdfMemoryMiB) }
        return CommandOutput(
            fields: [("changed", .bool(true)), ("kdf", .object([("algorithm", .string("argon2id")), ("memory_mib", .int(kdf.memoryMiB)),
                                                                  ("passes", .int(kdf.passes))]))],
            human: "Passphrase changed (Argon2id \(kdf.memoryMiB) MiB × \(kdf.passes)). The old passphrase no longer opens this home.")
    }

    private func resolveNew() throws -> [UInt8] {
        if newStdin {
            let bytes = Passphrase.stripOneNewline(Console.readAllStdin())
            guard !bytes.isEmpty else { throw CLIError(.passphrase_required, "the new passphrase on stdin is empty") }
            return bytes
        }
        let bytes = Array(try Passphrase.secret(file: newFile, environment: "BURROW_NEW_PASSPHRASE", prompt: "New passphrase: ",
                                                what: "new passphrase", option: "--new-passphrase-file", confirm: true).utf8)
        if newFile == nil { ForwardedSecret.remember(bytes, flag: "--new-passphrase-stdin") }
        return bytes
    }
}
