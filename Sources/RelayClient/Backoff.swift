/// Exponential reconnect backoff with jitter: initial, initial·m, initial·m², … capped at
/// `maximum`, each delay spread by ±`jitter` so many clients that lost the same relay do not
/// all come back in the same instant. A value type; the caller supplies the randomness.
public struct Backoff: Sendable, Equatable {
    public var initial: Duration
    public var maximum: Duration
    public var multiplier: Double
    /// Fraction of each delay (0…1) that is randomized.
    public var jitter: Double
    /// Failed attempts since the last success.
    public private(set) var attempts = 0

    public init(initial: Duration = .milliseconds(250), maximum: Duration = .seconds(60), multiplier: Double = 2, jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = max(maximum, initial)
        self.multiplier = max(multiplier, 1)
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The delay before the next attempt, counting this one as failed.
    public mutating func nextDelay<R: RandomNumberGenerator>(using rng: inout R) -> Duration {
        let base = Self.seconds(initial) * pow(multiplier, Double(attempts))
        let capped = min(base, Self.seconds(maximum))
        attempts = min(attempts + 1, 64)
        let spread = jitter == 0 ? 0 : Double.random(in: -jitter...jitter, using: &rng)
        return .nanoseconds(Int64((capped * (1 + spread)) * 1e9))
    }

    /// Forget past failures: the next delay is `initial` again.
    public mutating func reset() { attempts = 0 }

    private static func seconds(_ d: Duration) -> Double {
        let (s, attos) = d.components
        return Double(s) + Double(attos) / 1e18
    }

    private func pow(_ base: Double, _ exponent: Double) -> Double {
        var result = 1.0
        var i = 0.0
        while i < exponent && result < 1e12 { result *= base; i += 1 }
        return result
    }
}
