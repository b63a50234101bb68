import Control
import Foundation
import Logging
import Mesh
import Node
import RelayServer
import ServiceLifecycle
import Synchronization
import Web

/// `burrow run` as one `ServiceGroup`: the node, its control socket, the embedded relay, the
/// mesh and the live loop are services, started in order and shut down in the reverse order on
/// SIGTERM or SIGINT, when the live loop ends, or when one of them fails. Location sharing
/// and the web page join as further services.
public enum NodeRuntime {
    /// What `run` was asked to bring up.
    public struct Options: Sendable {
        public var live: LiveOptions
        public var mesh: MeshSetup
        /// Serve the embedded relay when the node's relays include it and nothing listens there.
        public var embeddedRelay: Bool
        public var relayDataDirectory: String?
        /// Serve the family's page (`--web`).
        public var web: WebOptions?

        public init(live: LiveOptions, mesh: MeshSetup, embeddedRelay: Bool, relayDataDirectory: String?, web: WebOptions? = nil) {
            self.live = live
            self.mesh = mesh
            self.embeddedRelay = embeddedRelay
            self.relayDataDirectory = relayDataDirectory
            self.web = web
        }
    }

    /// What the runtime reports as it comes up (the CLI prints these lines).
    public enum Announcement: Sendable {
        case ready(pubkey: String, socket: String, embeddedRelay: String?)
        case meshUp(transport: String, meshID: String)
        /// The page is served at `url`; `login` is its one-time login link. `remote`: the
        /// address is not loopback.
        case webUp(url: String, login: String, remote: Bool)
    }

    /// Runs `node` until a shutdown signal, or until the live loop fails (its error is thrown).
    /// `node` is closed on return. A component that cannot start closes those started before
    /// it and ends `run` with its error (an explicit mesh too: Docs/protocols/mesh.md 12).
    public static func run(
        node: BurrowNode, options: Options, handler: @escaping ControlServer.Handler,
        announce: @escaping @Sendable (Announcement) -> Void, emit: @escaping @Sendable (NodeUpdate) -> Void
    ) async throws {
        let mailbox = NodeMailbox()
        let web = WebSlot()
        var started = StartedComponents()
        var startedMesh: MeshService?
        started.push(name: "node") {
            await node.gateway.closeConnections()
            node.close()
        }
        do {
            let server = try await ControlServer.start(home: node.home, mailbox: mailbox, handler: handler)
            started.push(name: "control socket") { await server.close() }
            if options.embeddedRelay,
               let relay = try await EmbeddedRelay.startIfNeeded(relays: try node.relays(), dataDirectory: options.relayDataDirectory) {
                started.push(name: "embedded relay", { await relay.close() }, before: "control socket")
                announce(.ready(pubkey: node.publicKey.hex, socket: server.socketPath, embeddedRelay: relay.url))
            } else {
                announce(.ready(pubkey: node.publicKey.hex, socket: server.socketPath, embeddedRelay: nil))
            }
            if !options.mesh.isOff {
                let mesh = try await node.startMesh(options.mesh)
                node.meshBridge.attachMesh(mesh)
                startedMesh = mesh
                started.push(name: "mesh") {
                    node.meshBridge.attachMesh(nil)
                    await mesh.stop()
                }
                announce(.meshUp(transport: mesh.transport.name, meshID: mesh.meshID.hex))
            }
            if let webOptions = options.web {
                let server = try await WebServer.start(node: node, mailbox: mailbox, options: webOptions, timeout: options.live.timeout)
                web.set(server)
                started.push(name: "web") {
                    web.set(nil)
                    await server.close()
                }
                announce(.webUp(url: server.url, login: server.loginLink, remote: !webOptions.isLoopback))
            }
        } catch {
            await started.closeAll()
            throw error
        }
        let live = LiveLoop(node: node, mailbox: mailbox, options: options.live) { update in
            emit(update)
            web.server?.publish(update)
        }
        let sharing = LocationSharing(node: node, mailbox: mailbox, timeout: options.live.timeout)
        let feedSync = startedMesh.map { mesh in
            FeedSyncService(sync: FeedMeshSync(feeds: node.feeds, mesh: mesh) { update in
                emit(update)
                web.server?.publish(update)
            })
        }
        var logger = Logger(label: "burrow.runtime")
        logger.logLevel = .warning
        let feedServices = feedSync.map { [ServiceGroupConfiguration.ServiceConfiguration(
            service: $0, successTerminationBehavior: .ignore, failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: "feed sync")] } ?? []
        let services = started.services + feedServices + [
            ServiceGroupConfiguration.ServiceConfiguration(
                service: live, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup,
                serviceName: "live"),
            // Last: it stops first, so no publish starts while the rest shut down.
            ServiceGroupConfiguration.ServiceConfiguration(
                service: sharing, successTerminationBehavior: .ignore, failureTerminationBehavior: .gracefullyShutdownGroup,
                serviceName: "location sharing"),
        ]
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// Feed sync on the mesh as a service: it stops with the group.
struct FeedSyncService: Service {
    let sync: FeedMeshSync

    func run() async throws {
        await cancelWhenGracefulShutdown { await sync.run() }
    }
}

/// `runLive` as a service: cancelled when the group shuts down, which ends it quietly.
struct LiveLoop: Service {
    let node: BurrowNode
    let mailbox: NodeMailbox
    let options: LiveOptions
    let emit: @Sendable (NodeUpdate) -> Void

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { [node, mailbox, options, emit] in
                try await node.runLive(mailbox: mailbox, options: options, emit: emit)
            }
        } catch is CancellationError {}
    }
}

/// A component that is already up: it runs until the group shuts down, then closes.
struct StartedComponent: Service {
    let close: @Sendable () async -> Void

    func run() async throws {
        try? await gracefulShutdown()
        await close()
    }
}

/// The components started so far, in the order the group shuts them down last-first.
struct StartedComponents {
    private var components: [(name: String, close: @Sendable () async -> Void)] = []

    mutating func push(name: String, _ close: @escaping @Sendable () async -> Void) {
        components.append((name, close))
    }

    /// Adds a component that must close after `later` (the embedded relay outlives the
    /// control socket, so a forwarded command still running reaches it).
    mutating func push(name: String, _ close: @escaping @Sendable () async -> Void, before later: String) {
        let index = components.firstIndex { $0.name == later } ?? components.endIndex
        components.insert((name, close), at: index)
    }

    /// Closes every component, last-started first (a start that failed part way).
    func closeAll() async {
        for component in components.reversed() { await component.close() }
    }

    /// Each component as a service of the group; a component that ends on its own ends the group.
    var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        components.map {
            ServiceGroupConfiguration.ServiceConfiguration(
                service: StartedComponent(close: $0.close), successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: $0.name)
        }
    }
}

/// The page's server once it is up, for the live loop's updates.
final class WebSlot: Sendable {
    private let slot = Mutex<WebServer?>(nil)

    var server: WebServer? { slot.withLock { $0 } }

    func set(_ server: WebServer?) { slot.withLock { $0 = server } }
}
