import Feed

/// Feed sync frames (feed.md 8.4) after a link opened them: the first byte picks the packet
/// type (its low three bits, 0x40 + n), the rest is the plaintext.
///
/// Property: frames that decode encode back to exactly the bytes they came from.
public enum FeedSyncFrameTarget: FuzzTarget {
    public static let name = "feed-sync-frame"

    public static func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        guard let first = bytes.first, let type = SyncFrameType(rawValue: 0x40 + first % 5) else { return .rejected("empty") }
        let plaintext = Array(bytes.dropFirst())
        do {
            let frames = try SyncFrame.decode(plaintext, as: type)
            guard (try? SyncFrame.encode(frames, as: type)) == plaintext else {
                throw PropertyViolation(name, "decoded frames do not encode back to their bytes")
            }
            return .accepted("\(type)")
        } catch let error as FeedError {
            return .rejected(error.rawValue)
        }
    }

    /// One packet of each type, made here.
    static func seeds() throws -> [FuzzSeeds.Seed] {
        let feed = [UInt8](repeating: 0xC8, count: 32), id = [UInt8](repeating: 0xE4, count: 32)
        let packets: [(String, SyncFrameType, [SyncFrame])] = [
            ("request", .request, [.request(feedID: feed, haveSequence: 41), .request(feedID: id, haveSequence: SyncFrame.nothing)]),
            ("offer", .offer, [.offer(feedID: feed, haveSequence: 99, messageCount: 58)]),
            ("chunk", .chunk, [.chunk(messageID: id, envelope: Array(#"{"audience":"contacts"}"#.utf8))]),
            ("ack", .ack, [.ack(messageID: id, refused: false), .ack(messageID: feed, refused: true)]),
            ("range", .range, [.range(feedID: feed, from: 3, to: 7)]),
        ]
        return try packets.map { name, type, frames in (name, [type.rawValue - 0x40] + (try SyncFrame.encode(frames, as: type))) }
    }
}
