/// The control socket's framing: a 4-byte big-endian payload length, then that many bytes
/// (UTF-8 JSON). One request frame per connection; the answer is one response frame, after
/// any number of progress frames (`ControlProgress`).
///
/// Each direction has its own limit, checked as soon as the length prefix is read, so a peer
/// can never make the other side buffer more than the limit plus four bytes.
public enum ControlFrame {
    /// Bytes of the length prefix.
    public static let headerCount = 4
    /// A request is a command line and a passphrase: 1 MiB is far more than any needs.
    public static let maximumRequestPayloadCount = 1 << 20
    /// An answer can be a long `messages` or `fetch` listing, so it may be larger.
    public static let maximumResponsePayloadCount = 64 << 20

    /// Prefixes `payload` with its length; `frameTooLarge` above `limit`.
    static func encode(_ payload: [UInt8], limit: Int) throws -> [UInt8] {
        guard payload.count <= limit else {
            throw ControlError.frameTooLarge(announced: payload.count, limit: limit)
        }
        let n = UInt32(payload.count)
        var frame: [UInt8] = [UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16),
                              UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
        frame.reserveCapacity(headerCount + payload.count)
        frame.append(contentsOf: payload)
        return frame
    }

    /// The payload of `bytes`, which must hold exactly one frame (nothing missing, nothing after).
    static func decode(_ bytes: [UInt8], limit: Int) throws -> [UInt8] {
        var reader = ControlFrameReader(limit: limit)
        guard let payload = try reader.append(bytes) else {
            try reader.finish()
            // `finish` throws for every incomplete frame; an empty payload is complete.
            return []
        }
        return payload
    }
}

/// Reads one frame from a byte stream that arrives in pieces: a small state machine that
/// holds at most `limit + 4` bytes and says exactly what was wrong when the stream is not one frame.
struct ControlFrameReader {
    private enum State {
        /// Waiting for the rest of the length prefix.
        case header
        /// The prefix announced `count` payload bytes.
        case payload(count: Int)
        /// The frame is complete and was handed out.
        case complete
    }

    let limit: Int
    private var state = State.header
    private var buffered: [UInt8] = []

    init(limit: Int) { self.limit = limit }

    /// Whether any byte of the frame has arrived.
    var hasStarted: Bool {
        if case .header = state { return !buffered.isEmpty }
        return true
    }

    /// Whether the whole frame has arrived.
    var isComplete: Bool {
        if case .complete = state { return true }
        return false
    }

    /// Takes the next bytes of the stream; returns the payload once the frame is complete.
    /// Throws `frameTooLarge` as soon as the prefix announces more than `limit`, and
    /// `frameMalformed` for any byte after the frame.
    mutating func append<Bytes: Collection>(_ bytes: Bytes) throws -> [UInt8]? where Bytes.Element == UInt8 {
        var rest = ArraySlice(bytes)
        let payload = try take(&rest)
        guard rest.isEmpty else { throw ControlError.frameMalformed("bytes follow the frame") }
        return payload
    }

    /// As `append`, for a stream of frames: consumes bytes up to the end of this frame and
    /// leaves the rest in `rest` for the next reader.
    mutating func take(_ rest: inout ArraySlice<UInt8>) throws -> [UInt8]? {
        while true {
            switch state {
            case .complete:
                guard rest.isEmpty else { throw ControlError.frameMalformed("bytes follow the frame") }
                return nil
            case .header:
                let take = min(ControlFrame.headerCount - buffered.count, rest.count)
                buffered.append(contentsOf: rest.prefix(take))
                rest = rest.dropFirst(take)
                guard buffered.count == ControlFrame.headerCount else { return nil }
                let count = buffered.reduce(0) { $0 << 8 | Int($1) }
                guard count <= limit else { throw ControlError.frameTooLarge(announced: count, limit: limit) }
                buffered.removeAll(keepingCapacity: false)
                buffered.reserveCapacity(count)
                state = .payload(count: count)
            case .payload(let count):
                let take = min(count - buffered.count, rest.count)
                buffered.append(contentsOf: rest.prefix(take))
                rest = rest.dropFirst(take)
                guard buffered.count == count else { return nil }
                state = .complete
                defer { buffered = [] }
                return buffered
            }
        }
    }

    /// The stream ended: throws `frameTruncated` unless the frame was complete.
    func finish() throws {
        switch state {
        case .complete:
            return
        case .header:
            throw ControlError.frameTruncated(expected: ControlFrame.headerCount, received: buffered.count)
        case .payload(let count):
            throw ControlError.frameTruncated(expected: ControlFrame.headerCount + count,
                                                  received: ControlFrame.headerCount + buffered.count)
        }
    }
}
