import ArgumentParser
import Foundation
import Node
import Nostr

/// `burrow init`: creates the store and identity.
struct InitCommand: BurrowCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create the encrypted store and the identity (imports an nsec if given)."
    )
    @OptionGroup var globals: GlobalOptions
    @Option(name: .customLong("nsec-file"), help: "Import the identity key from this file (nsec or 64 hex).")
    var nsecFile: String?
    @Flag(name: .customLong("nsec-stdin"), help: "Read the identity key to import from standard input.")
    var nsecStdin = false
    @Option(name: .customLong("kdf-memory-mib"), help: "Argon2id memory in MiB (default 64, minimum 8).")
    var kdfMemoryMiB: Int = 64

    func validate() throws {
        if nsecFile != nil && nsecStdin { throw ValidationError("use either --nsec-file or --nsec-stdin") }
        if kdfMemoryMiB < 8 { throw ValidationError("--kdf-memory-mib must be at least 8") }
    }

    func execute() async throws -> CommandOutput {
        let imported = try importedKey()
        let passphrase = try Passphrase.resolve(globals, confirm: true)
        let node = try BurrowNode.initialize(
            home: globals.homeURL, passphrase: passphrase, kdfMemoryMiB: kdfMemoryMiB, importing: imported
        )
        defer { node.close() }
        return try IdentityOutput.of(node, verb: "created")
    }

    private func importedKey() throws -> SecretKey? {
        let text: String
        if let nsecFile {
            guard let data = FileManager.default.contents(atPath: nsecFile) else {
                throw CLIError(.invalid_input, "cannot read \(nsecFile)")
            }
            text = String(decoding: data, as: UTF8.self)
        } else if nsecStdin {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        } else {
            return nil
        }
        return try KeyArgument.secretKey(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

/// `burrow whoami`.
struct WhoamiCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "whoami", abstract: "Show the identity and relays.")
    @OptionGroup var globals: GlobalOptions
    @Flag(help: "Print only the npub (to hand to someone, or to a script).") var npub = false

    func execute() async throws -> CommandOutput {
        var output = try await NodeOpener.with(globals) { try IdentityOutput.of($0, verb: nil) }
        if npub, case .string(let text)? = output.fields.first(where: { $0.0 == "npub" })?.1 { output.human = text }
        return output
    }
}

enum IdentityOutput {
    static func of(_ node: BurrowNode, verb: String?) throws -> CommandOutput {
        let relays = try node.relays()
        let npub = node.publicKey.npub
        var human = verb.map { "Identity \($0).\n" } ?? ""
        human += "npub:   \(npub)\npubkey: \(node.publicKey.hex)\nrelays: \(relays.isEmpty ? "(none)" : relays.joined(separator: ", "))"
        return CommandOutput(
            fields: [("npub", .string(npub)), ("pubkey", .string(node.publicKey.hex)), ("relays", .array(relays.map { .string($0) }))],
            human: human
        )
    }
}

/// Opens the node of the home named by the global options.
enum NodeOpener {
    static func open(_ globals: GlobalOptions) throws -> BurrowNode {
        let home = globals.homeURL
        guard BurrowNode.exists(home: home) else {
            throw CLIError(.not_initialized, "no store in \(home.path): run `burrow init` first")
        }
        return try BurrowNode.open(home: home, passphrase: Passphrase.resolve(globals))
    }
}

/// Keys are accepted as npub/nsec or 64 hex everywhere.
enum KeyArgument {
    static func publicKey(_ text: String) throws -> PublicKey {
        do {
            if text.hasPrefix("npub1") { return try PublicKey(npub: text) }
            return try PublicKey(hex: text)
        } catch {
            throw CLIError(.invalid_input, "not a public key (npub or 64 hex): \(text)")
        }
    }

    static func secretKey(_ text: String) throws -> SecretKey {
        do {
            if text.hasPrefix("nsec1") { return try SecretKey(nsec: text) }
            return try SecretKey(hex: text)
        } catch {
            throw CLIError(.invalid_input, "not a secret key (nsec or 64 hex)")
        }
    }
}
