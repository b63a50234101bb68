import ArgumentParser

/// `burrow join …`: asking to be added to a group (`join request` over relays; nearby joins
/// belong here too).
struct JoinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "join", abstract: "Ask to be added to a group.",
                                                    subcommands: [JoinRequestCommand.self])
}
