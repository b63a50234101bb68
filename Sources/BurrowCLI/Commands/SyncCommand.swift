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
        for restored in report.restoredGroups { human += "\n  restored group \(restored.name): \(restored.stage.rawValue), \(restored.detail)" }
        for issue in report.errors { human += "\n  skipped \(issue.eventID): \(issue.reason)" }
        let entries = report.updates.compactMap { if case .feed(let e) = $0 { return e } else { return nil } }
        for entry in entries { human += "\n  feed " + FeedOutput.entryText(entry) }
        var fields: [(String, JSONOutput)] = [("processed", .int(report.processed)), ("messages", .int(report.messages)),
                                              ("errors", .array(report.errors.map(MarmotOutput.issue)))]
        if !entries.isEmpty { fields.append(("feed", .array(entries.map(FeedOutput.entry)))) }
        if !report.restoredGroups.isEmpty {
            fields.append(("restored_groups", .array(report.restoredGroups.map {
                .object([("group", .string($0.group)), ("name", .string($0.name)), ("stage", .string($0.stage.rawValue)),
                         ("detail", .string($0.detail))])
            })))
        }
        return CommandOutput(fields: fields, human: human)
    }
}
