import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import Nostr
import ServiceLifecycle

/// A relay serving in this process: started with `RunningRelay.start(_:)`, reachable at
/// `url`, stopped with `close()`. `burrow-relay` runs one alone; `burrow run` can embed one.
///
/// One port serves both the NIP-01 WebSocket protocol and, on a plain HTTP GET with
/// `Accept: application/nostr+json`, the NIP-11 information document.
public final class RunningRelay: Sendable {
    /// `ws://host:port` as bound (the real port when 0 was asked for).
    public let url: String
    public let host: String
    public let port: Int
    public let configuration: RelayServerConfiguration

    private let serviceGroup: ServiceGroup
    private let task: Task<Void, Never>
    private let store: EventStore
    private let hub: ConnectionHub

    private init(
        url: String, host: String, port: Int, configuration: RelayServerConfiguration,
        serviceGroup: ServiceGroup, task: Task<Void, Never>, store: EventStore, hub: ConnectionHub
    ) {
        self.url = url
        self.host = host
        self.port = port
        self.configuration = configuration
        self.serviceGroup = serviceGroup
        self.task = task
        self.store = store
        self.hub = hub
    }

    /// Opens the data directory's database, binds the listening address and starts serving.
    /// Returns once the relay accepts connections; throws when the configuration is invalid,
    /// the database cannot be opened or the address cannot be bound.
    ///
    /// - Parameters:
    ///   - handleSignals: SIGTERM and SIGINT close the relay gracefully (for the program).
    ///   - clock: Unix seconds now; NIP-40, NIP-42 windows, retention and the future limit use it.
    public static func start(
        _ configuration: RelayServerConfiguration,
        logger: Logger = Logger(label: "burrow.relay"),
        handleSignals: Bool = false,
        clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) async throws -> RunningRelay {
        let configuration = try configuration.validated()
        let store = try EventStore(directory: configuration.dataDirectory)
        let hub = ConnectionHub(limit: configuration.limits.maxConnections, perAddressLimit: configuration.limits.maxConnectionsPerIP)
        let bound = BindSignal()
        let urls = LockedValue<[String]>([])
        let handler = ConnectionHandler(
            configuration: configuration, store: store, hub: hub,
            keyLimiter: KeyedRateLimiter(perMinute: configuration.limits.eventsPerMinutePerKey),
            relayURLs: urls, clock: clock, logger: logger)

        let information = RelayInformation.document(configuration)
        let router = Router()
        router.get("/") { request, _ -> Response in
            Self.httpResponse(accept: request.headers[.accept], information: information)
        }
        router.on("/", method: .options) { _, _ -> Response in
            Response(status: .noContent, headers: [
                .accessControlAllowOrigin: "*",
                .accessControlAllowMethods: "GET, OPTIONS",
                .accessControlAllowHeaders: "Accept",
            ])
        }
        let webSocket = WebSocketServerConfiguration(
            maxFrameSize: configuration.maxMessageBytes,
            autoPing: .enabled(timePeriod: .seconds(30)),
            closeTimeout: .seconds(5))
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(configuration: .init(http1: .init(idleTimeout: .seconds(30)), ws: webSocket)) { _, channel, _ in
                let address = ClientAddress(channel.remoteAddress)
                return .upgrade([:]) { inbound, outbound, _ in
                    try await handler.serve(inbound: inbound, outbound: outbound, from: address)
                }
            },
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: RelayInformation.software),
            onServerRunning: { channel in bound.succeed(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
        let purger = Purger(store: store, configuration: configuration, clock: clock, logger: logger)
        let serviceGroup = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: app), .init(service: purger)],
            gracefulShutdownSignals: handleSignals ? [.sigterm, .sigint] : [],
            logger: logger))

        let task = Task {
            do {
                try await serviceGroup.run()
            } catch {
                bound.fail(RelayServerError.listenFailed("\(error)"))
                logger.error("relay stopped", metadata: ["error": "\(error)"])
            }
            bound.fail(RelayServerError.closed)
            hub.finishAll()
            store.close()
        }
        let port: Int
        do {
            port = try await bound.wait()
        } catch {
            await serviceGroup.triggerGracefulShutdown()
            _ = await task.value
            throw error
        }
        let url = "ws://\(Self.urlHost(configuration.host)):\(port)"
        urls.set(Self.acceptedRelayURLs(host: configuration.host, port: port, publicURLs: configuration.publicURLs))
        logger.info("relay listening", metadata: ["url": "\(url)", "data": "\(configuration.dataDirectory)"])
        return RunningRelay(
            url: url, host: configuration.host, port: port, configuration: configuration,
            serviceGroup: serviceGroup, task: task, store: store, hub: hub)
    }

    /// Stops accepting connections, closes every connection (WebSocket close frames, waiting
    /// up to a few seconds for the answers), and closes the database. Idempotent.
    public func close() async {
        await serviceGroup.triggerGracefulShutdown()
        let finished = Task { [task] in await task.value }
        let watchdog = Task { [task] in
            try await Task.sleep(for: .seconds(15))
            task.cancel()
        }
        await finished.value
        watchdog.cancel()
    }

    /// Returns when the relay has stopped (after `close()` or, with `handleSignals`, a signal).
    public func waitUntilClosed() async {
        await task.value
    }

    /// Connections open now.
    public var connectionCount: Int { hub.count }

    /// Events stored now (for tests and the operator's curiosity).
    public func storedEventCount() async throws -> Int {
        try await store.run { try EventStore.count(in: $0) }
    }

    // MARK: - Helpers

    static func httpResponse(accept: String?, information: String) -> Response {
        if let accept, accept.lowercased().contains("application/nostr+json") {
            return Response(
                status: .ok,
                headers: [.contentType: "application/nostr+json", .accessControlAllowOrigin: "*"],
                body: .init(byteBuffer: ByteBuffer(string: information)))
        }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: "burrow-relay: a Nostr relay. Connect with a Nostr client over WebSocket.\n")))
    }

    static func urlHost(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }

    /// The URLs a NIP-42 `relay` tag may name: the listening address, the loopback names when
    /// listening on loopback or every interface, and the configured public URLs.
    static func acceptedRelayURLs(host: String, port: Int, publicURLs: [String]) -> [String] {
        var urls = publicURLs + ["ws://\(urlHost(host)):\(port)"]
        let loopbackOrAny: Set<String> = ["127.0.0.1", "::1", "localhost", "0.0.0.0", "::"]
        if loopbackOrAny.contains(host) {
            urls += ["ws://127.0.0.1:\(port)", "ws://localhost:\(port)", "ws://[::1]:\(port)"]
        }
        var seen = Set<String>()
        return urls.filter { seen.insert($0).inserted }
    }
}

