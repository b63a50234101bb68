import Location
import NIOCore
import NIOPosix
import Synchronization

/// A connection to gpsd (gpsd_json(5)) on TCP: sends `?WATCH`, then yields the position of every
/// TPV report; lines are at most `GPSDProtocol.maximumLine` bytes (a longer one ends the
/// connection: gpsd never sends one, so whatever serves that port is not gpsd). The stream ends
/// when the connection does; the caller reconnects with backoff.
enum GPSDReader {
    static func positions(host: String, port: Int, group: EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws
        -> (fixes: AsyncStream<UnverifiedFix>, close: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream.makeStream(of: UnverifiedFix.self, bufferingPolicy: .bufferingNewest(256))
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(LineHandler(continuation)) }
            }
            .connect(host: host, port: port).get()
        var watch = channel.allocator.buffer(capacity: GPSDProtocol.watch.utf8.count)
        watch.writeString(GPSDProtocol.watch)
        try await channel.writeAndFlush(watch).get()
        return (stream, { channel.close(promise: nil) })
    }

    private final class LineHandler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        private let continuation: AsyncStream<UnverifiedFix>.Continuation
        private var pending: [UInt8] = []

        init(_ continuation: AsyncStream<UnverifiedFix>.Continuation) { self.continuation = continuation }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            guard let bytes = buffer.readBytes(length: buffer.readableBytes) else { return }
            for byte in bytes {
                if byte == UInt8(ascii: "\n") {
                    if case .position(let reported)? = try? GPSDProtocol.parse(line: pending) { continuation.yield(reported) }
                    pending = []
                } else if byte != UInt8(ascii: "\r") {
                    pending.append(byte)
                    if pending.count > GPSDProtocol.maximumLine {
                        pending = []
                        context.close(promise: nil)
                        return
                    }
                }
            }
        }

        func channelInactive(context: ChannelHandlerContext) { continuation.finish() }

        func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }
    }
}
