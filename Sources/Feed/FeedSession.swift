/// One packet of a session as it leaves a node: its type, the frames it carries and the sealed
/// payload the mesh sends (feed.md 8.3).
public struct FeedPacket: Equatable, Sendable {
    public let type: SyncFrameType
    public let frames: [UInt8]
    public let payload: [UInt8]

    /// Link frames on a radio of `mtu` (8.1): one if the directed packet fits, else fragments.
    public func linkFrames(mtu: Int) -> Int { FeedSession.linkFrames(payloadCount: payload.count, mtu: mtu) }
}

/// One side of a sync session between two contacts (feed.md 8.5), sans-I/O: `open` is round 1,
/// `step` hands it the packets delivered since and returns what it sends next. The peer runs
/// the same. A session ends after a round in which neither side sends anything; a short
/// encounter just stops, and the next session asks for what is still missing.
public struct FeedSession {
    /// What became of one delivered packet.
    public enum Delivery: Sendable {
        /// Refused by the link or the frame rules (`link_replay`, `link_failed`, `bad_frame`).
        case dropped(FeedError)
        /// A feed-chunk's outcome at the receiver.
        case chunk(FeedChunkReceiver.Received)
        /// Requests, ranges, offers or acks, taken in.
        case frames(Int)
    }

    public struct Step: Sendable {
        public let deliveries: [Delivery]
        public let sent: [FeedPacket]
    }

    private struct Selection {
        let feedID: [UInt8]
        let range: ClosedRange<UInt32>?
    }

    public private(set) var link: FeedLink
    /// The peer's feed, requested first when followed.
    public let peerFeedID: [UInt8]?
    /// Feeds asked for in this session: only their chunks are taken.
    public private(set) var requested: Set<[UInt8]> = []
    private var requestedRanges: Set<[UInt8]> = []
    /// Acks 0x01 the peer sent (its refusals of what we served), for the log.
    public private(set) var refusedByPeer = 0
    /// The peer's offers, by feed, as last heard.
    public private(set) var offers: [[UInt8]: (haveSequence: UInt32, count: UInt32)] = [:]
    /// Envelopes the peer's offers announced in this session, and chunks that arrived: fewer
    /// arrived means packets were lost, and the next session should come soon.
    public private(set) var offered = 0
    /// What the peer said it holds of each feed it requested (have_seq), as last heard.
    public private(set) var peerHolds: [[UInt8]: UInt32] = [:]
    public private(set) var chunksArrived = 0

    public init(link: FeedLink, peerFeedID: [UInt8]?) {
        self.link = link
        self.peerFeedID = peerFeedID
    }

    /// Round 1: a request per followed feed in feed order, then each feed's gaps and backfill.
    public mutating func open(_ store: FeedSyncStore) throws -> [FeedPacket] {
        let feeds = feedOrder(store)
        var requests: [SyncFrame] = []
        var ranges: [SyncFrame] = []
        for feedID in feeds {
            let summary = store.summary(of: feedID)
            requests.append(.request(feedID: feedID, haveSequence: summary.top ?? SyncFrame.nothing))
            requested.insert(feedID)
            var wanted = summary.gaps
            if let backfill = summary.backfill(window: store.maximumPerFeed) { wanted.append(backfill) }
            for range in wanted where requestedRanges.insert(Self.rangeKey(feedID, range)).inserted {
                ranges.append(.range(feedID: feedID, from: range.lowerBound, to: range.upperBound))
            }
        }
        return try pack(requests, as: .request) + pack(ranges, as: .range)
    }

