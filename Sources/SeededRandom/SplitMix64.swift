/// SplitMix64 (Steele, Lea, Flood 2014): the one seeded generator, so a run replays exactly from
/// its seed. It draws the UDP radio's impairment (Docs/protocols/mesh.md 11.2) and the
/// simulations' keys and timings, the fuzz targets' choices (seeded per input) and every
/// randomized test's keys, garbage bytes and delivery orders. Never for keys outside tests and
/// simulations: production passes the system CSPRNG.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `u = (next >> 11) / 2^53`, uniform in [0, 1) (mesh.md 11.2).
    public mutating func unit() -> Double { Double(next() >> 11) / 9_007_199_254_740_992.0 }
}
