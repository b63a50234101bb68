import ArgumentParser

/// The `burrow` program: the command-line contract of Docs/cli.md.
struct Burrow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "burrow",
        abstract: "A Nostr/Marmot group messaging node.",
        discussion: "Global options (--home, --json, --timeout, --passphrase-file) go before or after the subcommand.",
        version: BurrowVersion.line,
        subcommands: [
            InitCommand.self, WhoamiCommand.self, RelayCommand.self, PublishCommand.self, FetchCommand.self,
            KeyPackageCommand.self, GroupCommand.self, InviteCommand.self, SyncCommand.self, RunCommand.self, WebCommand.self, KeyCommand.self, ChatCommand.self, LocationCommand.self,
            LeaveCommand.self, MessagesCommand.self, LocationsCommand.self, ContactCommand.self, DMCommand.self, ConformanceCommand.self,
            MeshCommand.self, JoinCommand.self, ProfileCommand.self, ShareCommand.self, BackupCommand.self, PassphraseCommand.self, LockCommand.self, UnlockCommand.self, FeedCommand.self,
        ]
    )

    mutating func run() async throws {
        throw CleanExit.helpRequest(self)
    }
}
