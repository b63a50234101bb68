import Crypto

/// A received feed-chunk (feed.md 8.4): its data must hash to its message id, its feed must be
/// one asked for in this session, then it goes through 4.4 and the feed's chain (7.1). The ack
/// says 0x00 for anything verified (accepted, held, duplicate, below the window), 0x01 refused.
public enum FeedChunkReceiver {
    public struct Received: Sendable {
        public let result: Result<ChainOutcome.Status, FeedError>
        public let released: [ChainOutcome.Release]
        /// The envelope's feed and sequence, once it decoded.
        public let position: (feedID: [UInt8], sequence: UInt32)?
        public var refused: Bool { if case .failure = result { return true } else { return false } }

        public init(result: Result<ChainOutcome.Status, FeedError>, released: [ChainOutcome.Release],
                    position: (feedID: [UInt8], sequence: UInt32)? = nil) {
            self.result = result
            self.released = released
            self.position = position
        }
    }

    /// `requested`: feed ids asked for in this session; `chains`: the followed feeds by feed id.
    public static func receive(messageID: [UInt8], envelope bytes: [UInt8], requested: Set<[UInt8]>,
                               chains: inout [[UInt8]: FeedChain]) -> Received {
        guard FeedKeys.messageID(of: bytes) == messageID else { return Received(result: .failure(.messageIDMismatch), released: []) }
        let unverified: UnverifiedEnvelope
        do { unverified = try UnverifiedEnvelope.decode(bytes, origin: .peer) } catch {
            return Received(result: .failure(error), released: [])
        }
        let feedID = unverified.fields.feedID
        let position = (feedID, unverified.fields.sequence)
        guard requested.contains(feedID), var chain = chains[feedID] else {
            return Received(result: .failure(.feedIDMismatch), released: [], position: position)
        }
        let envelope: Envelope
        do { envelope = try unverified.verify(identityKey: chain.identityKey) } catch {
            return Received(result: .failure(error), released: [], position: position)
        }
        let outcome = chain.receive(envelope)
        chains[feedID] = chain
        return Received(result: outcome.result, released: outcome.released, position: position)
    }
}

extension FeedKeys {
    /// SHA-256 of an envelope's bytes as they travel.
    public static func messageID(of bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }
}
