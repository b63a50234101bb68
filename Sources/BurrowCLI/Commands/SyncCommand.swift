import ArgumentParser
import Node

/// `burrow sync`: fetch and process everything pending, publish what is owed, exit.
struct SyncCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "sync", abstract: "Fetch and process everything pending, then exit.")
    @OptionGroup var globals: GlobalOptions

    func execute() async throws -> CommandOutput {
        let report = try await NodeOpener.with(globals) { node in
            try await WaitIndicator.whileWaiting(for: "the relays", json: globals.json) { try await node.sync(timeout: globals.timeoutDuration) }
        }
        var human = "processed \(report.processed) events, \(report.messages) new messages"
        for issue in report.errors { human += "\n  skipped \(issue.eventID): \(issue.reason)" }
        return CommandOutput(fields: [("processed", .int(report.processed)), ("messages", .int(report.messages)),
                                      ("errors", .array(report.errors.map(MarmotOutput.issue)))], human: human)
    }
}
