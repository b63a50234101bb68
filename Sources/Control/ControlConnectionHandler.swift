import Logging
import NIOCore
import Node

/// One accepted control connection: read one request frame, queue it on the node's mailbox,
/// write any progress the command sends, then the answer, close.
///
/// Bounded in time at both ends a client controls: the request must arrive within `timeout`
/// of the connection opening, and the answer must be taken within `timeout` of being written.
/// The handler's own run time is not bounded here (a command may wait on relays; it has its own
/// timeouts). Anything that is not exactly one valid request frame closes the connection
/// without an answer and is logged; it never reaches the handler.
final class ControlConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        /// Collecting the request frame.
        case receiving(ControlFrameReader)
        /// The request is queued or being handled.
        case answering
        /// Closed, or rejected and closing.
        case finished
    }

    private var state = State.receiving(ControlFrameReader(limit: ControlFrame.maximumRequestPayloadCount))
    private var deadline: Scheduled<Void>?
    private let timeout: TimeAmount
    private let mailbox: NodeMailbox
    private let handler: ControlServer.Handler
    private let logger: Logger

    init(timeout: TimeAmount, mailbox: NodeMailbox, handler: @escaping ControlServer.Handler, logger: Logger) {
        self.timeout = timeout
        self.mailbox = mailbox
        self.handler = handler
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        let logger = logger
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            logger.notice("control connection closed: no complete request in time")
            channel.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .receiving(var reader) = state else { return }  // bytes after the request: ignored
        let bytes = unwrapInboundIn(data)
        do {
            guard let payload = try reader.append(bytes.readableBytesView) else {
                state = .receiving(reader)
                return
            }
            let request = try ControlRequest(payload: payload)
            state = .answering
            deadline?.cancel()
            deadline = nil
            answer(request, context: context)
        } catch {
            reject(error, context: context)
        }
    }

    private func answer(_ request: ControlRequest, context: ChannelHandlerContext) {
        let channel = context.channel
        let logger = logger
        let timeout = timeout
        let promise = context.eventLoop.makePromise(of: ControlResponse.self)
        let handler = handler
        var request = request
        // Progress goes out as it comes; NIO keeps writes in order, so it precedes the answer.
        request.progress = { text in
            guard let frame = try? ControlProgress(text: text).encodedFrame() else { return }
            channel.writeAndFlush(channel.allocator.buffer(bytes: frame), promise: nil)
        }
        let forwarded = request
        mailbox.submit({ await handler(forwarded) }, completion: { promise.completeWith($0) })
        promise.futureResult.whenComplete { result in
            let frame: [UInt8]
            switch result {
            case .success(let response):
                do {
                    frame = try response.encodedFrame()
                } catch {
                    logger.error("control answer dropped: \(error)")
                    channel.close(promise: nil)
                    return
                }
            case .failure:
                // The server is closing and dropped this queued request.
                channel.close(promise: nil)
                return
            }
            let stall = channel.eventLoop.scheduleTask(in: timeout) {
                logger.notice("control connection closed: the client did not take its answer in time")
                channel.close(promise: nil)
            }
            channel.writeAndFlush(channel.allocator.buffer(bytes: frame)).whenComplete { _ in
                stall.cancel()
                channel.close(promise: nil)
            }
        }
    }

    private func reject(_ error: Error, context: ChannelHandlerContext) {
        state = .finished
        deadline?.cancel()
        deadline = nil
        logger.notice("control connection rejected: \(error)")
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .receiving(let reader) = state, reader.hasStarted {
            do { try reader.finish() } catch { logger.notice("control connection rejected: \(error)") }
        }
        state = .finished
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    /// Sent by `ControlServer.close`: a connection still sending its request ends now.
    struct ServerClosing {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ServerClosing, case .receiving = state {
            state = .finished
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        logger.debug("control connection failed: \(error)")
        context.close(promise: nil)
    }
}
