import ArgumentParser
import Foundation
import Node
import QRCode

/// `burrow contact …` (Docs/protocols/pigeon-dm.md section 8).
struct ContactCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contact", abstract: "Direct-message contacts: your card, cards you add, safety numbers.",
        subcommands: [ContactCardCommand.self, ContactAddCommand.self, ContactListCommand.self, ContactVerifyCommand.self,
                      ContactRemoveCommand.self]
    )
}

/// `burrow contact card [--qr] [--nickname TEXT] [--relay URL]...`.
struct ContactCardCommand: BurrowCommand {
    static let configuration = CommandConfiguration(
        commandName: "card", abstract: "Your contact card (reissued when the nickname or relays change).")
    @OptionGroup var globals: GlobalOptions
    @Flag(help: "Also print the card as a QR code.") var qr = false
    @Option(help: "The nickname the card shows (at most 32 bytes).") var nickname: String?
    @Option(name: .customLong("relay"), help: "A relay where you read DMs (repeatable, at most 4; default: your first four).")
    var relays: [String] = []

    func execute() async throws -> CommandOutput {
        let card = try await NodeOpener.with(globals) {
            try await $0.directMessages.contactCard(nickname: nickname, relays: relays.isEmpty ? nil : relays, timeout: globals.timeoutDuration)
        }
        var fields = DMOutput.card(card)
        var human = card.card
        if qr {
            // Upper case: the alphanumeric mode (section 2.3), version 13 at level L for a usual card.
            let symbol = try QREncoder.encode(segments: [try .alphanumeric(card.qrText)], level: .low)
            fields.append(("qr", .array(TerminalRenderer.lines(symbol).map { .string($0) })))
            // At a terminal, black on white whatever its colours, so any camera reads it.
            let colored = !globals.json && ServingNode.current == nil && isatty(STDOUT_FILENO) == 1
            human += "\n" + TerminalRenderer.lines(symbol, ansiColors: colored).joined(separator: "\n")
        }
        return CommandOutput(fields: fields, human: human)
    }
}

/// `burrow contact add CARD [--name NAME]`.
struct ContactAddCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Verify and store someone's card (`-` reads stdin).")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The burrowcard1… text, or - for stdin.") var card: String
    @Option(help: "What to call the contact (default: its nickname).") var name: String?

    func execute() async throws -> CommandOutput {
        let text = card == "-" ? String(decoding: Console.readAllStdin(), as: UTF8.self) : card
        let (contact, introductions) = try await NodeOpener.with(globals) {
            (try $0.directMessages.addContact(card: text, name: name), try $0.feeds.introductions(ofCard: text))
        }
        var human = ["added \(DMOutput.contactText(contact))"]
        for intro in introductions {
            let note = intro.note.map { ": “\($0)”" } ?? ""
            human.append(intro.keysMatch
                ? "  introduced by \(intro.by)\(note) — the card's keys match the introduction"
                : "  \(intro.by) introduced someone with this identity but other keys\(note) — compare safety numbers before trusting them")
        }
        return CommandOutput(fields: [
            ("contact", DMOutput.contact(contact)),
            ("introduced_by", .array(introductions.map { .object([("name", .string($0.by)), ("note", $0.note.map { .string($0) } ?? .null),
                                                                  ("keys_match", .bool($0.keysMatch))]) })),
        ], human: human.joined(separator: "\n"))
    }
}

/// `burrow contact list`.
struct ContactListCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Your DM contacts.")
    @OptionGroup var globals: GlobalOptions

    func execute() async throws -> CommandOutput {
        let contacts = try await NodeOpener.with(globals) { try $0.directMessages.contacts() }
        return CommandOutput(fields: [("contacts", .array(contacts.map(DMOutput.contact)))],
                             human: contacts.isEmpty ? "(no contacts)" : contacts.map(DMOutput.contactText).joined(separator: "\n"))
    }
}

/// `burrow contact verify CONTACT [--match DIGITS] [--yes] [--unverify]`.
struct ContactVerifyCommand: BurrowCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Show the safety number; mark the contact verified once you compared it.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The contact.") var contact: String
    @Option(name: .customLong("match"), help: "The digits the contact read to you (spaces ignored).") var match: String?
    @Flag(help: "Mark verified without asking.") var yes = false
    @Flag(help: "Clear the verified mark.") var unverify = false

    func execute() async throws -> CommandOutput {
        if unverify, yes || match != nil { throw CLIError(.usage, "--unverify cannot be combined with --yes or --match") }
        var (view, number) = try await NodeOpener.with(globals) {
            try $0.directMessages.verifyContact(contact, match: match, confirm: yes, unverify: unverify)
        }
        // At a terminal, the user confirms after comparing the digits out of band.
        if !yes, !unverify, match == nil, !view.verified, !globals.json, ServingNode.current == nil, isatty(STDIN_FILENO) == 1 {
            Console.out(TerminalText.sanitized("Safety number with \(view.name):\n\(number)\nDoes it match what \(view.name) sees? [y/N] "))
            if let answer = readLine(), ["y", "yes"].contains(answer.lowercased().trimmingCharacters(in: .whitespaces)) {
                (view, number) = try await NodeOpener.with(globals) {
                    try $0.directMessages.verifyContact(contact, match: nil, confirm: true, unverify: false)
                }
            }
        }
        return CommandOutput(fields: [("contact", DMOutput.contact(view)), ("safety_number", .string(number))],
                             human: "safety number with \(view.name):\n\(number)\n\(view.verified ? "verified" : "not verified")")
    }
}