/// The periodic purge of expired (NIP-40) and past-retention events, as a service that ends
/// on graceful shutdown.
private struct Purger: Service {
    let store: EventStore
    let configuration: RelayServerConfiguration
    let clock: @Sendable () -> Int64
    let logger: Logger

    func run() async throws {
        let retention = configuration.retention
        while !Task.isShuttingDownGracefully {
            let now = clock()
            do {
                let removed = try await store.run { try EventStore.purge(now: now, retention: retention, in: $0) }
                if removed > 0 { logger.info("purged events", metadata: ["count": "\(removed)"]) }
            } catch {
                logger.error("purge failed", metadata: ["error": "\(error)"])
            }
            do {
                try await cancelWhenGracefulShutdown {
                    try await Task.sleep(for: .seconds(configuration.purgeIntervalSeconds))
                }
            } catch {
                return
            }
        }
    }
}

/// Resolves once: the bound port, or why the server never listened.
/// `@unchecked Sendable`: every field is touched only under `lock`.
/// The port a server bound, or why it could not, awaited by whoever started it (the relay, and
/// the node's page).
public final class BindSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<Int, Error>?
    private var waiter: CheckedContinuation<Int, Error>?

    public init() {}

    public func succeed(_ port: Int) { resolve(.success(port)) }
    public func fail(_ error: Error) { resolve(.failure(error)) }

    private func resolve(_ outcome: Result<Int, Error>) {
        let waiting: CheckedContinuation<Int, Error>? = lock.withLock {
            guard result == nil else { return nil }
            result = outcome
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume(with: outcome)
    }

    public func wait() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<Int, Error>? = lock.withLock {
                if let result { return result }
                waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}

/// A value set once after start (the relay's own URLs) and read by every connection.
/// `@unchecked Sendable`: the value is touched only under `lock`.
final class LockedValue<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T

    init(_ value: T) { self.value = value }

    func get() -> T { lock.withLock { value } }
    func set(_ newValue: T) { lock.withLock { value = newValue } }
}
