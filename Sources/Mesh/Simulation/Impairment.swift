import SeededRandom

/// The loopback radio's sender-side impairment (11.2): `loss=P,dup=P,delay=MIN-MAX,seed=N`.
/// SplitMix64 seeded with N, `u = (next >> 11) / 2^53`. Per datagram: draw u, drop if u < loss
/// (no further draws); draw u, two copies if u < dup; per copy draw u, delay
/// `MIN + ⌊u·(MAX − MIN + 1)⌋` ms. The draw order is part of the spec, so two implementations
/// given one seed impair one stream identically.
public struct UDPImpairment: Sendable, Equatable {
    public let loss: Double
    public let duplication: Double
    public let delay: ClosedRange<UInt64>
    public let seed: UInt64
    private var rng: SplitMix64

    public init(loss: Double = 0, duplication: Double = 0, delay: ClosedRange<UInt64> = 0...0, seed: UInt64 = 0) {
        self.loss = loss
        self.duplication = duplication
        self.delay = delay
        self.seed = seed
        rng = SplitMix64(seed: seed)
    }

    /// Parses `--mesh-impair`; `invalid_argument` for anything else (probabilities in [0, 1]).
    public init(spec: String) throws(MeshError) {
        var loss = 0.0, dup = 0.0, delay: ClosedRange<UInt64> = 0...0, seed: UInt64 = 0
        for part in spec.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { throw .invalidArgument }
            switch pair[0] {
            case "loss":
                guard let p = Double(pair[1]), (0...1).contains(p) else { throw .invalidArgument }
                loss = p
            case "dup":
                guard let p = Double(pair[1]), (0...1).contains(p) else { throw .invalidArgument }
                dup = p
            case "delay":
                let bounds = pair[1].split(separator: "-", maxSplits: 1).compactMap { UInt64($0) }
                guard bounds.count == 2, bounds[0] <= bounds[1] else { throw .invalidArgument }
                delay = bounds[0]...bounds[1]
            case "seed":
                guard let n = UInt64(pair[1]) else { throw .invalidArgument }
                seed = n
            default:
                throw .invalidArgument
            }
        }
        self.init(loss: loss, duplication: dup, delay: delay, seed: seed)
    }

    public static func == (lhs: UDPImpairment, rhs: UDPImpairment) -> Bool {
        lhs.loss == rhs.loss && lhs.duplication == rhs.duplication && lhs.delay == rhs.delay && lhs.seed == rhs.seed
    }

    /// The fate of the next datagram: the delay (ms) of each copy to send; empty if dropped.
    public mutating func next() -> [UInt64] {
        if rng.unit() < loss { return [] }
        let copies = rng.unit() < duplication ? 2 : 1
        return (0..<copies).map { _ in
            delay.lowerBound + UInt64(rng.unit() * Double(delay.upperBound - delay.lowerBound + 1))
        }
    }
}
