import Foundation
import Logging
import NIOCore
import NIOPosix
import Node
import Synchronization

/// The running node's end of the control channel: a Unix socket at `<home>/burrow.sock`
/// through which other `burrow` commands hand their work to the process that owns the home.
///
/// One request per connection (`ControlRequest` in, `ControlResponse` out, each one
/// length-prefixed JSON frame). **Handler calls are serialized**: whatever the number of
/// clients, the handler runs for one request at a time, in the order the requests arrived,
/// because the node's state has a single writer (`NodeMailbox`).
///
/// Start it only while holding the home's lock (an open `BurrowStore`): the lock is what makes
/// replacing a stale socket file safe, since no other process can be serving this home.
public final class ControlServer: Sendable {
    public typealias Handler = @Sendable (ControlRequest) async -> ControlResponse

    /// The socket's path in `home`.
    public static func socketPath(home: URL) -> String { ControlSocketFile.path(home: home) }

    public let socketPath: String
    private let channel: Channel
    private let identity: ControlSocketFile.Identity?
    private let mailbox: NodeMailbox
    private let connections: ControlConnections

    private init(socketPath: String, channel: Channel, identity: ControlSocketFile.Identity?,
                 mailbox: NodeMailbox, connections: ControlConnections) {
        self.socketPath = socketPath
        self.channel = channel
        self.identity = identity
        self.mailbox = mailbox
        self.connections = connections
    }

    /// Binds `<home>/burrow.sock` (mode 0600) and serves until `close`.
    ///
    /// A socket file left by a killed server (nobody accepts on it) is replaced; a live listener
    /// or a file that is not a socket is left alone and `socketUnavailable` thrown, as for
    /// a path too long for a Unix socket or a failed bind.
    ///
    /// - Parameters:
    ///   - requestTimeout: how long a client may take to send its request, and to take its answer;
    ///     a client that stalls longer is disconnected. The handler's own run time is not bounded.
    ///   - mailbox: where requests queue, behind the node's other work (`burrow run` shares
    ///     one with its live loop); closed by `close`.
    ///   - handler: runs each request; called for one request at a time, in arrival order.
    public static func start(
        home: URL, requestTimeout: Duration = .seconds(10),
        logger: Logger = Logger(label: "burrow.control"),
        mailbox: NodeMailbox = NodeMailbox(),
        handler: @escaping Handler
    ) async throws -> ControlServer {
        let group = MultiThreadedEventLoopGroup.singleton
        let path = try ControlSocketFile.checkedPath(home: home, error: ControlError.socketUnavailable)
        guard requestTimeout > .zero else { throw NodeError.invalidInput("the control request timeout must be positive") }
        let timeout = TimeAmount(requestTimeout)
        try await ControlSocketFile.clearStale(path: path, group: group)

        let connections = ControlConnections()
        let channel: Channel
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.backlog, value: 64)
                .childChannelInitializer { child in
                    guard connections.add(child) else { return child.close() }
                    return child.eventLoop.makeCompletedFuture {
                        try child.pipeline.syncOperations.addHandler(
                            ControlConnectionHandler(timeout: timeout, mailbox: mailbox, handler: handler, logger: logger))
                    }
                }
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false)
                .get()
        } catch {
            await mailbox.close()
            throw ControlError.socketUnavailable("binding \(path) failed: \(error)")
        }
        // The home is 0700 already; the socket itself is narrowed before anyone is answered
        // (connecting to a Unix socket needs write permission on it).
        guard chmod(path, 0o600) == 0 else {
            let e = errno
            try? await channel.close()
            unlink(path)
            await mailbox.close()
            throw ControlError.socketUnavailable("setting the mode of \(path) failed (errno \(e))")
        }
        logger.debug("control socket listening on \(path)")
        return ControlServer(socketPath: path, channel: channel, identity: ControlSocketFile.Identity(path: path),
                             mailbox: mailbox, connections: connections)
    }

    /// Requests received and not yet started (for tests and status).
    var queuedRequestCount: Int { mailbox.queuedCount }

    /// Whether `close` has stopped taking requests (for tests).
    var isClosing: Bool { mailbox.isClosed }

    /// Stops accepting and removes the socket file, drops queued requests (their clients see
    /// the connection close without an answer), and returns once the request being handled has
    /// been answered and every connection has ended. Idempotent.
    public func close() async {
        // NIO unlinks the path as the listener closes; the check below covers the rest.
        try? await channel.close()
        await mailbox.close()
        // Connections still sending their request close now; one writing its answer closes
        // when the write completes or stalls past the timeout.
        for connection in connections.closeAll() {
            connection.pipeline.fireUserInboundEventTriggered(ControlConnectionHandler.ServerClosing())
            try? await connection.closeFuture.get()
        }
        // Remove the file only if it is still the socket this server bound.
        if let identity, ControlSocketFile.Identity(path: socketPath) == identity {
            unlink(socketPath)
        }
    }
}

/// The open connections of a server, so `close` can end those still sending or reading.
final class ControlConnections: Sendable {
    private let state = Mutex((open: [ObjectIdentifier: Channel](), closed: false))

    /// Tracks `channel` until it closes; false once the server is closing.
    func add(_ channel: Channel) -> Bool {
        let key = ObjectIdentifier(channel)
        let added: Bool = state.withLock {
            guard !$0.closed else { return false }
            $0.open[key] = channel
            return true
        }
        if added {
            channel.closeFuture.whenComplete { [self] _ in
                state.withLock { _ = $0.open.removeValue(forKey: key) }
            }
        }
        return added
    }

    func closeAll() -> [Channel] {
        state.withLock { state in
            state.closed = true
            defer { state.open.removeAll() }
            return Array(state.open.values)
        }
    }
}

extension TimeAmount {
    /// A Swift `Duration` as NIO's nanoseconds, saturating at `Int64.max`.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let (nanos, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { self = .nanoseconds(seconds < 0 ? .min : .max); return }
        let (sum, overflow2) = nanos.addingReportingOverflow(attoseconds / 1_000_000_000)
        self = .nanoseconds(overflow2 ? .max : sum)
    }
}
