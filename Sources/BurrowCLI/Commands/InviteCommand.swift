import ArgumentParser
import Node

/// `burrow invite list|accept|decline|nearby`, and `requests|approve|reject` for join requests (JoinRequestCommands.swift).
struct InviteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "invite", abstract: "Welcomes awaiting consent; join requests; nearby invites.",
                                                    subcommands: [List.self, Accept.self, Decline.self, Requests.self, Approve.self, Reject.self,
                                                                  InviteNearbyCommand.self])

    struct List: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Pending invites.")
        @OptionGroup var globals: GlobalOptions
        @OptionGroup var freshness: SyncFlag

        func execute() async throws -> CommandOutput {
            let (invites, issues) = try await NodeOpener.with(globals) { node in
                let issues = try await freshness.apply(node, globals)
                return (try node.groups.invites(), issues)
            }
            // What the sync refused is shown too: a welcome we could not take is an invite
            // someone sent that would otherwise vanish without a word.
            var human = invites.isEmpty ? "(no invites)" : invites.map(MarmotOutput.inviteText).joined(separator: "\n")
            for issue in issues { human += "\n  sync skipped \(issue.eventID.prefix(16)): \(issue.reason)" }
            var fields: [(String, JSONOutput)] = [("invites", .array(invites.map(MarmotOutput.invite)))]
            if freshness.sync { fields.append(("sync_errors", .array(issues.map(MarmotOutput.issue)))) }
            return CommandOutput(fields: fields, human: human)
        }
    }

    struct Accept: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "accept", abstract: "Join the group of an invite.")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The invite id (the gift wrap's event id, or a unique prefix).") var id: String

        func execute() async throws -> CommandOutput {
            GroupCommand.output(try await NodeOpener.with(globals) { try await $0.groups.acceptInvite(id, timeout: globals.timeoutDuration) })
        }
    }

    struct Decline: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "decline", abstract: "Decline an invite.")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The invite id.") var id: String

        func execute() async throws -> CommandOutput {
            GroupCommand.output(try await NodeOpener.with(globals) { try $0.groups.declineInvite(id) })
        }
    }
}
