import ArgumentParser
import Foundation
import Mesh
import Node
import Nostr

/// `burrow invite nearby GROUP [--expires S]`: a beacon and a 6-digit code over the mesh;
/// JSON lines while it is open, the joined member (or the error) last.
struct InviteNearbyCommand: ForwardableCommand {
    static let configuration = CommandConfiguration(commandName: "nearby", abstract: "Invite someone standing nearby (admins).")
    @OptionGroup var globals: GlobalOptions
    @OptionGroup var meshOptions: MeshOptions
    @Argument(help: "The group (name, id or a unique prefix).") var group: String
    @Option(parsing: .unconditional, help: "Seconds the invite stays open (60–900).") var expires: Int = 300

    mutating func runAsync() async throws {
        let json = globals.json
        let globals = self.globals
        let meshOptions = self.meshOptions
        let group = self.group
        let expires = self.expires
        try await CommandRunner.run(globals) {
            let joined = try await NodeOpener.with(globals) { node in
                try await MeshStarter.withMesh(meshOptions, node: node) { mesh in
                    // Forwarded into `run`, the node keeps processing while the invite is open.
                    try await NodeMailbox.yieldingTurn {
                        try await node.groups.hostNearbyInvite(group, expiresIn: expires, mesh: mesh, timeout: globals.timeoutDuration) { event in
                            // The code is needed now: forwarded, it goes to the caller as progress.
                            Console.progress(json ? NearbyOutput.progress(event).serialized : TerminalText.sanitized(NearbyOutput.progressText(event)))
                        }
                    }
                }
            }
            let fields: [(String, JSONOutput)] = [
                ("ok", .bool(true)), ("type", .string("joined")), ("member", .string(joined.member)),
                ("name", joined.name.map { .string($0) } ?? .null), ("group", MarmotOutput.group(joined.group)),
                ("confirmed", .bool(joined.confirmed)),
            ]
            Console.out(json ? JSONOutput.object(fields).serialized
                        : TerminalText.sanitized("\(joined.name ?? joined.member) joined \(joined.group.name)" + (joined.confirmed ? "" : " (no confirmation heard)")))
        }
    }
}

/// `burrow join nearby`: lists beacons (`--list`), or joins one with the code read from a file
/// or stdin; on a terminal without options it lists, asks and reads the code.
struct JoinNearbyCommand: ForwardableCommand {
    static let configuration = CommandConfiguration(commandName: "nearby", abstract: "Join a group invited nearby.")
    @OptionGroup var globals: GlobalOptions
    @OptionGroup var meshOptions: MeshOptions
    @Flag(help: "List the invites heard nearby.") var list = false
    @Option(parsing: .unconditional, help: "Seconds to listen with --list.") var wait: Double = 6
    @Option(help: "The invite: its id, a 4+ hex prefix or a unique group name.") var invite: String?
    @Option(name: .customLong("code-file"), help: "Read the 6-digit code from this file.") var codeFile: String?
    @Flag(name: .customLong("code-stdin"), help: "Read the 6-digit code from stdin.") var codeStdin = false
    @Flag(name: .customLong("no-accept"), help: "Keep the welcome as a pending invite instead of joining.") var noAccept = false

    mutating func runAsync() async throws {
        let command = self
        try await CommandRunner.run(globals) { try await command.perform() }
    }

