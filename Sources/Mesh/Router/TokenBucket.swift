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

    /// Milliseconds until `cost` tokens (at most `burst`) are there; 0 when they are now.
    public func wait(for cost: Double, now: UInt64) -> UInt64 {
        let available = min(burst, tokens + Double(now > last ? now - last : 0) * rate / 1000)
        let needed = min(cost, burst)
        guard available < needed, rate > 0 else { return 0 }
        return UInt64(((needed - available) * 1000 / rate).rounded(.up))
    }

    /// Takes `cost` tokens even when fewer are there (the balance goes below zero, so the
    /// next `wait` covers it): how a sender pays for a frame larger than what is left.
    public mutating func spend(_ cost: Double, now: UInt64) {
        if now > last {
            tokens = min(burst, tokens + Double(now - last) * rate / 1000)
            last = now
        }
        tokens -= cost
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
