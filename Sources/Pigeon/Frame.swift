/// Section 3: every frame is `version (1) = 1 ‖ type (1) ‖ session id (16) ‖ body`, the same
/// bytes on every transport.
public enum FrameType: UInt8, Sendable, CaseIterable {
    case handshake1 = 1
    case handshake2 = 2
    case handshake3 = 3
    case message = 4
}

/// A 16-byte session id: SHA-256("burrow-pigeon-v1:session-id" ‖ e_i)[0..16).
public struct SessionID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public static let length = 16
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws(PigeonError) {
        guard bytes.count == Self.length else { throw .badFrame }
        self.bytes = bytes
    }

    init(valid bytes: [UInt8]) { self.bytes = bytes }

    /// The id of the session a handshake1 with initiator ephemeral `e` opens.
    public init(initiatorEphemeral e: X25519PublicKey) {
        bytes = Array(Primitives.sha256(Domain.sessionID + e.bytes)[0..<Self.length])
    }

    public var hex: String { hexString(bytes) }
    public var description: String { hex }
    public static func == (lhs: SessionID, rhs: SessionID) -> Bool { constantTimeEqual(lhs.bytes, rhs.bytes) }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
    /// Byte order: section 4.6 breaks a tie of handshake timestamps with the smaller id.
    public static func < (lhs: SessionID, rhs: SessionID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

/// A frame whose layout is valid (section 3's `bad_frame` rules): nothing about it is
/// authenticated yet; the engine routes it by type and session id.
public struct Frame: Sendable, Hashable {
    public static let headerLength = 18
    public static let handshake1Length = 58
    public static let handshake2Overhead = 146
    public static let handshake3Overhead = 114
    public static let messageOverhead = 74
    /// The largest frame: a message in the 16,384 bucket.
    public static let maximumLength = messageOverhead + Padding.buckets[Padding.buckets.count - 1]

    public let type: FrameType
    public let sessionID: SessionID
    /// Everything after the 18-byte header.
    public let body: [UInt8]
    /// The whole frame as received.
    public let bytes: [UInt8]

    /// Parses a frame. `bad_frame`: under 19 bytes, version ≠ 1, unknown type, a size outside
    /// the table, a handshake1 whose session id does not match its ephemeral key.
    public init(bytes: [UInt8]) throws(PigeonError) {
        guard bytes.count > Self.headerLength, bytes.count <= Self.maximumLength,
              bytes[0] == ProfileVersion.v1, let type = FrameType(rawValue: bytes[1])
        else { throw .badFrame }
        let size = bytes.count
        let cardRange = ContactCard.minimumLength...ContactCard.maximumLength
        switch type {
        case .handshake1: guard size == Self.handshake1Length else { throw .badFrame }
        case .handshake2: guard cardRange.contains(size - Self.handshake2Overhead) else { throw .badFrame }
        case .handshake3: guard cardRange.contains(size - Self.handshake3Overhead) else { throw .badFrame }
        case .message: guard Padding.buckets.contains(size - Self.messageOverhead) else { throw .badFrame }
        }
        let sessionID = SessionID(valid: Array(bytes[2..<18]))
        if type == .handshake1 {
            let e = X25519PublicKey(validBytes: Array(bytes[18..<50]))
            guard SessionID(initiatorEphemeral: e) == sessionID else { throw .badFrame }
        }
        self.type = type
        self.sessionID = sessionID
        self.body = Array(bytes[18...])
        self.bytes = bytes
    }

    /// The 18-byte header for a frame of `type` in `session`.
    static func header(_ type: FrameType, _ session: SessionID) -> [UInt8] {
        [ProfileVersion.v1, type.rawValue] + session.bytes
    }

    /// Handshake1's `ts` (the initiator's clock, ms): the 8 payload bytes after e.
    var handshake1Timestamp: UInt64? {
        guard type == .handshake1 else { return nil }
        return readU64(body[32..<40])
    }
}
