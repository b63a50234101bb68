import ArgumentParser
import Node

/// `burrow share start|stop|pause|resume|status`: our location shared with a group on its own,
/// by `burrow run`, from gpsd or a fixed position (issue 23).
struct ShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share", abstract: "Share your location with a group automatically (carried out by `burrow run`).",
        subcommands: [Start.self, Stop.self, Pause.self, Resume.self, Status.self])

    struct Start: BurrowCommand {
        static let configuration = CommandConfiguration(
            commandName: "start", abstract: "Share your location with GROUP on Whistle's schedule while `burrow run` goes.")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The group.") var group: String
        @Option(help: "gpsd[:HOST:PORT] (default), geoclue (GeoClue2 on the system D-Bus) or fixed:LAT,LON.") var source = "gpsd"
        @Option(help: "Between publishes while moving: 10s … 1h (default 1h); four times longer while still.") var interval = "1h"
        @Option(help: "Blur: off, 10m, 50m or 200m.") var fuzz = "off"
        @Option(help: "Share the battery level: auto or off.") var battery = "auto"

        func execute() async throws -> CommandOutput {
            let seconds = try ShareOutput.seconds(interval)
            let radius = try ShareOutput.meters(fuzz)
            guard battery == "auto" || battery == "off" else { throw CLIError(.invalid_input, "--battery is auto or off") }
            let view = try await NodeOpener.with(globals) {
                try $0.groups.startSharing(group, source: source, interval: seconds, fuzz: radius, battery: battery == "auto")
            }
            return CommandOutput(fields: [("share", ShareOutput.json(view))],
                                 human: "sharing your location with \(TerminalText.sanitized(view.groupName)) " + ShareOutput.settings(view)
                                     + "\n  `burrow run` publishes it; `burrow share status` shows how it goes")
        }
    }

    struct Stop: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "stop", abstract: "Stop sharing your location with GROUP.")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The group.") var group: String

        func execute() async throws -> CommandOutput {
            let name = try await NodeOpener.with(globals) { node in
                let name = try node.groups.group(group).name
                try node.groups.stopSharing(group)
                return name
            }
            return CommandOutput(fields: [("stopped", .bool(true))], human: "no longer sharing your location with \(TerminalText.sanitized(name))")
        }
    }

    struct Pause: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pause sharing (every group, or GROUP's).")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The group (all when left out).") var group: String?

        func execute() async throws -> CommandOutput {
            let views = try await NodeOpener.with(globals) { try $0.groups.setSharingPaused(true, group: group) }
            return CommandOutput(fields: [("shares", .array(views.map(ShareOutput.json)))],
                                 human: views.map { "paused: \(TerminalText.sanitized($0.groupName))" }.joined(separator: "\n"))
        }
    }

    struct Resume: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume sharing (every group, or GROUP's).")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The group (all when left out).") var group: String?

        func execute() async throws -> CommandOutput {
            let views = try await NodeOpener.with(globals) { try $0.groups.setSharingPaused(false, group: group) }
            return CommandOutput(fields: [("shares", .array(views.map(ShareOutput.json)))],
                                 human: views.map { "sharing again: \(TerminalText.sanitized($0.groupName))" }.joined(separator: "\n"))
        }
    }

    struct Status: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "What is shared with whom, and how it goes.")
        @OptionGroup var globals: GlobalOptions

        func execute() async throws -> CommandOutput {
            let views = try await NodeOpener.with(globals) { try $0.groups.shares() }
            let human = views.isEmpty ? "(not sharing your location with any group)" : views.map { view in
                var lines = ["\(TerminalText.sanitized(view.groupName)): \(view.paused ? "paused" : "sharing") " + ShareOutput.settings(view)]
                lines.append("  last fix: " + (view.lastFixAt.map { HumanTime.format(seconds: $0) } ?? "none yet")
                             + ", last published: " + (view.lastPublishAt.map { HumanTime.format(seconds: $0) } ?? "not yet"))
                if let schedule = view.schedule, !view.paused {
                    lines.append("  " + (schedule.stationary ? "standing still" : "moving") + ", every \(ShareOutput.duration(schedule.intervalInForce))"
                                 + ", next publish " + HumanTime.format(seconds: schedule.nextPublishAt))
                }
                if let error = view.lastError { lines.append("  problem: \(TerminalText.sanitized(error))") }
                return lines.joined(separator: "\n")
            }.joined(separator: "\n")
            return CommandOutput(fields: [("shares", .array(views.map(ShareOutput.json)))], human: human)
        }
    }
}

enum ShareOutput {
    static func json(_ v: ShareView) -> JSONOutput {
        var fields: [(String, JSONOutput)] = [
            ("mls_group_id", .string(v.mlsGroupID)), ("group_name", .string(v.groupName)), ("source", .string(v.source)),
            ("interval", .int(v.interval)), ("fuzz", .int(v.fuzz)), ("battery", .bool(v.battery)), ("paused", .bool(v.paused)),
        ]
        fields.append(("last_fix_at", v.lastFixAt.map { .int($0) } ?? .null))
        fields.append(("last_publish_at", v.lastPublishAt.map { .int($0) } ?? .null))
        fields.append(("error", v.lastError.map { .string($0) } ?? .null))
        fields.append(("error_code", v.lastErrorCode.map { .string($0) } ?? .null))
        fields.append(("stationary", v.schedule.map { .bool($0.stationary) } ?? .null))
        fields.append(("interval_in_force", v.schedule.map { .int($0.intervalInForce) } ?? .null))
        fields.append(("next_publish_at", v.schedule.map { .int($0.nextPublishAt) } ?? .null))
        return .object(fields)
    }

    static func settings(_ v: ShareView) -> String {
        "from \(v.source), every \(duration(v.interval)) (×4 while still)" + (v.fuzz > 0 ? ", blurred \(v.fuzz) m" : "")
            + (v.battery ? ", with battery" : "")
    }

    static func duration(_ seconds: Int64) -> String {
        if seconds % 3600 == 0 { return "\(seconds / 3600) h" }
        if seconds % 60 == 0 { return "\(seconds / 60) min" }
        return "\(seconds) s"
    }

    /// `10s`, `5m`, `1h` or plain seconds.
    static func seconds(_ text: String) throws -> Int64 {
        let units: [(String, Int64)] = [("h", 3600), ("m", 60), ("s", 1)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            guard let value = Int64(text.dropLast()), value > 0, value <= 3600 else { break }
            return value * factor
        }
        if let value = Int64(text) { return value }
        throw CLIError(.invalid_input, "--interval is a duration like 10s, 5m or 1h (10 s to 1 h)")
    }

    /// `off`, `10m`, `50m`, `200m`.
    static func meters(_ text: String) throws -> Int64 {
        switch text {
        case "off", "0": return 0
        case "10m": return 10
        case "50m": return 50
        case "200m": return 200
        default: throw CLIError(.invalid_input, "--fuzz is off, 10m, 50m or 200m")
        }
    }
}
