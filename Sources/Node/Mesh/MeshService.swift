import Feed
import Foundation
import Logging
import Mesh
import MeshLinks
import Nostr
import Synchronization

/// The node's mesh: one link layer (`MeshTransport`) and the sans-I/O `MeshRouter`, driven
/// here. Transport events and the clock go into the router under a lock; the actions it returns
/// are carried out outside it: frames written to the transport, deliveries handed to every
/// subscriber (the live loop, an open nearby invite).
///
/// Sendable: the router and the subscriber table are behind one `Mutex`; the transport is
/// Sendable by protocol.
public final class MeshService: Sendable {
    public let transport: any MeshTransport
    public let setup: MeshSetup
    private let core: Mutex<Core>
    private let tasks = Mutex<[Task<Void, Never>]>([])
    /// Deliveries dropped above the router for want of room, by name (`mesh status` adds
    /// them to the router's `dropped`).
    private let nodeDrops = Mutex<[String: Int]>([:])
    /// The `dropped` name of a delivery that found a subscriber's buffer or `run`'s inbox full.
    public static let queueFull = "queue_full"
    /// Deliveries each subscriber's stream holds while its reader is busy. `run` moves them at
    /// once into its own bounded inbox and a nearby session only reads join messages, so this
    /// fills only when a reader stalls; a carried event is ≤ 64 KiB, so ≤ 16 MiB per subscriber.
    static let subscriberBuffer = 256
    private let logger: Logger
    /// Frames go out through it, each link within its neighbour's budget.
    private let pacer: LinkPacer
    /// Told the mesh id and whether an invite is open after a key rotation and when an invite
    /// opens or closes (BlueZ re-registers its advertisement: short id and flags).
    private let advertiser: (@Sendable (MeshID, Bool) async -> Void)?

    private struct Core {
        var router: MeshRouter<SystemRandomNumberGenerator>
        var subscribers: [UInt64: AsyncStream<MeshDelivery>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        var stopped = false
    }

    /// Milliseconds since the epoch: the mesh's clock (packets carry it).
    static func now() -> UInt64 { UInt64(max(0, Date().timeIntervalSince1970 * 1000)) }

    init(transport: any MeshTransport, setup: MeshSetup, identity: MeshIdentity, dmIdentityKeys: [[UInt8]], logger: Logger,
         advertiser: (@Sendable (MeshID, Bool) async -> Void)? = nil) {
        let now = Self.now()
        var configuration = MeshConfiguration()
        configuration.nickname = setup.nickname
        var router = MeshRouter(identity: identity, configuration: configuration, now: now, random: SystemRandomNumberGenerator())
        router.dmIdentityKeys = dmIdentityKeys
        self.transport = transport
        self.setup = setup
        self.logger = logger
        self.advertiser = advertiser
        core = Mutex(Core(router: router))
        pacer = LinkPacer(transport: transport, logger: logger)
    }

    /// A fresh mesh key (the mesh starts with one, Docs/protocols/mesh.md 2).
    static func newIdentity() -> MeshIdentity {
        var rng = SystemRandomNumberGenerator()
        return MeshIdentity(now: now(), using: &rng)
    }

    /// Brings up the link layer `setup` names and starts routing. `mesh_port_in_use`,
    /// `no_adapter` and `bluetooth_denied` come from here.
    public static func start(_ setup: MeshSetup, dmIdentityKeys: [[UInt8]], logger: Logger) async throws -> MeshService {
        switch setup.link {
        case .off:
            throw MeshNodeError.meshOff("the mesh is off")
        case .udp(let port, let peers):
            let capped = peers.map { UDPPeer(port: $0.port, mtu: min($0.mtu, setup.mtu ?? $0.mtu)) }
            let transport: UDPLoopbackTransport
            do { transport = try await UDPLoopbackTransport.start(port: port, peers: capped, impairment: setup.impairment) } catch let error as MeshLinkError {
                switch error {
                case .portInUse(let port): throw MeshNodeError.portInUse("UDP port \(port) on 127.0.0.1 is in use: choose another with --mesh udp:PORT,…")
                case .invalidLink(let what): throw NodeError.invalidInput("--mesh udp: \(what) is not usable")
                default: throw NodeError.internalError("the UDP radio did not start: \(error)")
                }
            }
            let service = MeshService(transport: transport, setup: setup, identity: newIdentity(), dmIdentityKeys: dmIdentityKeys, logger: logger)
            service.run()
            return service
        case .bluez(let adapter):
            return try await startBlueZ(setup, adapter: adapter, dmIdentityKeys: dmIdentityKeys, logger: logger)
        }
    }

