import ArgumentParser
import Foundation
import Logging
import RelayServer

/// burrow-relay: a small, private-by-default Nostr relay for a family or a home server.
/// Settings come from the defaults, then a JSON config file, then flags (flags win).
@main
struct BurrowRelay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "burrow-relay",
        abstract: "A small, private-by-default Nostr relay (NIP-01/09/11/40/42/70) backed by SQLite.",
        discussion: """
            Gift wraps (kind 1059) are served only to the NIP-42-authenticated key named in \
            their p tag. Settings: defaults, then --config FILE (JSON, see Relays/README.md), \
            then the flags below. SIGTERM or SIGINT stops it cleanly.
            """)

    @Option(name: .long, help: "JSON configuration file.")
    var config: String?

    @Option(name: .long, help: "Data directory for the relay's database (default: burrow-relay-data, or $STATE_DIRECTORY under systemd).")
    var data: String?

    @Option(name: .long, help: "Address to listen on (default 127.0.0.1; a LAN address or 0.0.0.0 for a home server).")
    var host: String?

    @Option(name: .long, help: "Port to listen on (default 7447; 0 picks a free one).")
    var port: Int?

    @Option(name: .customLong("public-url"), help: "A URL clients reach this relay by (repeatable), accepted in NIP-42 relay tags.")
    var publicURLs: [String] = []

    @Option(name: .long, help: "Largest event accepted, in bytes (default 262144).")
    var maxEventBytes: Int?

    @Option(name: .long, help: "Stored events returned per filter, at most (default 500).")
    var queryLimit: Int?

    @Flag(name: .long, help: "Require NIP-42 authentication to publish.")
    var authWrite = false

    @Flag(name: .long, help: "Require NIP-42 authentication to read.")
    var authRead = false

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical (default info).")
    var logLevel: String = "info"

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown log level \(logLevel)")
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var configuration = RelayServerConfiguration()
        if let state = ProcessInfo.processInfo.environment["STATE_DIRECTORY"], !state.isEmpty {
            // systemd's StateDirectory= (the first path when several are listed).
            configuration.dataDirectory = String(state.split(separator: ":").first ?? Substring(state))
        }
        do {
            if let config { configuration = try RelayServerConfiguration(jsonFile: config, over: configuration) }
            if let data { configuration.dataDirectory = data }
            if let host { configuration.host = host }
            if let port { configuration.port = port }
            if !publicURLs.isEmpty { configuration.publicURLs = publicURLs }
            if let maxEventBytes { configuration.limits.maxEventBytes = maxEventBytes }
            if let queryLimit { configuration.limits.queryLimit = queryLimit }
            if authWrite { configuration.auth.write = true }
            if authRead { configuration.auth.read = true }
            configuration = try configuration.validated()
        } catch let error as RelayServerError {
            throw ValidationError(error.description)
        }

        let relay: RunningRelay
        do {
            relay = try await RunningRelay.start(configuration, logger: Logger(label: "burrow.relay"), handleSignals: true)
        } catch let error as RelayServerError {
            FileHandle.standardError.write(Data("burrow-relay: \(error)\n".utf8))
            throw ExitCode(1)
        }
        print("burrow-relay listening on \(relay.url) (data: \(configuration.dataDirectory))")
        fflush(nil)  // all streams: naming the C global `stdout` is not concurrency-safe
        await relay.waitUntilClosed()
        FileHandle.standardError.write(Data("burrow-relay: stopped\n".utf8))
    }
}

