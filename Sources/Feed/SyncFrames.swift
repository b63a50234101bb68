import Crypto

/// The five feed packet types of feed.md 8.1 and their frames (8.4), big-endian.
public enum SyncFrameType: UInt8, Sendable, CaseIterable {
    case request = 0x40, offer = 0x41, chunk = 0x42, ack = 0x43, range = 0x44

    /// Bytes of one frame (a chunk's is its header; its envelope follows).
    var frameCount: Int {
        switch self {
        case .request: return 36
        case .offer, .range: return 40
        case .chunk: return 36
        case .ack: return 33
        }
    }
}

public enum SyncFrame: Equatable, Sendable {
    public static let nothing: UInt32 = 0xFFFF_FFFF
    public static let maximumFrames = 64

    case request(feedID: [UInt8], haveSequence: UInt32)
    case range(feedID: [UInt8], from: UInt32, to: UInt32)
    case offer(feedID: [UInt8], haveSequence: UInt32, messageCount: UInt32)
    case chunk(messageID: [UInt8], envelope: [UInt8])
    case ack(messageID: [UInt8], refused: Bool)

    var type: SyncFrameType {
        switch self {
        case .request: return .request
        case .range: return .range
        case .offer: return .offer
        case .chunk: return .chunk
        case .ack: return .ack
        }
    }

    static func u32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.bigEndian, Array.init) }

    public var bytes: [UInt8] {
        switch self {
        case .request(let feedID, let have): return feedID + Self.u32(have)
        case .range(let feedID, let from, let to): return feedID + Self.u32(from) + Self.u32(to)
        case .offer(let feedID, let have, let count): return feedID + Self.u32(have) + Self.u32(count)
        case .chunk(let messageID, let envelope): return messageID + [0, 0, 0, 1] + envelope
        case .ack(let messageID, let refused): return messageID + [refused ? 1 : 0]
        }
    }

    /// The plaintext of a packet of `type`: 1–64 frames of that type (a chunk: exactly one).
    public static func encode(_ frames: [SyncFrame], as type: SyncFrameType) throws(FeedError) -> [UInt8] {
        guard (1...(type == .chunk ? 1 : maximumFrames)).contains(frames.count), frames.allSatisfy({ $0.type == type }) else {
            throw .badFrame
        }
        return frames.flatMap(\.bytes)
    }

    /// Decodes a packet's plaintext; `bad_frame` for anything 8.4 refuses.
    public static func decode(_ bytes: [UInt8], as type: SyncFrameType) throws(FeedError) -> [SyncFrame] {
        func u32(_ at: Int) -> UInt32 { bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        if type == .chunk {
            guard bytes.count > 36, bytes.count - 36 <= UnverifiedEnvelope.maximumBytes,
                  bytes[32] == 0, bytes[33] == 0, bytes[34] == 0, bytes[35] == 1 else { throw .badFrame }
            return [.chunk(messageID: Array(bytes[0..<32]), envelope: Array(bytes[36...]))]
        }
        let size = type.frameCount
        guard !bytes.isEmpty, bytes.count % size == 0, bytes.count / size <= maximumFrames else { throw .badFrame }
        return try stride(from: 0, to: bytes.count, by: size).map { (at: Int) throws(FeedError) -> SyncFrame in
            let id = Array(bytes[at..<at + 32])
            switch type {
            case .request: return .request(feedID: id, haveSequence: u32(at + 32))
            case .range:
                let from = u32(at + 32), to = u32(at + 36)
                guard from <= to, to < nothing else { throw .badFrame }
                return .range(feedID: id, from: from, to: to)
            case .offer:
                let have = u32(at + 32), count = u32(at + 36)
                guard have != nothing || count == 0 else { throw .badFrame }
                return .offer(feedID: id, haveSequence: have, messageCount: count)
            case .ack:
                guard bytes[at + 32] <= 1 else { throw .badFrame }
                return .ack(messageID: id, refused: bytes[at + 32] == 1)
            case .chunk: throw .badFrame
            }
        }
    }
}

/// Presence (feed.md 8.2): the 8-byte tag a node puts in its announces.
public enum FeedPresence {
    public static func tag(presenceKey: [UInt8], meshKey: [UInt8]) -> [UInt8] {
        let mac = HMAC<SHA256>.authenticationCode(for: Array("burrow-feed-v1:presence".utf8) + meshKey, using: SymmetricKey(data: presenceKey))
        return Array(Array(mac).prefix(8))
    }
}

