import ArgumentParser

/// `burrow join …`: asking to be added to a group (`join request` over relays) or joining one
/// invited nearby (`join nearby`, over the mesh).
struct JoinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "join", abstract: "Ask to be added to a group, or join one nearby.",
                                                    subcommands: [JoinRequestCommand.self, JoinNearbyCommand.self])
}
