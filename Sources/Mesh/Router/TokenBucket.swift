/// A token bucket over the injected clock: `rate` tokens per second up to `burst`. Used for the
/// per-link frame and byte budgets and the per-originator forwarding budget (7.4).
public struct TokenBucket: Sendable {
    public let rate: Double
    public let burst: Double
    private var tokens: Double
    private var last: UInt64

    public init(rate: Double, burst: Double, now: UInt64) {
        self.rate = rate
        self.burst = burst
        tokens = burst
        last = now
    }

    /// Takes `cost` tokens if available.
    public mutating func take(_ cost: Double = 1, now: UInt64) -> Bool {
        if now > last {
            tokens = min(burst, tokens + Double(now - last) * rate / 1000)
            last = now
        }
        guard tokens >= cost else { return false }
        tokens -= cost
        return true
    }
}
