import Foundation

/// A token bucket: holds up to `capacity` tokens, refilled at `capacity` per minute. Time is
/// passed in (seconds on a monotonic clock) so the arithmetic is testable without waiting.
struct TokenBucket: Sendable {
    let capacity: Double
    private(set) var tokens: Double
    private var updated: Double

    init(perMinute: Int, now: Double) {
        capacity = Double(perMinute)
        tokens = capacity
        updated = now
    }

    /// Takes one token if there is one.
    mutating func take(now: Double) -> Bool {
        refill(now: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// True when the bucket has been idle long enough to be full again (it can be forgotten).
    func isFull(now: Double) -> Bool {
        tokens + max(0, now - updated) * capacity / 60 >= capacity
    }

    private mutating func refill(now: Double) {
        let elapsed = max(0, now - updated)
        tokens = min(capacity, tokens + elapsed * capacity / 60)
        updated = now
    }
}

/// Token buckets keyed by something (an author's public key) and shared by every connection.
/// Full buckets are forgotten when the table grows, so memory stays bounded by the number of
/// keys that were active within about a minute.
///
/// `@unchecked Sendable`: the table is touched only under `lock`.
final class KeyedRateLimiter<Key: Hashable>: @unchecked Sendable {
    private let perMinute: Int
    private let lock = NSLock()
    private var buckets: [Key: TokenBucket] = [:]
    private var pruneAt = 1024

    init(perMinute: Int) {
        self.perMinute = perMinute
    }

    func take(_ key: Key, now: Double) -> Bool {
        lock.withLock {
            if buckets.count >= pruneAt {
                buckets = buckets.filter { !$0.value.isFull(now: now) }
                pruneAt = max(1024, buckets.count * 2)
            }
            var bucket = buckets[key] ?? TokenBucket(perMinute: perMinute, now: now)
            let allowed = bucket.take(now: now)
            buckets[key] = bucket
            return allowed
        }
    }

    var trackedKeys: Int { lock.withLock { buckets.count } }
}

/// Seconds on the monotonic clock, for rate limits (never the wall clock, which can jump).
enum MonotonicClock {
    static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1_000_000_000
    }
}
