import Foundation
import NIOCore
import NIOPosix
import Node

/// The forwarding end of the control channel: a command that finds the home locked hands its
/// command line to the `burrow run` that owns it and prints the answer.
public enum ControlClient {
    /// Sends `request` to the node serving `home` and waits at most `timeout` (connecting
    /// included) for its answer.
    ///
    /// Throws `notAnswering` when nothing accepts on `<home>/burrow.sock` (no socket
    /// file, or a stale one): the CLI's `busy`. Throws `timeout` when no complete answer came in
    /// time — the node may still run the command. Throws `frameTruncated` when the node
    /// closed the connection without a complete answer (it was shutting down, or refused the
    /// request), `frameTooLarge` for a request over the limit (before connecting) or an
    /// answer over it, `frameMalformed` for an answer that is not a response.
    ///
    /// `progress` receives the command's progress output as it arrives; each piece of progress
    /// also restarts the `timeout` (the node is working, not stuck).
    public static func send(_ request: ControlRequest, home: URL, timeout: Duration,
                            progress: (@Sendable (String) -> Void)? = nil) async throws -> ControlResponse {
        guard timeout > .zero else { throw NodeError.invalidInput("the control timeout must be positive") }
        let frame = try request.encodedFrame()
        let path = try ControlSocketFile.checkedPath(home: home, error: ControlError.notAnswering)
        // One loop for the channel, its handler, the answer and the timer.
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        let answer = loop.makePromise(of: ControlResponse.self)
        let reader = ControlResponseHandler(answer: answer, progress: progress)

        let channel: Channel
        do {
            channel = try await ClientBootstrap(group: loop)
                .connectTimeout(TimeAmount(timeout))
                .channelInitializer { $0.pipeline.addHandler(reader) }
                .connect(unixDomainSocketPath: path)
                .get()
        } catch {
            // Settle the promise (NIO insists every promise is completed) on its loop.
            try? await loop.submit { reader.complete(.failure(error)) }.get()
            if ControlSocketFile.isNobodyListening(error) {
                throw ControlError.notAnswering("nothing accepts on \(path)")
            }
            if case ChannelError.connectTimeout? = error as? ChannelError {
                throw NodeError.timeout("connecting to the running node on \(path) took longer than \(timeout)")
            }
            throw ControlError.notAnswering("connecting to \(path) failed: \(error)")
        }

        let expire: @Sendable () -> Void = {
            reader.complete(.failure(NodeError.timeout("the running node did not answer within \(timeout)")))
            channel.close(promise: nil)
        }
        try await channel.eventLoop.submit {
            reader.timer = channel.eventLoop.scheduleTask(deadline: deadline, expire)
            reader.restartTimer = {
                reader.timer?.cancel()
                reader.timer = channel.eventLoop.scheduleTask(in: TimeAmount(timeout), expire)
            }
        }.get()
        defer {
            channel.eventLoop.execute { reader.timer?.cancel() }
            channel.close(promise: nil)
        }
        channel.writeAndFlush(channel.allocator.buffer(bytes: frame), promise: nil)
        return try await answer.futureResult.get()
    }
}

/// Reads a control connection's progress frames (handing each to `progress`) and its one
/// response frame, and completes `answer` exactly once: with the response, or with why there is none.
/// `@unchecked Sendable`: NIO calls it only on its channel's event loop.
final class ControlResponseHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    // Touched only on the channel's event loop (the timer runs there too).
    private var reader = ControlFrameReader(limit: ControlFrame.maximumResponsePayloadCount)
    private var completed = false
    private let answer: EventLoopPromise<ControlResponse>
    private let progress: (@Sendable (String) -> Void)?
    /// The answer's deadline, restarted by each progress frame.
    var timer: Scheduled<Void>?
    var restartTimer: (() -> Void)?

    init(answer: EventLoopPromise<ControlResponse>, progress: (@Sendable (String) -> Void)? = nil) {
        self.answer = answer
        self.progress = progress
    }

    func complete(_ result: Result<ControlResponse, Error>) {
        guard !completed else { return }
        completed = true
        answer.completeWith(result)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !completed else { return }
        do {
            var rest = ArraySlice(unwrapInboundIn(data).readableBytesView)
            while !completed, let payload = try reader.take(&rest) {
                reader = ControlFrameReader(limit: ControlFrame.maximumResponsePayloadCount)
                switch try ControlAnswerFrame(payload: payload) {
                case .progress(let frame):
                    progress?(frame.text)
                    restartTimer?()
                case .response(let response):
                    guard rest.isEmpty else { throw ControlError.frameMalformed("bytes follow the answer") }
                    complete(.success(response))
                }
            }
        } catch {
            complete(.failure(error))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A complete frame has completed the answer already; otherwise say what is missing.
        if !completed {
            do { try reader.finish() } catch { complete(.failure(error)) }
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A reset before the answer is complete is the same as an early close.
        context.close(promise: nil)
    }
}
