/// What a sync session (feed.md 8.5) reads from and writes to a node's feeds. The node's
/// SQLCipher store and the in-memory `FeedChains` both provide it.
public protocol FeedSyncStore: AnyObject {
    /// SHA-256 of the node's own identity key.
    var ownFeedID: [UInt8] { get }
    /// The window of followed feeds (7.1).
    var maximumPerFeed: Int { get }
    /// The feeds this node asks for, in any order (the own feed too while a restored node
    /// catches up with itself, 7.3).
    var followedFeedIDs: [[UInt8]] { get }
    /// The accepted range and held sequences of a feed (the own feed's range is its whole chain).
    func summary(of feedID: [UInt8]) -> FeedSyncSummary
    /// The accepted envelopes of a feed whose sequences lie in `range`; held ones are never served.
    func accepted(feedID: [UInt8], in range: ClosedRange<UInt32>) -> [ServedEnvelope]
    /// One received chunk through 8.4, 4.4 and 7.1, committed with its outcome.
    func receiveChunk(messageID: [UInt8], envelope: [UInt8], requested: Set<[UInt8]>) -> FeedChunkReceiver.Received
}

/// What a store holds of one feed, for requests and ranges.
public struct FeedSyncSummary: Equatable, Sendable {
    public let accepted: ClosedRange<UInt32>?
    /// Held sequences, ascending.
    public let held: [UInt32]

    public init(accepted: ClosedRange<UInt32>?, held: [UInt32]) {
        self.accepted = accepted
        self.held = held.sorted()
    }

    /// The highest sequence held or accepted.
    public var top: UInt32? { [accepted?.upperBound, held.last].compactMap { $0 }.max() }
    public var bottom: UInt32? { [accepted?.lowerBound, held.first].compactMap { $0 }.min() }

    /// The missing sequences between the lowest and highest held or accepted, as maximal
    /// ranges, highest first (8.5).
    public var gaps: [ClosedRange<UInt32>] {
        var present = held.map { $0...$0 }
        if let accepted { present.append(accepted) }
        present.sort { $0.lowerBound < $1.lowerBound }
        var gaps: [ClosedRange<UInt32>] = []
        var covered: UInt32?
        for range in present {
            if let end = covered, end < UInt32.max, range.lowerBound > end + 1 {
                gaps.append((end + 1)...(range.lowerBound - 1))
            }
            covered = max(covered ?? range.upperBound, range.upperBound)
        }
        return gaps.reversed()
    }

    /// [max(0, top − window + 1), lo − 1] when not empty.
    public func backfill(window: Int) -> ClosedRange<UInt32>? {
        guard let top, let low = bottom, low > 0 else { return nil }
        let start = max(0, Int64(top) - Int64(window) + 1)
        guard start <= Int64(low) - 1, let from = UInt32(exactly: start) else { return nil }
        return from...(low - 1)
    }
}

/// An accepted envelope as a session serves it.
public struct ServedEnvelope: Sendable {
    public let sequence: UInt32
    public let type: String
    public let messageID: [UInt8]
    public let bytes: [UInt8]

    public init(sequence: UInt32, type: String, messageID: [UInt8], bytes: [UInt8]) {
        self.sequence = sequence
        self.type = type
        self.messageID = messageID
        self.bytes = bytes
    }

    public init(_ envelope: Envelope) {
        self.init(sequence: envelope.fields.sequence, type: envelope.fields.type, messageID: envelope.messageID, bytes: envelope.bytes)
    }
}

/// Feeds held in memory as `FeedChain`s: the conformance runner's node, and the shape the
/// SQLCipher store follows.
public final class FeedChains: FeedSyncStore {
    public let ownFeedID: [UInt8]
    public let maximumPerFeed: Int
    public private(set) var own: FeedChain
    public private(set) var followed: [[UInt8]: FeedChain]

    /// `follows`: identity keys of followed feeds.
    public init(ownIdentityKey: [UInt8], follows: [[UInt8]], maximumPerFeed: Int = FeedChain.defaultMaximumPerFeed) {
        ownFeedID = FeedKeys.feedID(identityKey: ownIdentityKey)
        self.maximumPerFeed = maximumPerFeed
        own = FeedChain(identityKey: ownIdentityKey, maximumPerFeed: nil)
        followed = Dictionary(follows.map { (FeedKeys.feedID(identityKey: $0), FeedChain(identityKey: $0, maximumPerFeed: maximumPerFeed)) },
                              uniquingKeysWith: { first, _ in first })
    }

    @discardableResult
    public func appendOwn(_ bytes: [UInt8]) -> ChainOutcome { own.receive(bytes) }

    @discardableResult
    public func store(_ bytes: [UInt8], feedID: [UInt8]) -> ChainOutcome? {
        guard var chain = followed[feedID] else { return nil }
        defer { followed[feedID] = chain }
        return chain.receive(bytes)
    }

    public var followedFeedIDs: [[UInt8]] { Array(followed.keys) }

    func chain(_ feedID: [UInt8]) -> FeedChain? { feedID == ownFeedID ? own : followed[feedID] }

    public func summary(of feedID: [UInt8]) -> FeedSyncSummary {
        guard let chain = chain(feedID) else { return FeedSyncSummary(accepted: nil, held: []) }
        return FeedSyncSummary(accepted: chain.range, held: chain.held)
    }

    public func accepted(feedID: [UInt8], in range: ClosedRange<UInt32>) -> [ServedEnvelope] {
        guard let chain = chain(feedID), let accepted = chain.range, accepted.overlaps(range) else { return [] }
        return accepted.clamped(to: range).compactMap { chain.entries[$0].map { ServedEnvelope($0.envelope) } }
    }

    public func receiveChunk(messageID: [UInt8], envelope: [UInt8], requested: Set<[UInt8]>) -> FeedChunkReceiver.Received {
        FeedChunkReceiver.receive(messageID: messageID, envelope: envelope, requested: requested, chains: &followed)
    }
}
