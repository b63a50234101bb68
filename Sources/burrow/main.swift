import ArgumentParser

@main
struct Burrow: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "burrow",
        abstract: "A Nostr/Marmot group messaging node."
    )
}