    /// The current mesh id (changes every 15 min unless an invite is open).
    public var meshID: MeshID { core.withLock { $0.router.identity.current.id } }

    /// The current mesh key (an invite beacon binds it).
    public var meshKey: MeshKey { core.withLock { $0.router.identity.current } }

    /// Holds the mesh key while a nearby invite is open (10.3: the beacon and the exchange name it).
    public func setInviteOpen(_ open: Bool) {
        let id: MeshID? = core.withLock { core in
            guard core.router.inviteOpen != open else { return nil }
            core.router.inviteOpen = open
            return core.router.identity.current.id
        }
        // The advertisement's flags say whether an invite is open (11.1).
        if let id, let advertiser { Task { await advertiser(id, open) } }
    }

    /// Feeds on the mesh (feed.md 8): the types 0x40–0x44 known, announces tagged with the
    /// presence key `P` (nil turns feeds off).
    public func setFeedPresence(_ presenceKey: [UInt8]?) {
        var tag: (@Sendable ([UInt8]) -> [UInt8])?
        if let presenceKey { tag = { meshKey in FeedPresence.tag(presenceKey: presenceKey, meshKey: meshKey) } }
        core.withLock { core in
            core.router.configuration.feeds = presenceKey != nil
            core.router.configuration.presenceTag = tag
        }
    }

    /// The Pigeon identity keys whose daily DM tags address this node.
    public func setDMIdentityKeys(_ keys: [[UInt8]]) { core.withLock { $0.router.dmIdentityKeys = keys } }

