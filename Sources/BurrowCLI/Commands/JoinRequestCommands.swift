import ArgumentParser
import Marmot
import Node
import Nostr

/// `burrow join request GROUP_ID|LINK --inviter KEY [--name NAME]`: Whistle's kind-1080 join
/// request, gift-wrapped to the group's admin with a fresh KeyPackage.
struct JoinRequestCommand: BurrowCommand {
    static let configuration = CommandConfiguration(
        commandName: "request", abstract: "Ask a group's admin over relays to add us (a kind-1080 join request).",
        discussion: "The admin sees it with `burrow invite requests` and approves it by hand; the welcome then shows in `burrow invite list`.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The MLS group id (hex), or a whistle://invite/… link.") var group: String
    @Option(name: .customLong("inviter"), help: "The admin to ask (npub or hex); a link names it.") var inviter: String?
    @Option(name: .customLong("name"), help: "What to call us in the request (1 to 64 bytes).") var name: String?

    func execute() async throws -> CommandOutput {
        let target = try resolveTarget()
        let sent = try await NodeOpener.with(globals) { node in
            try await node.groups.requestToJoin(groupID: target.groupID, inviter: target.inviter, name: name, extraRelays: target.relays,
                                         timeout: globals.timeoutDuration)
        }
        return CommandOutput(
            fields: [("request_id", .string(sent.requestID)), ("group_id", .string(sent.groupID)), ("inviter", .string(sent.inviter)),
                     ("key_package", .string(sent.keyPackage)), ("relays", .array(sent.relays.map { .string($0) }))],
            human: "asked \(sent.inviter) to join group \(sent.groupID) (request \(sent.requestID)); once approved, "
                + "`burrow sync` and `burrow invite list` show the invite")
    }

    /// The group, the inviter and extra relays, from a link or from the id and `--inviter`.
    private func resolveTarget() throws -> (groupID: String, inviter: PublicKey, relays: [String]) {
        let explicit = try inviter.map(KeyArgument.publicKey)
        guard WhistleInviteLink.looksLikeLink(group) else {
            guard let explicit else { throw CLIError(.usage, "--inviter KEY is required with a group id (a whistle://invite/ link names the inviter)") }
            return (group, explicit, [])
        }
        let link = try WhistleInviteLink.parse(group)
        if let explicit, explicit != link.inviter {
            throw CLIError(.invalid_input, "--inviter \(explicit.hex) is not the link's inviter \(link.inviter.hex)")
        }
        return (link.groupID, link.inviter, link.relay.map { [$0.string] } ?? [])
    }
}

/// `burrow invite requests|approve|reject`: join requests received as a group's admin.
extension InviteCommand {
    struct Requests: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "requests", abstract: "Pending join requests, for admins.")
        @OptionGroup var globals: GlobalOptions
        @OptionGroup var freshness: SyncFlag
        @Argument(help: "Only this group's requests.") var group: String?

        func execute() async throws -> CommandOutput {
            let requests = try await NodeOpener.with(globals) { node in
                try await freshness.apply(node, globals)
                return try node.groups.joinRequests(group: group)
            }
            return CommandOutput(fields: [("requests", .array(requests.map(JoinRequestOutput.request)))],
                                 human: requests.isEmpty ? "(no join requests)" : requests.map(JoinRequestOutput.text).joined(separator: "\n"))
        }
    }

    struct Approve: BurrowCommand {
        static let configuration = CommandConfiguration(
            commandName: "approve", abstract: "Add the sender of a join request to its group (admins).")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The request id (or a unique prefix, at least 8 hex digits).") var id: String

        func execute() async throws -> CommandOutput {
            GroupCommand.outputWarning(try await NodeOpener.with(globals) { try await $0.groups.approveJoinRequest(id, timeout: globals.timeoutDuration) },
                                       json: globals.json)
        }
    }

    struct Reject: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "reject", abstract: "Drop a join request.")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The request id (or a unique prefix, at least 8 hex digits).") var id: String

        func execute() async throws -> CommandOutput {
            let rejected = try await NodeOpener.with(globals) { try $0.groups.rejectJoinRequest(id) }
            return CommandOutput(fields: [("request", JoinRequestOutput.request(rejected))], human: "rejected " + JoinRequestOutput.text(rejected))
        }
    }
}

/// JSON and text forms of a join request.
enum JoinRequestOutput {
    static func request(_ r: JoinRequestView) -> JSONOutput {
        .object([
            ("id", .string(r.id)), ("group", .string(r.mlsGroupID)), ("group_name", .string(r.groupName)),
            ("nostr_group_id", .string(r.nostrGroupID)), ("from", .string(r.from)), ("name", r.name.map { .string($0) } ?? .null),
            ("created_at", .int(r.createdAt)), ("key_package", .string(r.keyPackage)), ("state", .string(r.state)),
            ("rejoin", .bool(r.rejoin)),
        ])
    }

    static func text(_ r: JoinRequestView) -> String {
        let who = r.name.map { "\"\(printable($0))\" (\(r.from))" } ?? r.from
        if r.rejoin {
            return "join request \(r.id): \(who) lost their state of \"\(printable(r.groupName))\" [\(r.mlsGroupID.prefix(16))]"
                + " (restored from a backup) and asks to be re-added"
        }
        return "join request \(r.id): \(who) asks to join \"\(printable(r.groupName))\" [\(r.mlsGroupID.prefix(16))]"
    }

    /// The joiner chose the name: one line, sanitized for the terminal.
    static func printable(_ text: String) -> String {
        TerminalText.sanitized(text.replacingOccurrences(of: "\n", with: "?").replacingOccurrences(of: "\t", with: "?"))
    }
}
