import Foundation
import HummingbirdWSClient
import Logging
import Nostr
import NIOCore
import NIOPosix
import NIOSSL
import NIOWebSocket

/// One WebSocket to one relay: connect (bounded), send text, and an `inbound` stream of the
/// text messages the relay sends, ending with exactly one `.closed(reason)`.
///
/// Transport only: it knows nothing of NIP-01 (the session decodes what arrives). It enforces
/// the frame and message limits of `RelayConfiguration` in both directions; a relay that
/// exceeds them has its connection dropped with `frameTooLarge`.
public actor RelayConnection {
    public enum Inbound: Sendable, Equatable {
        /// One complete text message.
        case text(String)
        /// A binary message (NIP-01 is text only); the size is all we keep.
        case binary(byteCount: Int)
        /// The connection ended; nothing follows.
        case closed(RelayClientError)
    }

    private enum State {
        case idle
        case connecting
        case open(WebSocketOutboundWriter)
        case closed(RelayClientError)
    }

    public nonisolated let url: RelayURL
    public nonisolated let inbound: AsyncStream<Inbound>
    private let continuation: AsyncStream<Inbound>.Continuation
    private let configuration: RelayConfiguration
    private let logger: Logger
    private var state: State = .idle
    private let opened = OneShot<Void>()
    private var runTask: Task<Void, Never>?
    private var sendTail: Task<Void, Error>?
    private var closeRequested = false

    public init(url: RelayURL, configuration: RelayConfiguration = RelayConfiguration(), logger: Logger? = nil) {
        self.url = url
        self.configuration = configuration
        var logger = logger ?? Logger(label: "burrow.relay")
        logger[metadataKey: "relay"] = .string(url.description)
        self.logger = logger
        (inbound, continuation) = AsyncStream.makeStream(of: Inbound.self, bufferingPolicy: .unbounded)
    }

    public var isOpen: Bool {
        if case .open = state { return true }
        return false
    }

    /// Opens the WebSocket; throws `unreachable`, `tlsFailed` or `timeout` (after `connectTimeout`).
    public func connect() async throws {
        switch state {
        case .idle:
            start()
        case .connecting, .open:
            break
        case .closed(let reason):
            throw reason
        }
        do {
            try await opened.value(timeout: configuration.connectTimeout, waitingFor: "connecting to \(url)")
        } catch let error as RelayClientError {
            if case .timeout = error { finish(error) }
            throw error
        }
    }

    /// Sends one text message. Messages are written one at a time, never interleaved.
    public func send(_ text: String) async throws {
        guard text.utf8.count <= configuration.effectiveMaxMessageSize else {
            throw RelayClientError.outboundTooLarge(limit: configuration.effectiveMaxMessageSize)
        }
        guard case .open(let outbound) = state else {
            if case .closed(let reason) = state { throw reason }
            throw RelayClientError.connectionClosed("not connected")
        }
        let previous = sendTail
        let write = Task {
            _ = await previous?.result
            try await outbound.writeTextMessage(text)
        }
        sendTail = write
        do {
            try await write.value
        } catch {
            throw RelayClientError.connectionClosed("write failed: \(error)")
        }
    }

    /// Closes the connection (WebSocket close handshake, then the socket).
    public func close() async {
        closeRequested = true
        switch state {
        case .open(let outbound):
            try? await outbound.close(.normalClosure, reason: nil)
            runTask?.cancel()
        case .idle, .connecting:
            runTask?.cancel()
            finish(.shutDown)
        case .closed:
            break
        }
        _ = await runTask?.value
    }

    // MARK: - Running the WebSocket

    private func start() {
        state = .connecting
        var wsConfiguration = WebSocketClientConfiguration(
            maxFrameSize: configuration.frameReadCeiling,
            closeTimeout: .seconds(5),
            autoPing: configuration.pingInterval.map { .enabled(timePeriod: $0) } ?? .disabled,
            validateUTF8: false  // checked in MessageAssembler, as a typed error
        )
        wsConfiguration.sniHostname = url.isTLS ? url.bareHost : nil
        let continuation = self.continuation
        let limits = (frame: configuration.effectiveMaxFrameSize, message: configuration.effectiveMaxMessageSize)
        let address = url.dialString
        let tlsConfiguration = url.isTLS ? configuration.tlsConfiguration : nil
        let logger = self.logger
        // The client is made and run outside the actor: the library runs it on its own event
        // loop, and the actor only hears of it through `didOpen` and `didEnd`.
        runTask = Task.detached { [self] in
            let client = WebSocketClient(
                url: address, configuration: wsConfiguration, tlsConfiguration: tlsConfiguration,
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger
            ) { [weak self] inbound, outbound, _ in
                guard let self else { return }
                await self.didOpen(outbound)
                var assembler = MessageAssembler(maxFrameSize: limits.frame, maxMessageSize: limits.message)
                for try await frame in inbound {
                    // A limit or protocol breach throws: the library closes the WebSocket and
                    // `run()` rethrows our typed error.
                    if let message = try assembler.push(frame) {
                        continuation.yield(message)
                    }
                }
            }
            let outcome: Result<WebSocketCloseFrame?, Error>
            do {
                outcome = .success(try await client.run())
            } catch {
                outcome = .failure(error)
            }
            logger.debug("websocket ended", metadata: ["outcome": "\(outcome)"])
            await self.didEnd(outcome)
        }
    }

    private func didOpen(_ outbound: WebSocketOutboundWriter) {
        guard case .connecting = state else { return }
        state = .open(outbound)
        logger.debug("connected")
        opened.succeed(())
    }

    private func didEnd(_ outcome: Result<WebSocketCloseFrame?, Error>) {
        let wasOpen = isOpen
        let reason: RelayClientError
        switch outcome {
        case .success(let frame):
            if closeRequested {
                reason = .shutDown
            } else if let frame {
                reason = .connectionClosed("relay closed: \(frame.closeCode)\(frame.reason.map { " \($0)" } ?? "")")
            } else {
                reason = .connectionClosed("connection lost")
            }
        case .failure(let error):
            reason = Self.classify(error, wasOpen: wasOpen, limit: configuration.effectiveMaxFrameSize, closeRequested: closeRequested)
        }
        finish(reason)
    }

    private func finish(_ reason: RelayClientError) {
        if case .closed = state { return }
        state = .closed(reason)
        opened.fail(reason)
        continuation.yield(.closed(reason))
        continuation.finish()
        logger.debug("closed", metadata: ["reason": "\(reason)"])
    }

    private static func classify(_ error: Error, wasOpen: Bool, limit: Int, closeRequested: Bool) -> RelayClientError {
        if let error = error as? RelayClientError { return error }
        if let error = error as? WebSocketClientError {
            if error == .serverSentMessageTooLarge { return .frameTooLarge(limit: limit) }
            if error == .webSocketUpgradeFailed { return .unreachable("WebSocket upgrade refused") }
            if error == .invalidURL { return .unreachable("invalid URL") }
            return wasOpen ? .connectionClosed("\(error)") : .unreachable("\(error)")
        }
        if let error = error as? NIOWebSocketError, error == .invalidFrameLength { return .frameTooLarge(limit: limit) }
        if error is NIOSSLError || error is NIOSSLExtraError { return .tlsFailed("\(error)") }
        if closeRequested { return .shutDown }
        if error is CancellationError { return wasOpen ? .connectionClosed("cancelled") : .timeout("connecting") }
        return wasOpen ? .connectionClosed(plainReason(error)) : .unreachable(plainReason(error))
    }

    /// A socket error in words ("connection refused", "host not found") instead of NIO's
    /// value dump, which names every address it tried.
    static func plainReason(_ error: Error) -> String {
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return plainReason(first.error) }
            return error.dnsAError != nil || error.dnsAAAAError != nil ? "host not found" : "no address to connect to"
        }
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)).lowercased() }
        if let error = error as? ChannelError, case .connectTimeout = error { return "connection timed out" }
        return "\(error)"
    }
}