    private func perform() async throws {
        let json = globals.json
        guard wait > 0, wait <= 3600 else { throw CLIError(.invalid_input, "--wait must be above 0 and at most 3600 seconds") }
        let listen: Duration = .milliseconds(Int64(wait * 1000))
        if list {
            let beacons = try await NodeOpener.with(globals) { node in
                try await MeshStarter.withMesh(meshOptions, node: node) { mesh in
                    await WaitIndicator.whileWaiting(for: "invites nearby", json: json) {
                        await NodeMailbox.yieldingTurn { await node.groups.listNearbyInvites(mesh: mesh, wait: listen) }
                    }
                }
            }
            Console.out(json ? JSONOutput.object([("ok", .bool(true)), ("invites", .array(beacons.map(NearbyOutput.beacon)))]).serialized
                        : TerminalText.sanitized(beacons.isEmpty ? "(no invites nearby)" : beacons.map(NearbyOutput.beaconText).joined(separator: "\n")))
            return
        }
        let interactive = invite == nil && codeFile == nil && !codeStdin
        guard interactive || invite != nil else { throw CLIError(.usage, "give --invite ID with --code-file F or --code-stdin (or --list)") }
        guard interactive || (codeFile != nil) != codeStdin else { throw CLIError(.usage, "give exactly one of --code-file and --code-stdin") }
        if interactive, ServingNode.current != nil {
            throw CLIError(.usage, "`burrow run` owns this home: list with --list, then give --invite ID --code-stdin (your stdin is passed on)")
        }
        if interactive, isatty(STDIN_FILENO) == 0 {
            throw CLIError(.usage, "not a terminal: give --invite ID with --code-file F or --code-stdin (or --list)")
        }
        let selector = invite
        let codeFile = self.codeFile
        let globals = self.globals
        let accept = !noAccept
        let result = try await NodeOpener.with(globals) { node in
            try await MeshStarter.withMesh(meshOptions, node: node) { mesh in
                var chosen = selector
                var code: String
                if let chosenSelector = selector {
                    chosen = chosenSelector
                    code = try Self.readCode(file: codeFile)
                } else {
                    let beacons = await WaitIndicator.whileWaiting(for: "invites nearby", json: false) {
                        await node.groups.listNearbyInvites(mesh: mesh, wait: listen)
                    }
                    guard !beacons.isEmpty else { throw MeshNodeError.noInvites("no invite heard nearby") }
                    for (index, beacon) in beacons.enumerated() { Console.err("[\(index + 1)] " + NearbyOutput.beaconText(beacon)) }
                    var pick = 0
                    if beacons.count > 1 {
                        FileHandle.standardError.write(Data("invite number: ".utf8))
                        guard let line = readLine(), let n = Int(line.trimmingCharacters(in: .whitespaces)), (1...beacons.count).contains(n) else {
                            throw CLIError(.invalid_input, "not one of the listed numbers")
                        }
                        pick = n - 1
                    }
                    chosen = beacons[pick].inviteID
                    FileHandle.standardError.write(Data("code shown by the inviter: ".utf8))
                    code = readLine() ?? ""
                }
                let invite = chosen ?? ""
                return try await NodeMailbox.yieldingTurn {
                    try await node.groups.joinNearby(mesh: mesh, invite: invite, code: code, accept: accept, timeout: globals.timeoutDuration)
                }
            }
        }
        var fields: [(String, JSONOutput)] = [("ok", .bool(true))]
        if let group = result.group { fields.append(("group", MarmotOutput.group(group))) }
        if let invite = result.invite { fields.append(("invite", MarmotOutput.invite(invite))) }
        fields += [("invite_id", .string(result.inviteID)), ("inviter", .string(result.inviter))]
        let human = result.group.map { "joined \($0.name)" } ?? result.invite.map { "invite \($0.id) from \($0.groupName) is pending: `burrow invite accept`" } ?? ""
        Console.out(json ? JSONOutput.object(fields).serialized : TerminalText.sanitized(human))
    }

    /// The code never comes as an argument (it would sit in the process list and history).
    static func readCode(file: String?) throws -> String {
        if let file {
            guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8) else {
                throw CLIError(.invalid_input, "cannot read the code file \(file)")
            }
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return (Console.readStdinLine() ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

enum NearbyOutput {
    static func progress(_ event: NearbyInviteProgress) -> JSONOutput {
        switch event {
        case .open(let id, let code, let expiresAt):
            return .object([("type", .string("invite_open")), ("invite_id", .string(id)), ("code", .string(code)),
                            ("expires_at", .int(expiresAt))])
        case .attempt(let peer, let left, let result):
            return .object([("type", .string("join_attempt")), ("peer_id", .string(peer)), ("attempts_left", .int(Int64(left))),
                            ("result", .string(result))])
        }
    }

    static func progressText(_ event: NearbyInviteProgress) -> String {
        switch event {
        case .open(_, let code, let expiresAt):
            return "code \(code) — show it to the person joining (open until \(Date(timeIntervalSince1970: TimeInterval(expiresAt))))"
        case .attempt(let peer, let left, let result):
            let words = ["challenged": "checking the code", "replaced": "gave up for a new attempt", "request": "code right, asked to join"]
            let outcome = words[result] ?? MeshError(rawValue: result).map(GroupService.nearbyMessage) ?? result
            return "attempt from \(peer): \(outcome) (\(left) attempt\(left == 1 ? "" : "s") left)"
        }
    }

    static func beacon(_ b: NearbyBeaconView) -> JSONOutput {
        .object([
            ("invite_id", .string(b.inviteID)), ("name", .string(b.beacon.name)), ("inviter", .string(b.beacon.inviter.hex)),
            ("inviter_npub", .string(b.beacon.inviter.npub)), ("peer_id", .string(b.peer.hex)), ("hops", .int(Int64(b.hops))),
            ("expires_at", .int(Int64(b.beacon.expiresAt / 1000))), ("attempts_left", .int(Int64(b.beacon.attemptsLeft))),
        ])
    }

    static func beaconText(_ b: NearbyBeaconView) -> String {
        "\(b.beacon.name) from \(b.beacon.inviter.npub) (\(b.inviteID.prefix(8)), \(b.hops) hop\(b.hops == 1 ? "" : "s"), \(b.beacon.attemptsLeft) attempts left)"
    }
}