/// Link sealing between two contacts (feed.md 8.3): per direction keys from the pair key and the
/// two mesh keys, a counter per packet, the packet type and both mesh ids as AD.
public struct FeedLink: Sendable {
    public let sendKey: [UInt8]
    public let receiveKey: [UInt8]
    public let ownMeshID: [UInt8]
    public let peerMeshID: [UInt8]
    /// The next counter to send with.
    public private(set) var nextCounter: UInt64 = 0
    /// The last counter accepted from the peer.
    public private(set) var lastReceived: UInt64?

    /// The receive key of the previous pair key with this contact (8.3: "a receiver also
    /// tries the previous one"), for packets a peer seals before it has our newest key.
    public let previousReceiveKey: [UInt8]?

    /// `ownMeshID`/`peerMeshID` are the mesh ids of the two mesh keys (mesh.md 2). Packets are
    /// sealed with `pairKey`, the newest; `previousPairKey` is only tried on receipt.
    public init(pairKey: [UInt8], previousPairKey: [UInt8]? = nil, ownMeshKey: [UInt8], peerMeshKey: [UInt8], ownMeshID: [UInt8],
                peerMeshID: [UInt8], lastReceived: UInt64? = nil) {
        (sendKey, receiveKey) = Self.keys(pairKey, ownMeshKey: ownMeshKey, peerMeshKey: peerMeshKey)
        previousReceiveKey = previousPairKey.map { Self.keys($0, ownMeshKey: ownMeshKey, peerMeshKey: peerMeshKey).receive }
        self.ownMeshID = ownMeshID
        self.peerMeshID = peerMeshID
        self.lastReceived = lastReceived
    }

    /// The same link under a new pair key. Counters belong to the pair of mesh keys, not to the
    /// pair key (8.3), so they go on: no counter is reused, and an old packet replayed under the
    /// previous key is still `link_replay`.
    public func rekeyed(pairKey: [UInt8], previousPairKey: [UInt8]?, ownMeshKey: [UInt8], peerMeshKey: [UInt8]) -> FeedLink {
        var link = FeedLink(pairKey: pairKey, previousPairKey: previousPairKey, ownMeshKey: ownMeshKey, peerMeshKey: peerMeshKey,
                            ownMeshID: ownMeshID, peerMeshID: peerMeshID, lastReceived: lastReceived)
        link.nextCounter = nextCounter
        return link
    }

    private static func keys(_ pairKey: [UInt8], ownMeshKey: [UInt8], peerMeshKey: [UInt8]) -> (send: [UInt8], receive: [UInt8]) {
        let ownIsLow = ownMeshKey.lexicographicallyPrecedes(peerMeshKey)
        let salt = ownIsLow ? ownMeshKey + peerMeshKey : peerMeshKey + ownMeshKey
        let k = FeedAudience.hkdf(pairKey, salt: salt, info: Array("burrow-feed-v1:link".utf8), count: 64)
        return ownIsLow ? (Array(k[0..<32]), Array(k[32..<64])) : (Array(k[32..<64]), Array(k[0..<32]))
    }

    static let overhead = 8 + 16

    /// The sealed payload of `frames` (a packet's plaintext) of `type`.
    public mutating func seal(_ frames: [UInt8], type: SyncFrameType) throws -> [UInt8] {
        let counter = nextCounter
        nextCounter += 1
        let counterBytes = withUnsafeBytes(of: counter.bigEndian, Array.init)
        let sealed = try FeedAudience.seal(frames, key: sendKey, nonce: [0, 0, 0, 0] + counterBytes,
                                           binding: [type.rawValue] + ownMeshID + peerMeshID)
        return counterBytes + sealed
    }

    /// The frames of a payload from the peer: `bad_frame` outside the type's size,
    /// `link_replay` for a counter not above the last accepted, `link_failed` when it does not open.
    public mutating func open(_ payload: [UInt8], type: SyncFrameType) throws(FeedError) -> [UInt8] {
        let maximumPlain = type == .chunk ? 36 + UnverifiedEnvelope.maximumBytes : SyncFrame.maximumFrames * type.frameCount
        guard payload.count > Self.overhead, payload.count - Self.overhead <= maximumPlain else { throw .badFrame }
        let counter = payload.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        if let lastReceived, counter <= lastReceived { throw .linkReplay }
        let nonce = [0, 0, 0, 0] + Array(payload.prefix(8))
        let binding = [type.rawValue] + peerMeshID + ownMeshID
        var opened: [UInt8]?
        for key in [receiveKey] + (previousReceiveKey.map { [$0] } ?? []) where opened == nil {
            opened = try? FeedAudience.open(payload.dropFirst(8), key: key, nonce: nonce, binding: binding)
        }
        guard let opened else { throw .linkFailed }
        lastReceived = counter
        return opened
    }
}
