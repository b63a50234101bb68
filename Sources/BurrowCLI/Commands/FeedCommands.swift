import ArgumentParser
import Foundation
import Node

/// `burrow feed …` (Docs/cli.md, feed.md): your feed, your contacts' feeds, their keys and carriers.
struct FeedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feed", abstract: "Your feed and your contacts' feeds: posts, reactions, profile, follows.",
        subcommands: [FeedPostCommand.self, FeedReactCommand.self, FeedProfileCommand.self, FeedRetractCommand.self, FeedIntroduceCommand.self,
                      FeedReadCommand.self, FeedFollowCommand.self, FeedUnfollowCommand.self, FeedStatusCommand.self, FeedRelayCommand.self]
    )
}

struct FeedPostCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "post", abstract: "Write a post to your feed.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The text (1 to 2,000 characters).") var text: String
    @Option(help: "Who reads it: contacts (default), self (your journal) or group:GROUP.") var audience = "contacts"
    @Option(name: .customLong("reply-to"), help: "The id of the entry this answers.") var replyTo: String?
    @Option(name: .customLong("mention"), help: "A contact the post mentions (repeatable).") var mentions: [String] = []

    func execute() async throws -> CommandOutput {
        let chosen = try FeedService.PostAudience(audience)
        let entry = try await NodeOpener.with(globals) {
            try await $0.feeds.post(text, audience: chosen, replyTo: replyTo, mentions: mentions, timeout: globals.timeoutDuration)
        }
        return FeedOutput.written(entry)
    }
}

struct FeedReactCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "react", abstract: "React to an entry with an emoji.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The entry's id (or its first 8 characters or more).") var id: String
    @Argument(help: "The emoji (1 to 4 characters).") var emoji: String

    func execute() async throws -> CommandOutput {
        let entry = try await NodeOpener.with(globals) { try await $0.feeds.react(to: id, emoji: emoji, timeout: globals.timeoutDuration) }
        return FeedOutput.written(entry)
    }
}

struct FeedProfileCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "profile", abstract: "Set the name your contacts see on your feed.")
    @OptionGroup var globals: GlobalOptions
    @Option(help: "Your display name (1 to 64 characters).") var name: String?

    func execute() async throws -> CommandOutput {
        let entry = try await NodeOpener.with(globals) { try await $0.feeds.profile(name: name, timeout: globals.timeoutDuration) }
        return FeedOutput.written(entry)
    }
}

struct FeedRetractCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "retract", abstract: "Retract one of your entries (contacts stop showing it).")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The entry's id.") var id: String
    @Option(help: "retracted (default), error or spam.") var reason: String?

    func execute() async throws -> CommandOutput {
        let entry = try await NodeOpener.with(globals) { try await $0.feeds.retract(id, reason: reason, timeout: globals.timeoutDuration) }
        return FeedOutput.written(entry)
    }
}

struct FeedIntroduceCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "introduce", abstract: "Introduce one contact to another in your feed.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The contact you introduce.") var contact: String
    @Option(help: "The contact you introduce them to.") var to: String
    @Option(help: "A note (1 to 256 characters).") var note: String?

    func execute() async throws -> CommandOutput {
        let entry = try await NodeOpener.with(globals) { try await $0.feeds.introduce(contact, to: to, note: note, timeout: globals.timeoutDuration) }
        return FeedOutput.written(entry)
    }
}

struct FeedReadCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "read", abstract: "Entries of your feed and the feeds you follow, newest first.")
    @OptionGroup var globals: GlobalOptions
    @Option(help: "Only this contact's feed (you: your own).") var author: String?
    @Option(parsing: .unconditional, help: "Only entries from this Unix time on.") var since: Int64?
    @Option(parsing: .unconditional, help: "At most N entries (default 50).") var limit: Int = 50

    func execute() async throws -> CommandOutput {
        guard (1...10_000).contains(limit) else { throw CLIError(.invalid_input, "--limit takes 1 to 10,000") }
        if let since, since < 0 { throw CLIError(.invalid_input, "--since must not be negative") }
        let entries = try await NodeOpener.with(globals) { try $0.feeds.read(author: author, since: since, limit: limit) }
        return CommandOutput(fields: [("entries", .array(entries.map(FeedOutput.entry)))],
                             human: entries.isEmpty ? "(no entries)" : entries.map(FeedOutput.entryText).joined(separator: "\n"))
    }
}

struct FeedFollowCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "follow", abstract: "Follow a contact's feed (contacts are followed once keys are exchanged).")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The contact.") var contact: String

    func execute() async throws -> CommandOutput {
        let feed = try await NodeOpener.with(globals) { try $0.feeds.follow(contact, true) }
        return CommandOutput(fields: [("feed", FeedOutput.status(feed))], human: "following \(feed.name)'s feed")
    }
}

struct FeedUnfollowCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "unfollow", abstract: "Stop following a contact's feed (its stored entries go).")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The contact.") var contact: String

    func execute() async throws -> CommandOutput {
        let feed = try await NodeOpener.with(globals) { try $0.feeds.follow(contact, false) }
        return CommandOutput(fields: [("feed", FeedOutput.status(feed))], human: "no longer following \(feed.name)'s feed")
    }
}

struct FeedStatusCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Each feed: entries held, gaps, last sync, key age.")
    @OptionGroup var globals: GlobalOptions

    func execute() async throws -> CommandOutput {
        let (feeds, relay) = try await NodeOpener.with(globals) { (try $0.feeds.status(), try $0.feeds.relayCarrier()) }
        let lines = feeds.map(FeedOutput.statusText) + [relay ? "your feed also goes through your relays (feed relay off to stop)"
                                                                  : "your feed goes only to contacts you meet nearby (feed relay on to use your relays too)"]
        return CommandOutput(fields: [("feeds", .array(feeds.map(FeedOutput.status))), ("relay", .bool(relay))], human: lines.joined(separator: "\n"))
    }
}

