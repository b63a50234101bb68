import ArgumentParser
import Foundation
import Node
import Nostr
import RelayClient

/// `burrow publish`: signs a plain event with the identity key and publishes it.
struct PublishCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "publish", abstract: "Sign and publish a plain event.")
    @OptionGroup var globals: GlobalOptions
    @Option(parsing: .unconditional, help: "Event kind.") var kind: Int
    @Option(help: "Event content.") var content: String
    @Option(name: .customLong("tag"), help: "A tag as a JSON array of strings, e.g. '[\"t\",\"x\"]' (repeatable).")
    var tags: [String] = []

    func execute() async throws -> CommandOutput {
        let parsedTags = try tags.map(Self.parseTag)
        let (event, results) = try await NodeOpener.with(globals) {
            try await $0.gateway.publish(kind: kind, content: content, tags: parsedTags, timeout: globals.timeoutDuration)
        }
        if !results.contains(where: \.accepted) {
            let reasons = results.map { "\($0.url): \($0.error.map { "\($0)" } ?? $0.message)" }.joined(separator: "; ")
            let code: CLIError.Code
            if results.contains(where: { $0.error == nil }) {
                code = .relay_rejected  // a relay answered OK false
            } else if results.allSatisfy({ if case .timeout = $0.error { return true } else { return false } }) {
                code = .timeout
            } else {
                code = .relay_unreachable
            }
            throw CLIError(code, "no relay accepted \(event.id.hex): \(reasons)")
        }
        let relayFields: [JSONOutput] = results.map {
            .object([("url", .string($0.url)), ("accepted", .bool($0.accepted)), ("message", .string($0.message))])
        }
        let human = (["event \(event.id.hex)"] + results.map { "  \($0.url): \($0.accepted ? "accepted" : "rejected") \($0.message)" })
            .joined(separator: "\n")
        return CommandOutput(fields: [("event_id", .string(event.id.hex)), ("relays", .array(relayFields))], human: human)
    }

    static func parseTag(_ text: String) throws -> [String] {
        guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8)),
              let array = value as? [Any], !array.isEmpty,
              let strings = array as? [String], strings.count == array.count
        else { throw CLIError(.invalid_input, "a tag must be a non-empty JSON array of strings: \(text)") }
        return strings
    }
}

/// `burrow fetch --filter JSON`: one NIP-01 filter, paginated; prints the verified events.
struct FetchCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "fetch", abstract: "Fetch events matching one NIP-01 filter.")
    @OptionGroup var globals: GlobalOptions
    @Option(help: "A NIP-01 filter as JSON.") var filter: String

    func execute() async throws -> CommandOutput {
        let parsed: Filter
        do { parsed = try Filter(json: Array(filter.utf8)) } catch {
            throw CLIError(.invalid_input, "not a NIP-01 filter: \(error)")
        }
        let events = try await NodeOpener.with(globals) { try await $0.gateway.fetch(parsed, timeout: globals.timeoutDuration) }
        return CommandOutput(
            fields: [("events", .array(events.map { .raw($0.jsonString) }))],
            human: events.map(\.jsonString).joined(separator: "\n")
        )
    }
}