/// `burrow contact remove CONTACT`.
struct ContactRemoveCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Delete a contact with its session state.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The contact.") var contact: String

    func execute() async throws -> CommandOutput {
        let removed = try await NodeOpener.with(globals) { try $0.directMessages.removeContact(contact) }
        return CommandOutput(fields: [("contact", DMOutput.contact(removed))], human: "removed \(removed.name)")
    }
}

/// `burrow dm …`.
struct DMCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dm", abstract: "Direct messages (Noise XX + Double Ratchet, over relays and the mesh).",
        subcommands: [DMSendCommand.self, DMReadCommand.self]
    )
}

/// `burrow dm send CONTACT TEXT [--via auto|nostr|mesh]`.
struct DMSendCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "send", abstract: "Send a direct message.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The contact.") var contact: String
    @Argument(help: "The text.") var text: String
    @Option(help: "auto, nostr or mesh.") var via: String = "auto"

    func execute() async throws -> CommandOutput {
        guard let route = DMVia(rawValue: via) else { throw CLIError(.usage, "--via takes auto, nostr or mesh") }
        let message = try await NodeOpener.with(globals) { try await $0.sendDM(to: contact, text: text, via: route, timeout: globals.timeoutDuration) }
        return CommandOutput(fields: [("message", DMOutput.message(message))], human: DMOutput.messageText(message))
    }
}

/// `burrow dm read [CONTACT] [--limit N] [--sync]`.
struct DMReadCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "read", abstract: "Stored direct messages, oldest first.")
    @OptionGroup var globals: GlobalOptions
    @OptionGroup var freshness: SyncFlag
    @Argument(help: "Only this contact.") var contact: String?
    @Option(parsing: .unconditional, help: "Only the newest N.") var limit: Int?

    func execute() async throws -> CommandOutput {
        if let limit, limit < 0 { throw CLIError(.invalid_input, "--limit must not be negative") }
        let messages = try await NodeOpener.with(globals) { node in
            try await freshness.apply(node, globals)
            return try node.directMessages.readDMs(contact: contact, limit: limit)
        }
        return CommandOutput(fields: [("messages", .array(messages.map(DMOutput.message)))],
                             human: messages.isEmpty ? "(no messages)" : messages.map(DMOutput.messageText).joined(separator: "\n"))
    }
}

enum DMOutput {
    static func card(_ c: CardView) -> [(String, JSONOutput)] {
        [("card", .string(c.card)), ("identity", .string(c.identity)), ("static", .string(c.staticKey)), ("pubkey", .string(c.pubkey)),
         ("npub", .string(c.npub)), ("nickname", .string(c.nickname)), ("relays", .array(c.relays.map { .string($0) })),
         ("created_at", .int(Int64(clamping: c.createdAt)))]
    }

    static func contact(_ c: ContactView) -> JSONOutput {
        .object([
            ("name", .string(c.name)), ("identity", .string(c.identity)), ("pubkey", .string(c.pubkey)), ("npub", .string(c.npub)),
            ("nickname", .string(c.nickname)), ("relays", .array(c.relays.map { .string($0) })), ("state", .string(c.state)),
            ("verified", .bool(c.verified)), ("verified_at", c.verifiedAt.map { .int(Int64(clamping: $0)) } ?? .null),
            ("card_created_at", .int(Int64(clamping: c.cardCreatedAt))),
            ("session", c.session.map { s in
                .object([("id", .string(s.id)), ("role", .string(s.role)), ("established_at", .int(Int64(clamping: s.establishedAt))),
                         ("confirmed", .bool(s.confirmed))])
            } ?? .null),
        ])
    }

    static func contactText(_ c: ContactView) -> String {
        "\(c.name) (\(c.identity.prefix(16))…, \(c.state)\(c.verified ? ", verified" : ""))"
    }

    static func message(_ m: DMView) -> JSONOutput {
        .object([
            ("id", .string(m.id)), ("contact", .string(m.contact)), ("identity", .string(m.identity)),
            ("direction", .string(m.direction)), ("text", .string(m.text)), ("sent_at", .int(Int64(clamping: m.sentAt))),
            ("received_at", m.receivedAt.map { .int(Int64(clamping: $0)) } ?? .null), ("status", .string(m.status)),
            ("session_id", m.sessionID.map { .string($0) } ?? .null), ("verified", .bool(m.verified)),
        ])
    }

    static func messageText(_ m: DMView) -> String {
        let arrow = m.direction == "out" ? "→" : "←"
        return "[\(HumanTime.format(milliseconds: m.sentAt))] \(arrow) \(m.contact)\(m.verified ? "" : " (unverified)"): \(m.text) [\(m.status)]"
    }
}
