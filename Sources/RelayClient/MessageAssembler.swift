import HummingbirdWSClient
import NIOCore

/// Turns WebSocket data frames into whole messages while enforcing our limits: every frame
/// at most `maxFrameSize`, every message (a frame and its continuations) at most
/// `maxMessageSize`, text valid UTF-8, continuations only inside a message. A breach throws,
/// which ends the connection; nothing oversized is ever kept.
struct MessageAssembler {
    let maxFrameSize: Int
    let maxMessageSize: Int
    private var pending: (isText: Bool, bytes: [UInt8])?

    init(maxFrameSize: Int, maxMessageSize: Int) {
        self.maxFrameSize = maxFrameSize
        self.maxMessageSize = maxMessageSize
    }

    /// Feeds one frame; returns a message when `frame` completes one.
    mutating func push(_ frame: WebSocketDataFrame) throws -> RelayConnection.Inbound? {
        let size = frame.data.readableBytes
        guard size <= maxFrameSize else { throw RelayClientError.frameTooLarge(limit: maxFrameSize) }
        switch frame.opcode {
        case .text, .binary:
            guard pending == nil else {
                throw RelayClientError.malformedMessage("new message started inside a fragmented one")
            }
            if frame.fin {
                return try Self.message(isText: frame.opcode == .text, bytes: Array(frame.data.readableBytesView), limit: maxMessageSize)
            }
            pending = (frame.opcode == .text, Array(frame.data.readableBytesView))
            return nil
        case .continuation:
            guard var current = pending else {
                throw RelayClientError.malformedMessage("continuation frame outside a message")
            }
            guard current.bytes.count + size <= maxMessageSize else {
                pending = nil
                throw RelayClientError.frameTooLarge(limit: maxMessageSize)
            }
            pending = nil
            current.bytes.append(contentsOf: frame.data.readableBytesView)
            if frame.fin {
                return try Self.message(isText: current.isText, bytes: current.bytes, limit: maxMessageSize)
            }
            pending = current
            return nil
        }
    }

    private static func message(isText: Bool, bytes: [UInt8], limit: Int) throws -> RelayConnection.Inbound {
        guard bytes.count <= limit else { throw RelayClientError.frameTooLarge(limit: limit) }
        guard isText else { return .binary(byteCount: bytes.count) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw RelayClientError.malformedMessage("text frame is not valid UTF-8")
        }
        return .text(text)
    }
}