    /// Every delivery from now on, until the stream is dropped or the mesh stops.
    public func deliveries() -> AsyncStream<MeshDelivery> {
        let (stream, continuation) = AsyncStream<MeshDelivery>.makeStream(bufferingPolicy: .bufferingNewest(Self.subscriberBuffer))
        let id: UInt64? = core.withLock { core in
            guard !core.stopped else { return nil }
            let id = core.nextSubscriber
            core.nextSubscriber += 1
            core.subscribers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.core.withLock { _ = $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    // MARK: Sending

    /// An event of ours, or a group event relays gave us in the last hour (8.4). Other kinds,
    /// and events the mesh already carried, are skipped.
    public func sendEvent(_ event: Event) async {
        guard CarriedEvent.carriedKinds.contains(event.kind) else { return }
        let actions: [MeshAction] = core.withLock { core in
            var actions: [MeshAction] = []
            let now = Self.now()
            guard !core.stopped, !core.router.hasSeenEvent(event.id, now: now) else { return [] }
            do { _ = try core.router.sendEvent(event, now: now, actions: &actions) } catch {
                logger.debug("event not carried by the mesh", metadata: ["reason": "\(error)"])
            }
            return actions
        }
        await perform(actions)
    }

    /// A Pigeon frame to whoever holds `identityKey` (its daily DM tag).
    public func sendDM(_ frame: [UInt8], toIdentityKey identityKey: [UInt8]) async throws {
        let actions: [MeshAction] = try core.withLock { core in
            guard !core.stopped else { throw MeshNodeError.meshOff("the mesh stopped") }
            var actions: [MeshAction] = []
            _ = try core.router.sendDM(frame, toIdentityKey: identityKey, now: Self.now(), actions: &actions)
            return actions
        }
        await perform(actions)
    }

    /// A packet of `type` to `recipient` (a mesh id; nil broadcasts): DM replies to a sender
    /// whose identity is not known yet, the nearby-invite messages and feed sessions. Returns
    /// once the links it went on have room again (`LinkPacer.senderRoom`): a sender of many
    /// packets is held to the links' pace instead of overflowing their queues.
    @discardableResult
    public func send(type: PacketType, recipient: MeshID?, payload: [UInt8]) async throws -> Packet {
        let (packet, actions): (Packet, [MeshAction]) = try core.withLock { core in
            guard !core.stopped else { throw MeshNodeError.meshOff("the mesh stopped") }
            var actions: [MeshAction] = []
            let packet = try core.router.send(type: type, recipient: recipient, payload: payload, now: Self.now(), actions: &actions)
            return (packet, actions)
        }
        await perform(actions)
        await pacer.waitForRoom(on: Set(actions.compactMap { if case .transmit(let link, _) = $0 { return link } else { return nil } }))
        return packet
    }

    // MARK: Status

    /// Counts a delivery dropped above the router (`queueFull`), for `mesh status`.
    func countDropped(_ name: String) { nodeDrops.withLock { $0[name, default: 0] += 1 } }

    public func status() -> MeshStatusView {
        let transportName = transport.name
        var place: (String, String)?
        switch setup.link {
        case .udp(let port, _): place = ("port", String(port))
        case .bluez(let adapter): place = ("adapter", (transport as? BlueZTransport)?.adapter ?? adapter ?? "hci0")
        case .off: place = nil
        }
        var drops = nodeDrops.withLock { $0 }
        if pacer.dropped > 0 { drops[LinkPacer.queueFull] = pacer.dropped }
        return core.withLock { core in
            let router = core.router
            var counters = router.counters
            for (name, count) in drops { counters.dropped[name, default: 0] += count }
            let roles = transport as? any LinkRoleReporting
            let links = router.linkStatus.map { link in
                MeshStatusView.Link(link: link.link.value, role: roles?.role(of: link.sendsOn ?? link.link) ?? transportName, mtu: link.mtu, peers: link.peers)
            }
            return MeshStatusView(
                transport: transportName, place: place, meshID: router.identity.current.id.hex, links: links,
                storedPackets: router.store.count, storedBytes: router.store.bytes, counters: counters)
        }
    }

    // MARK: Running

    func run() {
        let events = Task { [weak self] in
            guard let stream = self?.transport.events else { return }
            for await event in stream {
                guard let self else { return }
                let actions: [MeshAction] = self.core.withLock { core in
                    var actions: [MeshAction] = []
                    let now = Self.now()
                    switch event {
                    case .linkUp(let link, let mtu): core.router.linkUp(link, mtu: min(mtu, self.setup.mtu ?? mtu), now: now)
                    case .receiveLinkUp(let link, let mtu, let air):
                        core.router.linkUp(link, mtu: min(mtu, self.setup.mtu ?? mtu), sendsOn: air, now: now)
                    case .linkDown(let link):
                        core.router.linkDown(link)
                        self.pacer.linkDown(link)
                    case .frame(let link, let frame): _ = core.router.receive(frame, on: link, now: now, actions: &actions)
                    }
                    // Due forwards and announces right away rather than at the next timer pass.
                    if let due = core.router.nextDeadline, due <= now { core.router.tick(now: now, actions: &actions) }
                    return actions
                }
                await self.perform(actions)
            }
        }
        let timer = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                let (actions, wait, rotatedTo, inviteOpen): ([MeshAction], UInt64, MeshID?, Bool) = self.core.withLock { core in
                    var actions: [MeshAction] = []
                    let now = Self.now()
                    let before = core.router.identity.current.id
                    core.router.tick(now: now, actions: &actions)
                    let after = core.router.identity.current.id
                    let next = core.router.nextDeadline ?? (now + 1000)
                    // Forwards wait 10–80 ms; sleeping at most 20 ms keeps their jitter honest.
                    return (actions, min(max(next > now ? next - now : 1, 1), 20), before == after ? nil : after, core.router.inviteOpen)
                }
                await self.perform(actions)
                if let rotatedTo, let advertiser = self.advertiser { await advertiser(rotatedTo, inviteOpen) }
                try? await Task.sleep(for: .milliseconds(Int64(wait)))
            }
        }
        tasks.withLock { $0 = [events, timer] }
    }

    /// Writes frames and hands deliveries to the subscribers, in the router's order.
    private func perform(_ actions: [MeshAction]) async {
        for action in actions {
            switch action {
            case .transmit(let link, let frame):
                pacer.transmit(frame, on: link)
            case .deliver(let delivery):
                let subscribers = core.withLock { Array($0.subscribers.values) }
                for subscriber in subscribers {
                    if case .dropped = subscriber.yield(delivery) { countDropped(Self.queueFull) }
                }
            case .close(let link):
                if let closing = transport as? any LinkClosing {
                    await closing.close(link)
                } else {
                    logger.debug("a duplicate connection stays: the link layer cannot close it", metadata: ["link": "\(link)"])
                }
            }
        }
    }

    /// Sends a leave on every link, stops the link layer and ends every delivery stream.
    public func stop() async {
        let (actions, subscribers): ([MeshAction], [AsyncStream<MeshDelivery>.Continuation]) = core.withLock { core in
            guard !core.stopped else { return ([], []) }
            core.stopped = true
            var actions: [MeshAction] = []
            core.router.stop(now: Self.now(), actions: &actions)
            defer { core.subscribers = [:] }
            return (actions, Array(core.subscribers.values))
        }
        for action in actions { if case .transmit(let link, let frame) = action { try? await transport.send(frame, on: link) } }
        for task in tasks.withLock({ $0 }) { task.cancel() }
        await transport.stop()
        for subscriber in subscribers { subscriber.finish() }
    }
}
