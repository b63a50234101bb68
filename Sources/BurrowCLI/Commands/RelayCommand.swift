import ArgumentParser
import Node

/// `burrow relay add|remove|list`: the configured relays (read and write).
struct RelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Manage the configured relays.",
        subcommands: [Add.self, Remove.self, List.self]
    )

    struct Add: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add relays (ws:// or wss://).")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "Relay URLs.") var urls: [String] = []
        @Flag(name: .customLong("public"), help: "Add the public relays listed in Relays/public-relays.txt (never added silently).")
        var publicRelays = false

        func validate() throws {
            if urls.isEmpty && !publicRelays { throw ValidationError("name at least one relay URL, or --public") }
        }

        func execute() async throws -> CommandOutput {
            let all = urls + (publicRelays ? PublicRelays.list : [])
            return RelayCommand.output(try await NodeOpener.with(globals) { try $0.addRelays(all) })
        }
    }

    struct Remove: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a relay.")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "Relay URL.") var url: String

        func execute() async throws -> CommandOutput {
            RelayCommand.output(try await NodeOpener.with(globals) { try $0.removeRelay(url) })
        }
    }

    struct List: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the relays.")
        @OptionGroup var globals: GlobalOptions

        func execute() async throws -> CommandOutput {
            RelayCommand.output(try await NodeOpener.with(globals) { try $0.relays() })
        }
    }

    static func output(_ relays: [String]) -> CommandOutput {
        CommandOutput(fields: [("relays", .array(relays.map { .string($0) }))], human: relays.isEmpty ? "(no relays)" : relays.joined(separator: "\n"))
    }
}
