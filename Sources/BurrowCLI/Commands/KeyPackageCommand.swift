import ArgumentParser
import Node

/// `burrow keypackage publish`.
struct KeyPackageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keypackage", abstract: "Manage our KeyPackages.",
                                                    subcommands: [Publish.self])

    struct Publish: BurrowCommand {
        static let configuration = CommandConfiguration(
            commandName: "publish", abstract: "Publish a fresh KeyPackage (kind 30443 and its 443 twin) and the 10051 relay list.")
        @OptionGroup var globals: GlobalOptions

        func execute() async throws -> CommandOutput {
            let published = try await NodeOpener.with(globals) { try await $0.groups.publishKeyPackage(timeout: globals.timeoutDuration) }
            let ids: [(String, JSONOutput)] = [
                ("30443", .string(published.keyPackage.hex)), ("443", .string(published.legacyKeyPackage.hex)),
                ("10051", .string(published.relayList.hex)), ("10050", .string(published.inboxList.hex)),
            ]
            return CommandOutput(fields: [("event_ids", .object(ids))],
                                 human: ids.map { "kind \($0.0): \(($0.1).textValue)" }.joined(separator: "\n"))
        }
    }
}

extension JSONOutput {
    var textValue: String {
        if case .string(let s) = self { return s }
        return serialized
    }
}