struct FeedRelayCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "relay", abstract: "Carry your feed through your relays too (off by default).")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "on or off.") var setting: String

    func execute() async throws -> CommandOutput {
        guard setting == "on" || setting == "off" else { throw CLIError(.usage, "feed relay takes on or off") }
        try await NodeOpener.with(globals) { try $0.feeds.setRelayCarrier(setting == "on") }
        return CommandOutput(fields: [("relay", .bool(setting == "on"))],
                             human: setting == "on" ? "Your feed now also goes to your relays (they see its size and timing, not its contents)."
                                 : "Your feed goes only to contacts you meet nearby.")
    }
}

enum FeedOutput {
    static func written(_ e: FeedEntryView) -> CommandOutput {
        let whom: String
        switch e.audience {
        case "contacts": whom = "your contacts"
        case "self": whom = "only you (journal)"
        default: whom = e.audience.hasPrefix("group:") ? "members of " + e.audience.dropFirst(6) : e.audience
        }
        return CommandOutput(fields: [("entry", entry(e))], human: "wrote \(e.type.replacingOccurrences(of: "_", with: " ")) \(e.id.prefix(10)) for \(whom)")
    }

    static func entry(_ e: FeedEntryView) -> JSONOutput {
        var fields: [(String, JSONOutput)] = [
            ("id", .string(e.id)), ("author", .string(e.author)), ("own", .bool(e.own)), ("sequence", .int(e.sequence)),
            ("timestamp", .int(e.timestamp)), ("type", .string(e.type)), ("audience", .string(e.audience)), ("status", .string(e.status)),
        ]
        let optional: [(String, String?)] = [("body", e.body), ("reply_to", e.replyTo), ("target", e.target), ("emoji", e.emoji),
                                             ("display_name", e.displayName), ("note", e.note), ("introduced", e.introduced)]
        for (name, value) in optional { if let value { fields.append((name, .string(value))) } }
        return .object(fields)
    }

    static func entryText(_ e: FeedEntryView) -> String {
        let when = HumanTime.format(seconds: e.timestamp)
        let head = "\(when)  \(e.author)"
        let what: String
        switch e.status {
        case "ok":
            switch e.type {
            case "post": what = (e.replyTo != nil ? "(reply) " : "") + (e.body ?? "")
            case "reaction": what = "reacted \(e.emoji ?? "") to \(e.target?.prefix(10) ?? "")"
            case "profile_update": what = e.displayName.map { "is now called \($0)" } ?? "updated their profile"
            case "tombstone": what = "retracted \(e.target?.prefix(10) ?? "an entry")"
            case "contact_introduction":
                // Someone we have no card of is named by a feed id prefix only: say so plainly.
                let whom = e.introduced.map { $0.hasPrefix("feed-") ? "someone new (\($0))" : $0 } ?? "someone"
                what = "introduced \(whom)" + (e.note.map { ": \($0)" } ?? "") + (whom.hasPrefix("someone") ? " — add their card to connect" : "")
            case "key_rotation": what = "changed their feed keys"
            default: what = e.type
            }
        case "tombstoned": what = "(retracted)"
        case "no_key": what = "(can't read this yet: no key for it)"
        case "opaque": what = "(\(e.type): a kind this version doesn't show)"
        default: what = "(unreadable: \(e.status.replacingOccurrences(of: "_", with: " ")))"
        }
        let audience = e.audience == "contacts" ? "" : "  [\(e.audience == "self" ? "journal" : e.audience)]"
        return "\(head): \(what)\(audience)  · \(e.id.prefix(10))"
    }

    static func status(_ f: FeedStatusView) -> JSONOutput {
        var fields: [(String, JSONOutput)] = [
            ("name", .string(f.name)), ("feed_id", .string(f.feedID)), ("own", .bool(f.own)), ("following", .bool(f.following)),
            ("accepted", f.accepted.map { .array($0.map { .int($0) }) } ?? .null), ("held", .int(Int64(f.held))), ("gaps", .int(Int64(f.gaps))),
            ("flagged", .bool(f.flagged)), ("evidence", .int(Int64(f.evidence))), ("last_sync_at", f.lastSyncAt.map { .int($0 / 1000) } ?? .null),
            ("pair_key_age_days", f.pairKeyAgeDays.map { .int($0) } ?? .null),
        ]
        if let name = f.displayName { fields.append(("display_name", .string(name))) }
        return .object(fields)
    }

    static func statusText(_ f: FeedStatusView) -> String {
        let count = f.accepted.map { $0[1] - $0[0] + 1 } ?? 0
        var parts = ["\(f.name)\(f.own ? " (your feed)" : ""): \(count) entr\(count == 1 ? "y" : "ies")"]
        if !f.own {
            if !f.following { parts.append("not followed") }
            if f.held > 0 { parts.append("\(f.held) waiting for earlier ones") }
            if f.gaps > 0 { parts.append("\(f.gaps) gap\(f.gaps == 1 ? "" : "s")") }
            parts.append(f.lastSyncAt.map { "last synced \(HumanTime.format(seconds: $0 / 1000))" } ?? "never synced")
            parts.append(f.pairKeyAgeDays.map { $0 == 0 ? "keys exchanged today" : "keys exchanged \($0) day\($0 == 1 ? "" : "s") ago" }
                ?? "no keys exchanged yet (they go with your first direct messages)")
        }
        if f.flagged { parts.append("FLAGGED: \(f.evidence) tampered or conflicting cop\(f.evidence == 1 ? "y" : "ies") kept as evidence") }
        return parts.joined(separator: ", ")
    }
}
