import Mesh
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// One peer of the loopback radio: a UDP port on 127.0.0.1 and the link's MTU (20–509, 185
/// by default), as in `--mesh udp:PORT,N1[/MTU],…`.
public struct UDPPeer: Sendable, Hashable {
    public let port: Int
    public let mtu: Int

    public init(port: Int, mtu: Int = 185) {
        self.port = port
        self.mtu = mtu
    }
}

/// The loopback radio of `Docs/protocols/mesh.md` 11.2: bound to `127.0.0.1:PORT` only, sending from that
/// socket; each listed port is one link, up from the start. One datagram is one frame, at most
/// the sending link's MTU; datagrams over 509 bytes, or from anywhere but 127.0.0.1 and a listed
/// port, are dropped. An optional impairment drops, duplicates and delays datagrams as 11.2
/// says.
public final class UDPLoopbackTransport: MeshTransport {
    public let name = "udp"
    public let events: AsyncStream<TransportEvent>
    public let port: Int
    public let peers: [UDPPeer]

    private let channel: Channel
    private let continuation: AsyncStream<TransportEvent>.Continuation
    private let impairment: NIOLockedValueBox<UDPImpairment?>
    private let addresses: [SocketAddress]

    /// Binds and brings every link up (a `.linkUp` per peer is the first thing on `events`).
    public static func start(
        port: Int, peers: [UDPPeer], impairment: UDPImpairment? = nil, group: EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> UDPLoopbackTransport {
        guard (1...65535).contains(port) else { throw MeshLinkError.invalidLink("port \(port)") }
        var seen = Set<Int>()
        for peer in peers {
            guard (1...65535).contains(peer.port), peer.port != port, seen.insert(peer.port).inserted else {
                throw MeshLinkError.invalidLink("peer port \(peer.port)")
            }
            guard (MeshProtocol.minMTU...MeshProtocol.maxFrame).contains(peer.mtu) else {
                throw MeshLinkError.invalidLink("mtu \(peer.mtu)")
            }
        }
        let addresses = try peers.map { try SocketAddress(ipAddress: "127.0.0.1", port: $0.port) }
        let linkByPort = Dictionary(uniqueKeysWithValues: peers.enumerated().map { ($0.element.port, LinkID(UInt32($0.offset))) })
        let (stream, continuation) = AsyncStream<TransportEvent>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let channel: Channel
        do {
            channel = try await DatagramBootstrap(group: group)
                .channelOption(.socketOption(.so_reuseaddr), value: 0)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(InboundFrames(links: linkByPort, continuation: continuation))
                    }
                }
                .bind(host: "127.0.0.1", port: port).get()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            continuation.finish()
            throw MeshLinkError.portInUse(port)
        }
        let transport = UDPLoopbackTransport(
            port: port, peers: peers, channel: channel, continuation: continuation, stream: stream, addresses: addresses,
            impairment: impairment
        )
        for (index, peer) in peers.enumerated() { continuation.yield(.linkUp(LinkID(UInt32(index)), mtu: peer.mtu)) }
        return transport
    }

    private init(
        port: Int, peers: [UDPPeer], channel: Channel, continuation: AsyncStream<TransportEvent>.Continuation,
        stream: AsyncStream<TransportEvent>, addresses: [SocketAddress], impairment: UDPImpairment?
    ) {
        self.port = port
        self.peers = peers
        self.channel = channel
        self.continuation = continuation
        events = stream
        self.addresses = addresses
        self.impairment = NIOLockedValueBox(impairment)
    }

    public func send(_ frame: [UInt8], on link: LinkID) async throws {
        let index = Int(link.value)
        guard index < peers.count, frame.count <= peers[index].mtu else { throw MeshLinkError.frameRejected }
        guard channel.isActive else { throw MeshLinkError.notRunning }
        let delays: [UInt64] = impairment.withLockedValue { impairment in
            guard impairment != nil else { return [0] }
            return impairment?.next() ?? [0]
        }
        let address = addresses[index]
        for delay in delays {
            let envelope = AddressedEnvelope(remoteAddress: address, data: channel.allocator.buffer(bytes: frame))
            if delay == 0 {
                try await channel.writeAndFlush(envelope)
            } else {
                let channel = self.channel
                channel.eventLoop.scheduleTask(in: .milliseconds(Int64(delay))) {
                    channel.writeAndFlush(envelope, promise: nil)
                }
            }
        }
    }

    public func stop() async {
        try? await channel.close()
        continuation.finish()
    }
}

/// Reads datagrams: only from 127.0.0.1 and a listed port, at most 509 bytes.
private final class InboundFrames: ChannelInboundHandler, Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    let links: [Int: LinkID]
    let continuation: AsyncStream<TransportEvent>.Continuation

    init(links: [Int: LinkID], continuation: AsyncStream<TransportEvent>.Continuation) {
        self.links = links
        self.continuation = continuation
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        guard envelope.remoteAddress.ipAddress == "127.0.0.1", let port = envelope.remoteAddress.port, let link = links[port],
              envelope.data.readableBytes <= MeshProtocol.maxFrame,
              let bytes = envelope.data.getBytes(at: envelope.data.readerIndex, length: envelope.data.readableBytes)
        else { return }
        continuation.yield(.frame(link, bytes))
    }

    func channelInactive(context: ChannelHandlerContext) {
        for link in links.values { continuation.yield(.linkDown(link)) }
        continuation.finish()
        context.fireChannelInactive()
    }
}

extension UDPLoopbackTransport: LinkRoleReporting {
    public func role(of link: LinkID) -> String { "udp" }
}
