import ArgumentParser
import Nostr
import Node

/// `burrow profile set|show`: one's own name (kind 0) and other people's (issue 22).
struct ProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "profile", abstract: "Your name and others' (kind-0 profiles).",
                                                    subcommands: [SetProfile.self, Show.self])

    struct SetProfile: BurrowCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Publish your profile; fields not given keep their value, an empty one is removed.")
        @OptionGroup var globals: GlobalOptions
        @Option(help: "Your name, as family members will see it.") var name: String?
        @Option(help: "A line about you.") var about: String?
        @Option(help: "A picture URL.") var picture: String?

        func execute() async throws -> CommandOutput {
            guard name != nil || about != nil || picture != nil else {
                throw CLIError(.usage, "give at least one of --name, --about, --picture")
            }
            let (profile, event, results) = try await NodeOpener.with(globals) {
                try await $0.profiles.setProfile(name: name, about: about, picture: picture, timeout: globals.timeoutDuration)
            }
            let accepted = results.filter(\.accepted).map(\.url)
            var human = "profile published: \(ProfileOutput.title(profile))"
            human += accepted.isEmpty ? "\n  no relay accepted it yet (it is kept here; run `burrow profile set` again later)"
                                      : "\n  on \(accepted.joined(separator: ", "))"
            return CommandOutput(fields: [("profile", ProfileOutput.json(profile)), ("event_id", .string(event.id.hex)),
                                          ("relays", .array(accepted.map { .string($0) }))], human: human)
        }
    }

    struct Show: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show a profile (yours by default).")
        @OptionGroup var globals: GlobalOptions
        @OptionGroup var freshness: SyncFlag
        @Argument(help: "Whose: an npub, a key, or a group member's name.") var who: String?

        func execute() async throws -> CommandOutput {
            let profile = try await NodeOpener.with(globals) {
                try await $0.profiles.profile(who, sync: freshness.sync, timeout: globals.timeoutDuration)
            }
            var lines = [ProfileOutput.title(profile)]
            if let about = profile.about { lines.append("  about:   \(TerminalText.sanitized(about))") }
            if let picture = profile.picture { lines.append("  picture: \(TerminalText.sanitized(picture))") }
            if let at = profile.updatedAt { lines.append("  updated: \(HumanTime.format(seconds: at))") } else {
                lines.append("  no profile seen yet" + (freshness.sync ? "" : " (try --sync)"))
            }
            return CommandOutput(fields: [("profile", ProfileOutput.json(profile))], human: lines.joined(separator: "\n"))
        }
    }
}

enum ProfileOutput {
    static func json(_ p: ProfileView) -> JSONOutput {
        var fields: [(String, JSONOutput)] = [("pubkey", .string(p.pubkey)), ("npub", .string((try? PublicKey(hex: p.pubkey))?.npub ?? ""))]
        if let name = p.name { fields.append(("name", .string(name))) }
        if let about = p.about { fields.append(("about", .string(about))) }
        if let picture = p.picture { fields.append(("picture", .string(picture))) }
        fields.append(("updated_at", p.updatedAt.map { .int($0) } ?? .null))
        return .object(fields)
    }

    /// "Alice (npub1…)".
    static func title(_ p: ProfileView) -> String {
        let npub = (try? PublicKey(hex: p.pubkey))?.npub ?? p.pubkey
        return p.name.map { "\(TerminalText.sanitized($0)) (\(npub))" } ?? npub
    }
}
