/// Two sessions driven to their end over a simulated link (feed.md 8.5, section 13's rounds):
/// each round hands each side what was delivered to it in the previous one; a packet is
/// delivered only if all its link frames fit what is left of its direction's budget, and the
/// first that does not closes that direction. The vectors, the tests and the bench use it.
public struct FeedSessionRun {
    public struct Sent {
        public let round: Int
        /// 0 for the first side, 1 for the second.
        public let side: Int
        public let packet: FeedPacket
        public let linkFrames: Int
        public let delivered: Bool
        /// What the receiver made of it, once processed (delivered packets only).
        public internal(set) var delivery: FeedSession.Delivery?
    }

    public private(set) var transcript: [Sent] = []
    public private(set) var sessions: [FeedSession]
    public let mtu: Int
    private var left: [Int]
    private var closed: [Bool] = [false, false]

    /// `budget`: link frames per direction, nil for no limit.
    public init(_ first: FeedSession, _ second: FeedSession, mtu: Int, budget: Int?) {
        sessions = [first, second]
        self.mtu = mtu
        left = [budget ?? Int.max, budget ?? Int.max]
    }

    /// Runs rounds until one in which neither side sends anything (at most `maximumRounds`).
    public mutating func run(_ stores: (FeedSyncStore, FeedSyncStore), maximumRounds: Int = 1_000) throws {
        let store = [stores.0, stores.1]
        var previous: [[Int]] = [[], []]
        for round in 1...maximumRounds {
            var sent: [[FeedPacket]] = [[], []]
            for side in 0..<2 {
                if round == 1 {
                    sent[side] = try sessions[side].open(store[side])
                } else {
                    let arriving = previous[1 - side].filter { transcript[$0].delivered }
                    let step = try sessions[side].step(delivered: arriving.map { (transcript[$0].packet.type, transcript[$0].packet.payload) },
                                                       store: store[side])
                    for (index, delivery) in zip(arriving, step.deliveries) { transcript[index].delivery = delivery }
                    sent[side] = step.sent
                }
            }
            if sent.allSatisfy(\.isEmpty) { return }
            previous = [[], []]
            for side in 0..<2 {
                for packet in sent[side] {
                    let frames = packet.linkFrames(mtu: mtu)
                    var delivered = false
                    if !closed[side] {
                        if frames <= left[side] { left[side] -= frames; delivered = true } else { closed[side] = true }
                    }
                    previous[side].append(transcript.count)
                    transcript.append(Sent(round: round, side: side, packet: packet, linkFrames: frames, delivered: delivered))
                }
            }
        }
    }

    /// Link frames and payload bytes that crossed, per direction.
    public var onAir: (frames: Int, bytes: Int) {
        transcript.filter(\.delivered).reduce((0, 0)) { ($0.0 + $1.linkFrames, $0.1 + $1.packet.payload.count) }
    }
}
