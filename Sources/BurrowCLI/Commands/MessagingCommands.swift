import ArgumentParser
import Foundation
import Node

/// `burrow chat GROUP TEXT`.
struct ChatCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "chat", abstract: "Send a chat message (kind 9, plain text).")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The group.") var group: String
    @Argument(help: "The text.") var text: String

    func execute() async throws -> CommandOutput {
        let sent = try await NodeOpener.with(globals) { try await $0.groups.chat(group, text: text, timeout: globals.timeoutDuration) }
        return CommandOutput(fields: SentOutput.ids(sent), human: "sent to \(TerminalText.sanitized(sent.groupName))")
    }
}

/// `burrow location GROUP --lat F --lon F [--alt M] [--acc M] [--batt PCT]`.
struct LocationCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "location", abstract: "Share a location (kind 1, Whistle payload).")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The group.") var group: String
    @Option(parsing: .unconditional, help: "Latitude in degrees (south is negative).") var lat: Double
    @Option(parsing: .unconditional, help: "Longitude in degrees (west is negative).") var lon: Double
    @Option(parsing: .unconditional, help: "Altitude in meters.") var alt: Double?
    @Option(parsing: .unconditional, help: "Horizontal accuracy in meters.") var acc: Double?
    @Option(parsing: .unconditional, help: "Battery percentage.") var batt: Int?

    func execute() async throws -> CommandOutput {
        let sent = try await NodeOpener.with(globals) {
            try await $0.groups.shareLocation(group, latitude: lat, longitude: lon, altitude: alt, accuracy: acc, battery: batt.map(Int64.init),
                                       timeout: globals.timeoutDuration)
        }
        var location: [(String, JSONOutput)] = [("lat", .double(lat)), ("lon", .double(lon))]
        if let alt { location.append(("alt", .double(alt))) }
        if let acc { location.append(("acc", .double(acc))) }
        if let batt { location.append(("batt", .int(Int64(batt)))) }
        // Accuracy and battery only when given: "±0 m" would claim a precision nobody measured.
        var human = "location shared with \(TerminalText.sanitized(sent.groupName)): " + String(format: "%.5f, %.5f", lat, lon)
        if let acc { human += String(format: " ±%.0f m", acc) }
        if let batt { human += ", battery \(batt)%" }
        return CommandOutput(fields: SentOutput.ids(sent) + [("location", .object(location))], human: human)
    }
}

enum SentOutput {
    /// The ids a script needs; people read the group's name instead.
    static func ids(_ sent: SentMessage) -> [(String, JSONOutput)] {
        [("event_id", .string(sent.eventID.hex)), ("message_id", .string(sent.messageID.hex)), ("group_name", .string(sent.groupName))]
    }
}

/// `burrow leave GROUP`.
struct LeaveCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "leave", abstract: "Leave a group.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The group.") var group: String

    func execute() async throws -> CommandOutput {
        GroupCommand.output(try await NodeOpener.with(globals) { try await $0.groups.leave(group, timeout: globals.timeoutDuration) })
    }
}

/// `burrow messages GROUP [--limit N]`.
struct MessagesCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "messages", abstract: "Stored messages of a group.")
    @OptionGroup var globals: GlobalOptions
    @OptionGroup var freshness: SyncFlag
    @Argument(help: "The group.") var group: String
    @Option(parsing: .unconditional, help: "Only the newest N.") var limit: Int?

    func execute() async throws -> CommandOutput {
        if let limit, limit < 0 { throw CLIError(.invalid_input, "--limit must not be negative") }
        let messages = try await NodeOpener.with(globals) { node in
            try await freshness.apply(node, globals)
            return try node.groups.messages(group, limit: limit)
        }
        return CommandOutput(fields: [("messages", .array(messages.map(MarmotOutput.message)))],
                             human: messages.isEmpty ? "(no messages)" : messages.map(MarmotOutput.messageText).joined(separator: "\n"))
    }
}

/// `burrow locations GROUP`.
struct LocationsCommand: BurrowCommand {
    static let configuration = CommandConfiguration(commandName: "locations", abstract: "The latest location of each member (or their history).")
    @OptionGroup var globals: GlobalOptions
    @OptionGroup var freshness: SyncFlag
    @Argument(help: "The group.") var group: String
    @Option(help: "Also write an SVG map of the members' last locations to this file.") var svg: String?
    @Flag(help: "Every location kept, oldest first, instead of the latest.") var history = false
    @Option(help: "With --history or --gpx: only this member (a name, npub or key).") var member: String?
    @Option(parsing: .unconditional, help: "With --history or --gpx: only locations from this Unix time on.") var since: Int64?
    @Option(help: "Write the members' tracks as GPX 1.1 to this file.") var gpx: String?
    @Option(parsing: .unconditional, help: "Keep locations this many days (default 30; `run` deletes older ones).") var keep: Int64?

    func execute() async throws -> CommandOutput {
        if !history, gpx == nil, member != nil || since != nil { throw CLIError(.usage, "--member and --since go with --history or --gpx") }
        let gpxPath = gpx.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        let (locations, name, track) = try await NodeOpener.with(globals) { node in
            if let keep { try node.groups.setLocationRetention(days: keep) }
            try await freshness.apply(node, globals)
            let track = history || gpx != nil ? try node.groups.locationHistory(group, member: member, since: since) : []
            return (history ? track : try node.groups.locations(group), try node.groups.group(group).name, track)
        }
        if let gpxPath {
            do { try LocationGPX.document(title: name, history: track).write(toFile: gpxPath, atomically: true, encoding: .utf8) } catch {
                throw CLIError(.invalid_input, "cannot write the tracks to \(gpxPath)")
            }
        }
        // Absolute already when forwarded (resolved in the caller's directory); said in full.
        let svgPath = svg.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        if let svgPath {
            do { try LocationMap.svg(locations, title: name, time: { HumanTime.format(seconds: $0) }).write(toFile: svgPath, atomically: true, encoding: .utf8) } catch {
                throw CLIError(.invalid_input, "cannot write the map to \(svgPath)")
            }
        }
        var human = locations.isEmpty ? "(no locations)" : locations.map { entry -> String in
            let who = entry.name.map(TerminalText.sanitized) ?? MarmotOutput.npubPrefix(entry.member)
            let accuracy = entry.payload.accuracy > 0 ? String(format: " ±%.0f m", entry.payload.accuracy) : ""
            let battery = entry.payload.battery.map { ", battery \($0)%" } ?? ""
            return "\(who): " + String(format: "%.5f, %.5f", entry.payload.latitude, entry.payload.longitude)
                + "\(accuracy)\(battery) at \(MarmotOutput.time(entry.payload.timestamp))\(entry.stale && !history ? " (stale)" : "")"
        }.joined(separator: "\n")
        var fields: [(String, JSONOutput)] = [("locations", .array(locations.map(MarmotOutput.locationEntry)))]
        if let svgPath {
            human += "\nmap written to \(svgPath)"
            fields.append(("svg", .string(svgPath)))
        }
        if let gpxPath {
            human += "\ntracks written to \(gpxPath) (\(track.count) point\(track.count == 1 ? "" : "s"))"
            fields.append(("gpx", .string(gpxPath)))
        }
        if let keep {
            human += "\nlocations are kept \(keep) days"
            fields.append(("keep_days", .int(keep)))
        }
        return CommandOutput(fields: fields, human: human)
    }
}
