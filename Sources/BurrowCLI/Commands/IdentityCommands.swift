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
    @Option(name: .customLong("import"), help: "Import an ncryptsec1… key (NIP-49; its password is asked, or --key-password-file).")
    var importText: String?
    @Option(name: .customLong("key-password-file"), help: "The password of an ncryptsec key to import.")
    var keyPasswordFile: String?
    @Option(name: .customLong("kdf-memory-mib"), help: "Argon2id memory in MiB (default 64, minimum 8).")
    var kdfMemoryMiB: Int = 64

    func validate() throws {
        if [nsecFile != nil, nsecStdin, importText != nil].filter({ $0 }).count > 1 {
            throw ValidationError("use one of --nsec-file, --nsec-stdin and --import")
        }
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
        } else if let importText {
            // A plain key on the command line would sit in `ps` and the shell's history.
            guard importText.hasPrefix(NIP49.hrp + "1") else {
                throw CLIError(.invalid_input, "--import takes an ncryptsec1… key; give a plain nsec with --nsec-file or --nsec-stdin")
            }
            text = importText
        } else {
            return nil
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(NIP49.hrp + "1") else { return try KeyArgument.secretKey(trimmed) }
        let password = try Passphrase.keyPassword(file: keyPasswordFile, confirm: false)
        do { return try NIP49.decrypt(trimmed, password: password).key } catch {
            switch error {
            case .wrongPassword: throw CLIError(.wrong_passphrase, error.description)
            default: throw CLIError(.invalid_input, error.description)
            }
        }
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

/// `burrow key export --nip49`: the identity key encrypted with a password (NIP-49), to move it
/// to another Nostr app or keep it on paper.
struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "key", abstract: "The identity key, exported safely.",
                                                    subcommands: [KeyExportCommand.self])
}

struct KeyExportCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "export", abstract: "Export the identity key as ncryptsec (NIP-49).")
    @OptionGroup var globals: GlobalOptions
    @Flag(name: .customLong("nip49"), help: "Encrypt it with a password, as NIP-49's ncryptsec1… (the only form exported).")
    var nip49 = false
    @Option(name: .customLong("log-n"), help: "scrypt cost: 2^N rounds (16–20; 16 takes 64 MiB, 20 takes 1 GiB).")
    var logN: UInt8 = NIP49.defaultLogN
    @Option(name: .customLong("key-password-file"), help: "The password to encrypt it with (else asked twice on the terminal).")
    var keyPasswordFile: String?

    func validate() throws {
        guard nip49 else { throw ValidationError("give --nip49: the key is only exported encrypted") }
        guard (16...20).contains(logN) else { throw ValidationError("--log-n must be 16 to 20") }
    }

    func execute() async throws -> CommandOutput {
        let password = try Passphrase.keyPassword(file: keyPasswordFile, confirm: true)
        let secret = try await NodeOpener.with(globals) { $0.keys.secretKey }
        let text: String
        do { text = try NIP49.encrypt(secret, password: password, logN: logN, security: .unknown) } catch {
            throw CLIError(.invalid_input, error.description)
        }
        return CommandOutput(fields: [("ncryptsec", .string(text)), ("log_n", .int(Int64(logN))), ("key_security", .string("unknown"))],
                             human: text)
    }
}
