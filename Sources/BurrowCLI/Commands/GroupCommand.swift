import ArgumentParser
import Node

/// `burrow group …`.
struct GroupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group", abstract: "Create and manage Marmot groups.",
        subcommands: [Create.self, Add.self, Remove.self, Rename.self, Admins.self, Relays.self, List.self, Show.self, Tree.self,
                      Requests.self, SelfUpdate.self])

    static func output(_ view: GroupView) -> CommandOutput {
        CommandOutput(fields: [("group", MarmotOutput.group(view))], human: MarmotOutput.groupText(view))
    }

    /// For commands that bring others in: the group plus a `warnings` list (also on stderr).
    static func outputWarning(_ view: GroupView, json: Bool, more: [String] = []) -> CommandOutput {
        let warnings = [view.reachabilityWarning].compactMap { $0 } + more
        if !json { for warning in warnings { Console.err("warning: \(warning)") } }
        return CommandOutput(fields: [("group", MarmotOutput.group(view)), ("warnings", .array(warnings.map { .string($0) }))],
                             human: MarmotOutput.groupText(view))
    }

    struct Create: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a group and invite members.")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The group's name.") var name: String
        @Option(help: "A description.") var description: String = ""
        @Option(name: .customLong("invite"), help: "A key to invite (npub or hex; repeatable).") var invites: [String] = []
        @Option(name: .customLong("admin"), help: "Another admin among the invitees (repeatable).") var admins: [String] = []

        func execute() async throws -> CommandOutput {
            let invitees = try KeyArgument.publicKeys(invites)
            let adminKeys = try KeyArgument.publicKeys(admins)
            let (view, namesake) = try await NodeOpener.with(globals) { node in
                let view = try await node.groups.createGroup(name: name, description: description, invitees: invitees, admins: adminKeys,
                                                      timeout: globals.timeoutDuration)
                let namesake = try node.groups.list().contains { $0.mlsGroupID != view.mlsGroupID && $0.name.lowercased() == name.lowercased() }
                return (view, namesake)
            }
            // Two groups of one name make every later `chat NAME` ambiguous: said at once.
            let same = namesake ? ["another group of yours is already called \(name): use this one's id (\(view.nostrGroupID.prefix(12))) "
                                   + "or `burrow group rename` to tell them apart"] : []
            return GroupCommand.outputWarning(view, json: globals.json, more: same)
        }
    }

    struct Add: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add members (admins only).")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The group.") var group: String
        @Argument(help: "Keys to add (npub or hex).") var keys: [String]

        func execute() async throws -> CommandOutput {
            let parsed = try KeyArgument.publicKeys(keys)
            return GroupCommand.outputWarning(try await NodeOpener.with(globals) {
                try await $0.groups.addMembers(group, keys: parsed, timeout: globals.timeoutDuration)
            }, json: globals.json)
        }
    }

    struct Remove: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove members (admins only).")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The group.") var group: String
        @Argument(help: "Keys to remove (npub or hex).") var keys: [String]

        func execute() async throws -> CommandOutput {
            let parsed = try KeyArgument.publicKeys(keys)
            return GroupCommand.output(try await NodeOpener.with(globals) {
                try await $0.groups.removeMembers(group, keys: parsed, timeout: globals.timeoutDuration)
            })
        }
    }

    struct Rename: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "rename", abstract: "Rename the group (admins only).")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The group.") var group: String
        @Argument(help: "The new name.") var name: String
        @Option(help: "A new description.") var description: String?

        func execute() async throws -> CommandOutput {
            GroupCommand.output(try await NodeOpener.with(globals) {
                try await $0.groups.updateGroup(group, name: name, description: description, timeout: globals.timeoutDuration)
            })
        }
    }

    struct Admins: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "admins", abstract: "Add or remove admins (admins only).")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The group.") var group: String
        @Option(name: .customLong("add"), help: "A member to make admin (repeatable).") var add: [String] = []
        @Option(name: .customLong("remove"), help: "An admin to demote (repeatable).") var remove: [String] = []

        func execute() async throws -> CommandOutput {
            let adds = try KeyArgument.publicKeys(add)
            let removes = try KeyArgument.publicKeys(remove)
            guard !adds.isEmpty || !removes.isEmpty else { throw CLIError(.invalid_input, "give --add or --remove") }
            return GroupCommand.output(try await NodeOpener.with(globals) {
                try await $0.groups.changeAdmins(group, add: adds, remove: removes, timeout: globals.timeoutDuration)
            })
        }
    }

    struct Relays: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "relays", abstract: "Change the group's relays (admins only).")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The group.") var group: String
        @Option(name: .customLong("add"), help: "A relay to add (repeatable).") var add: [String] = []
        @Option(name: .customLong("remove"), help: "A relay to remove (repeatable).") var remove: [String] = []

        func execute() async throws -> CommandOutput {
            guard !add.isEmpty || !remove.isEmpty else { throw CLIError(.invalid_input, "give --add or --remove") }
            return GroupCommand.outputWarning(try await NodeOpener.with(globals) {
                try await $0.groups.changeRelays(group, add: add, remove: remove, timeout: globals.timeoutDuration)
            }, json: globals.json)
        }
    }

    struct SelfUpdate: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "self-update", abstract: "Rotate our leaf keys in the group.")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The group.") var group: String

        func execute() async throws -> CommandOutput {
            GroupCommand.output(try await NodeOpener.with(globals) { try await $0.groups.selfUpdate(group, timeout: globals.timeoutDuration) })
        }
    }

    struct List: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List groups.")
        @OptionGroup var globals: GlobalOptions
        @OptionGroup var freshness: SyncFlag

        func execute() async throws -> CommandOutput {
            let groups = try await NodeOpener.with(globals) { node in
                try await freshness.apply(node, globals)
                return try node.groups.list()
            }
            return CommandOutput(fields: [("groups", .array(groups.map(MarmotOutput.group)))],
                                 human: groups.isEmpty ? "(no groups)" : groups.map(MarmotOutput.groupText).joined(separator: "\n"))
        }
    }

    struct Show: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one group.")
        @OptionGroup var globals: GlobalOptions
        @OptionGroup var freshness: SyncFlag
        @Argument(help: "The group.") var group: String

        func execute() async throws -> CommandOutput {
            GroupCommand.output(try await NodeOpener.with(globals) { node in
                try await freshness.apply(node, globals)
                return try node.groups.group(group)
            })
        }
    }

    struct Tree: BurrowCommand {
        static let configuration = CommandConfiguration(
            commandName: "tree", abstract: "Show the group's public ratchet tree (to compare members' views).")
        @OptionGroup var globals: GlobalOptions
        @OptionGroup var freshness: SyncFlag
        @Argument(help: "The group.") var group: String

        func execute() async throws -> CommandOutput {
            let tree = try await NodeOpener.with(globals) { node in
                try await freshness.apply(node, globals)
                return try node.groups.ratchetTree(group)
            }
            return CommandOutput(
                fields: [("epoch", .int(Int64(clamping: tree.epoch))), ("tree_hash", .string(tree.treeHash)),
                         ("ratchet_tree", .string(tree.ratchetTree))],
                human: "epoch \(tree.epoch)\n  tree_hash    \(tree.treeHash)\n  ratchet_tree \(tree.ratchetTree.count / 2) bytes")
        }
    }

    struct Requests: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "requests", abstract: "Pending leave requests, for admins.")
        @OptionGroup var globals: GlobalOptions
        @OptionGroup var freshness: SyncFlag
        @Argument(help: "The group.") var group: String

        func execute() async throws -> CommandOutput {
            let requests = try await NodeOpener.with(globals) { node in
                try await freshness.apply(node, globals)
                return try node.groups.leaveRequests(group)
            }
            return CommandOutput(
                fields: [("requests", .array(requests.map { .object([("member", .string($0.member)), ("created_at", .int($0.createdAt))]) }))],
                human: requests.isEmpty ? "(no leave requests)" : requests.map { "\($0.member) asked to leave at \($0.createdAt)" }
                    .joined(separator: "\n"))
        }
    }
}
