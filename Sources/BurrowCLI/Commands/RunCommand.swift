import ArgumentParser
import Control
import Foundation
import Node
import Nostr
import NodeRuntime
import Web

/// What `burrow run` (and `burrow web`) take.
struct RunOptions: ParsableArguments {
    @Option(name: .customLong("self-update-period"), help: "Seconds between self-updates of each group (0: never).")
    var selfUpdatePeriod: Int64 = BurrowNode.defaultSelfUpdatePeriod
    @Option(name: .customLong("maintenance-interval"), help: "Seconds between upkeep runs (KeyPackage renewal, self-updates).")
    var maintenanceInterval: Double = 60
    @Option(name: .customLong("relay-data"), help: "Data directory of the embedded relay (default: $XDG_DATA_HOME/burrow-relay).")
    var relayData: String?
    @Flag(name: .customLong("no-embedded-relay"), help: "Never start the embedded relay (a node that is offline on purpose).")
    var noEmbeddedRelay = false
    @OptionGroup var meshOptions: MeshOptions
    @Option(name: .customLong("web"), help: "Serve the family's page on HOST:PORT (`--web` alone: \(WebOptions.defaultHost):\(WebOptions.defaultPort)).")
    var web: String?
    @Flag(name: .customLong("web-allow-remote"), help: "Let --web listen on an address other machines reach.")
    var webAllowRemote = false
    @Option(name: .customLong("web-tiles"), help: "Map tiles: a URL template with {z}/{x}/{y}, or off (default: OpenStreetMap).")
    var webTiles: String?
    @Option(name: .customLong("lock-after"), help: "Lock (wipe the keys from memory) after this long without a command or a page action: 30s, 15m, 2h.")
    var lockAfter: String?
}

/// `burrow run`: stays connected, processes live, serves other commands over the home's
/// control socket, and prints one line per event (JSON lines with `--json`).
struct RunCommand: AsyncRunnable {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Stay connected, process events live and serve other commands.")
    @OptionGroup var globals: GlobalOptions
    @OptionGroup var options: RunOptions

    mutating func runAsync() async throws {
        try await Self.run(globals: globals, options: options)
    }

    static func run(globals: GlobalOptions, options: RunOptions) async throws {
        do {
            guard options.selfUpdatePeriod >= 0, options.selfUpdatePeriod <= 365 * 86_400 else {
                throw CLIError(.invalid_input, "--self-update-period must be between 0 and 31536000 seconds")
            }
            guard options.maintenanceInterval > 0, options.maintenanceInterval <= 86_400 else {
                throw CLIError(.invalid_input, "--maintenance-interval must be above 0 and at most 86400 seconds")
            }
            let meshSetup = try options.meshOptions.setup(default: "off")
            let lockAfter = try options.lockAfter.map(LockDuration.parse)
            var web: WebOptions?
            if let address = options.web {
                do throws(WebError) {
                    web = try WebOptions(address: address, allowRemote: options.webAllowRemote, tiles: options.webTiles)
                } catch {
                    throw CLIError(.invalid_input, error.description)
                }
            }
            try await serve(globals: globals, options: options, mesh: meshSetup, web: web, lockAfter: lockAfter)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            let failure = CLIError.from(error)
            Console.report(failure, json: globals.json)
            throw ExitCode(failure.exitCode)
        }
    }

    private static func serve(globals: GlobalOptions, options: RunOptions, mesh meshSetup: MeshSetup, web: WebOptions?,
                              lockAfter: Duration?) async throws {
        let home = globals.homeURL
        let node = try NodeOpener.open(globals)
        let json = globals.json
        var live = LiveOptions(timeout: globals.timeoutDuration, selfUpdatePeriod: options.selfUpdatePeriod,
                               maintenanceInterval: .milliseconds(Int64(options.maintenanceInterval * 1000)))
        live.lockAfter = lockAfter
        let runtimeOptions = NodeRuntime.Options(
            live: live,
            mesh: meshSetup, embeddedRelay: !options.noEmbeddedRelay, relayDataDirectory: options.relayData, web: web)
        let emit: @Sendable (NodeUpdate) -> Void = { update in
            if json { return Console.out(MarmotOutput.update(update).serialized) }
            let text = RunCommand.text(update)
            if !text.isEmpty { Console.out(TerminalText.sanitized(text)) }
        }
        try await NodeRuntime.run(node: node, options: runtimeOptions, handler: { request in
            await Forwarding.execute(request, node: node, home: home)
        }, announce: { announcement in
            switch announcement {
            case .ready(let pubkey, let socket, let relay):
                emit(.ready(pubkey: pubkey, socket: socket, embeddedRelay: relay))
            case .meshUp(let transport, let meshID):
                let up: [(String, JSONOutput)] = [("type", .string("mesh")), ("state", .string("up")), ("transport", .string(transport)),
                                                  ("mesh_id", .string(meshID))]
                Console.out(json ? JSONOutput.object(up).serialized : "mesh up on \(transport) as \(meshID)")
            case .webUp(let url, let login, let remote):
                let up: [(String, JSONOutput)] = [("type", .string("web")), ("url", .string(url)), ("login", .string(login)),
                                                  ("remote", .bool(remote))]
                if json { return Console.out(JSONOutput.object(up).serialized) }
                Console.out("web: \(login)")
                if remote {
                    Console.err("warning: the page listens on \(url), reachable from other machines, over plain HTTP: anyone on the"
                                + " network path can read what it shows once logged in")
                }
            }
        }, emit: emit)
    }

    static func text(_ update: NodeUpdate) -> String {
        switch update {
        case .message(let m): return MarmotOutput.messageText(m)
        case .group(let g): return MarmotOutput.groupChangeText(g)
        case .invite(let i): return MarmotOutput.inviteText(i)
        case .joinRequest(let r): return JoinRequestOutput.text(r)
        case .dm(let m): return DMOutput.messageText(m)
        case .contact(let c): return "contact " + DMOutput.contactText(c)
        case .error(let e): return "skipped \(e.eventID): \(e.reason)"
        // The message line already says where the member is.
        case .location: return ""
        case .alert(let a):
            let who = a.name ?? MarmotOutput.npubPrefix(a.member)
            switch a.kind {
            case .batteryLow: return "alert: \(who)'s battery is at \(a.battery ?? 0) % (\(a.groupName))"
            case .stale: return "alert: \(who)'s location in \(a.groupName) is out of date (last \(HumanTime.format(seconds: a.lastSeen)))"
            }
        case .feed(let e): return "feed " + FeedOutput.entryText(e)
        case .lock(let locked, let reason):
            if !locked { return "unlocked" }
            return reason == "idle" ? "locked after a quiet spell: `burrow unlock` to resume" : "locked: `burrow unlock` to resume"
        case .ready(let pubkey, let socket, let relay):
            let npub = (try? PublicKey(hex: pubkey))?.npub ?? pubkey
            return "running as \(npub), serving \(socket)" + (relay.map { ", embedded relay on \($0)" } ?? "")
        }
    }
}

/// `burrow web`: `burrow run --web` (the family's page), with every option of `run`.
struct WebCommand: AsyncRunnable {
    static let configuration = CommandConfiguration(
        commandName: "web", abstract: "Run the node and serve the family's page (burrow run --web).")
    @OptionGroup var globals: GlobalOptions
    @OptionGroup var options: RunOptions

    mutating func runAsync() async throws {
        var options = options
        if options.web == nil { options.web = "\(WebOptions.defaultHost):\(WebOptions.defaultPort)" }
        try await RunCommand.run(globals: globals, options: options)
    }
}