    /// A later round: processes `delivered` in order, then sends acks, offers, chunks and the
    /// ranges for gaps not yet asked for in this session.
    public mutating func step(delivered: [(type: SyncFrameType, payload: [UInt8])], store: FeedSyncStore) throws -> Step {
        var deliveries: [Delivery] = []
        var acks: [SyncFrame] = []
        var queue: [(frame: SyncFrame, selection: Selection)] = []
        for packet in delivered {
            let frames: [SyncFrame]
            do {
                frames = try SyncFrame.decode(try link.open(packet.payload, type: packet.type), as: packet.type)
            } catch {
                deliveries.append(.dropped(error))
                continue
            }
            var chunkResult: FeedChunkReceiver.Received?
            for frame in frames {
                switch frame {
                case .request(let feedID, let have):
                    peerHolds[feedID] = have
                    let range: ClosedRange<UInt32>? = have == SyncFrame.nothing ? 0...(SyncFrame.nothing - 1)
                        : (have >= SyncFrame.nothing - 1 ? nil : (have + 1)...(SyncFrame.nothing - 1))
                    queue.append((frame, Selection(feedID: feedID, range: range)))
                case .range(let feedID, let from, let to):
                    queue.append((frame, Selection(feedID: feedID, range: from...to)))
                case .offer(let feedID, let have, let count):
                    offers[feedID] = (have, count)
                    offered += Int(count)
                case .ack(_, let refused):
                    if refused { refusedByPeer += 1 }
                case .chunk(let messageID, let envelope):
                    chunksArrived += 1
                    let received = store.receiveChunk(messageID: messageID, envelope: envelope, requested: requested)
                    acks.append(.ack(messageID: messageID, refused: received.refused))
                    chunkResult = received
                }
            }
            deliveries.append(chunkResult.map { .chunk($0) } ?? .frames(frames.count))
        }

        var offerFrames: [SyncFrame] = []
        var selected: Set<[UInt8]> = []
        var chunks: [(priority: Int, position: Int, envelope: ServedEnvelope)] = []
        for (position, item) in queue.enumerated() {
            let feedID = item.selection.feedID
            let summary = store.summary(of: feedID)
            var count: UInt32 = 0
            if let range = item.selection.range {
                for envelope in store.accepted(feedID: feedID, in: range) where selected.insert(envelope.messageID).inserted {
                    count += 1
                    chunks.append((Self.priority(feedID: feedID, type: envelope.type, ownFeedID: store.ownFeedID), position, envelope))
                }
            }
            offerFrames.append(.offer(feedID: feedID, haveSequence: summary.accepted?.upperBound ?? SyncFrame.nothing, messageCount: count))
        }
        chunks.sort {
            ($0.priority, $0.position) != ($1.priority, $1.position)
                ? ($0.priority, $0.position) < ($1.priority, $1.position)
                : $0.envelope.sequence > $1.envelope.sequence
        }

        var ranges: [SyncFrame] = []
        for feedID in feedOrder(store) {
            for range in store.summary(of: feedID).gaps where requestedRanges.insert(Self.rangeKey(feedID, range)).inserted {
                ranges.append(.range(feedID: feedID, from: range.lowerBound, to: range.upperBound))
            }
        }

        var sent = try pack(acks, as: .ack) + pack(offerFrames, as: .offer)
        for chunk in chunks {
            sent += try pack([.chunk(messageID: chunk.envelope.messageID, envelope: chunk.envelope.bytes)], as: .chunk)
        }
        sent += try pack(ranges, as: .range)
        return Step(deliveries: deliveries, sent: sent)
    }

    /// The peer's feed first (if followed), then the other followed feeds ascending bytewise.
    private func feedOrder(_ store: FeedSyncStore) -> [[UInt8]] {
        let followed = store.followedFeedIDs
        var ordered = followed.filter { $0 != peerFeedID }.sorted { $0.lexicographicallyPrecedes($1) }
        if let peerFeedID, followed.contains(peerFeedID) { ordered.insert(peerFeedID, at: 0) }
        return ordered
    }

    /// 0: the sender's own feed; 1: key material; 2: posts, reactions, introductions; 3: the rest.
    static func priority(feedID: [UInt8], type: String, ownFeedID: [UInt8]) -> Int {
        if feedID == ownFeedID { return 0 }
        switch type {
        case "key_rotation", "group_event": return 1
        case "post", "reaction", "contact_introduction": return 2
        default: return 3
        }
    }

    private static func rangeKey(_ feedID: [UInt8], _ range: ClosedRange<UInt32>) -> [UInt8] {
        feedID + SyncFrame.u32(range.lowerBound) + SyncFrame.u32(range.upperBound)
    }

    /// Frames of one type, 64 per packet (chunks one), each packet sealed in order.
    private mutating func pack(_ frames: [SyncFrame], as type: SyncFrameType) throws -> [FeedPacket] {
        let size = type == .chunk ? 1 : SyncFrame.maximumFrames
        return try stride(from: 0, to: frames.count, by: size).map { start in
            let plain = try SyncFrame.encode(Array(frames[start..<min(start + size, frames.count)]), as: type)
            return FeedPacket(type: type, frames: plain, payload: try link.seal(plain, type: type))
        }
    }

    /// A directed packet of payload n: one link frame if 126 + n ≤ MTU, else ⌈(126 + n) / (MTU − 15)⌉.
    public static func linkFrames(payloadCount: Int, mtu: Int) -> Int {
        let packet = 126 + payloadCount
        if packet <= mtu { return 1 }
        let room = max(1, mtu - 15)
        return (packet + room - 1) / room
    }
}
