import Foundation

/// rust-nostr's LocalRelay (nostr-sdk wheel in the interop venv) running on 127.0.0.1 in its
/// own process, through `Tests/Interop/peers/local_relay.py`. The relay exits when this
/// object is stopped or released, when the test process dies (its stdin closes), or after
/// `lifetime`.
public final class RelayProcess: @unchecked Sendable {
    public enum NIP42Mode: String, Sendable {
        case off, read, write, both
    }

    public struct Options: Sendable {
        /// Whether the relay demands NIP-42 authentication for reads, writes or both.
        public var nip42: NIP42Mode = .off
        /// Serve kind-1059 events only to their authenticated `p` recipient.
        public var authDM = false
        /// Keep events in an LMDB directory so they survive a restart (in memory otherwise).
        public var persistent = false
        /// EVENTs accepted per minute per connection (LocalRelay's own default is 60).
        public var notesPerMinute: Int?
        /// Upper bound on the relay's life, whatever happens to the test.
        public var lifetime: Duration = .seconds(900)

        public init(
            nip42: NIP42Mode = .off, authDM: Bool = false, persistent: Bool = false,
            notesPerMinute: Int? = nil, lifetime: Duration = .seconds(900)
        ) {
            self.nip42 = nip42
            self.authDM = authDM
            self.persistent = persistent
            self.notesPerMinute = notesPerMinute
            self.lifetime = lifetime
        }
    }

    public let options: Options
    /// The port chosen at the first start; restarts reuse it.
    public private(set) var port: Int
    public var url: String { "ws://127.0.0.1:\(port)" }
    private var process: PeerProcess?
    private let databaseDirectory: URL?

    private init(options: Options) {
        self.options = options
        self.port = 0
        self.databaseDirectory = options.persistent
            ? FileManager.default.temporaryDirectory.appendingPathComponent("burrow-relay-\(UUID().uuidString)")
            : nil
    }

    /// Starts a relay on a free loopback port and waits (bounded) until it accepts connections.
    public static func start(_ options: Options = Options(), timeout: Duration = .seconds(30)) async throws -> RelayProcess {
        let relay = RelayProcess(options: options)
        try await relay.launch(timeout: timeout)
        return relay
    }

    deinit {
        process?.stop()
        if let databaseDirectory { try? FileManager.default.removeItem(at: databaseDirectory) }
    }

    public var pid: Int32? { process?.pid }
    public var isRunning: Bool { process?.isRunning ?? false }

    /// Stops the relay gracefully (stdin closed, SIGTERM, then SIGKILL if needed).
    public func stop() {
        process?.stop()
        process = nil
    }

    /// Kills the relay abruptly (SIGKILL): connections drop without a close frame.
    public func kill() {
        process?.kill()
        process?.stop()
        process = nil
    }

    /// Starts the relay again on the same port (and the same database when persistent).
    public func restart(timeout: Duration = .seconds(30)) async throws {
        stop()
        try await launch(timeout: timeout)
    }

    private func launch(timeout: Duration) async throws {
        var arguments = [
            Fixtures.peerScript("local_relay.py").path,
            "--port", String(port),
            "--nip42", options.nip42.rawValue,
            "--lifetime", String(options.lifetime.components.seconds),
        ]
        if options.authDM { arguments.append("--auth-dm") }
        if let notesPerMinute = options.notesPerMinute { arguments += ["--notes-per-minute", String(notesPerMinute)] }
        if let databaseDirectory { arguments += ["--db", databaseDirectory.path] }

        // A port just released can be refused for a moment; retry the bind a few times.
        let deadline = ContinuousClock.now + timeout
        var lastError: Error = PeerProcess.Failure.notReady("never started")
        while ContinuousClock.now < deadline {
            let child = try PeerProcess(executable: Fixtures.venvPython, arguments: arguments)
            do {
                let line = try await child.waitForLine(prefix: "READY ", timeout: deadline - ContinuousClock.now)
                let url = String(line.dropFirst("READY ".count))
                guard let colon = url.lastIndex(of: ":"), let port = Int(url[url.index(after: colon)...]), port > 0 else {
                    child.stop()
                    throw PeerProcess.Failure.notReady("unexpected ready line \(line)")
                }
                self.port = port
                self.process = child
                return
            } catch PeerProcess.Failure.exitedEarly(let status, let output) where output.contains("Address already in use") {
                lastError = PeerProcess.Failure.exitedEarly(status: status, output: output)
                child.stop()
                try await Task.sleep(for: .milliseconds(200))
            } catch {
                child.stop()
                throw error
            }
        }
        throw lastError
    }
}
