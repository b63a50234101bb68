#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Operations per CPU second of this process.
///
/// CPU time rather than wall time: the bench shares its cores with other work, and the peer
/// bench (`bench_nostr_sdk.py`) counts the same way, so both columns mean the same thing.
enum Throughput {
    /// Every measured operation costs microseconds; reading the clock every 16 calls is noise.
    static let batch = 16

    /// The better of two runs of `seconds / 2` each: a burst of load elsewhere (a busy sibling
    /// hyperthread, evicted caches) lowers one run, rarely both.
    static func bestOfTwo(seconds: Double, _ body: () throws -> Void) rethrows -> Double {
        let first = try measure(seconds: seconds / 2, body)
        let second = try measure(seconds: seconds / 2, body)
        return max(first, second)
    }

    /// Runs `body` in batches until `seconds` of CPU time have passed, or twice that of wall
    /// time (a loaded machine cannot stretch a run), after one warm-up call.
    static func measure(seconds: Double, _ body: () throws -> Void) rethrows -> Double {
        try body()
        var count = 0
        let cpuStart = cpuTime()
        let wallDeadline = wallTime() + 2 * seconds
        while true {
            for _ in 0..<batch { try body() }
            count += batch
            let cpu = cpuTime() - cpuStart
            if cpu >= seconds || wallTime() >= wallDeadline {
                return cpu > 0 ? Double(count) / cpu : 0
            }
        }
    }

    static func cpuTime() -> Double { clock(CLOCK_PROCESS_CPUTIME_ID) }
    static func wallTime() -> Double { clock(CLOCK_MONOTONIC) }

    private static func clock(_ id: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(id, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
