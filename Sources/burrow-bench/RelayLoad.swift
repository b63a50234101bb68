import Foundation
import Logging
import Nostr
import RelayClient

/// What one relay did under `RelayLoad`.
struct LoadResult: Sendable {
    var published = 0
    var accepted = 0
    var refused: [String: Int] = [:]
    var publishSeconds = 0.0
    var deliveries = 0
    /// Accepted events some subscriber never received after the drain.
    var lost = 0
    var missingDeliveries = 0
    var subscriptionErrors = 0
    var p50: Double?
    var p99: Double?
    var alive = true
    var peakKilobytes: Int?
    var detail: String?

    var acceptedPerSecond: Double? { publishSeconds > 0 ? Double(accepted) / publishSeconds : nil }

    func problems(label: String) -> [String] {
        var problems: [String] = []
        if !alive { problems.append("\(label) was not running at the end of the load") }
        if lost > 0 { problems.append("\(label): \(lost) accepted events were not delivered to every subscriber (\(missingDeliveries) deliveries missing)") }
        if accepted < published {
            let reasons = refused.sorted { $0.value > $1.value }.prefix(3).map { "\($0.value)× \($0.key)" }.joined(separator: "; ")
            problems.append("\(label) accepted \(accepted) of \(published) events (\(reasons))")
        }
        if subscriptionErrors > 0 { problems.append("\(label): \(subscriptionErrors) subscription errors, closures or reconnects") }
        return problems
    }
}

/// The load itself: `clients` connections that all subscribe, then all publish at a steady
/// pace for `seconds`, then wait (bounded) for every accepted event to reach every subscriber.
struct RelayLoad: Sendable {
    let url: String
    let seconds: Double
    var clients = RelayLoadBench.clients
    var rate = RelayLoadBench.eventsPerSecondPerClient

    func run() async throws -> LoadResult {
        let tag = "burrow-bench-\(UUID().uuidString.prefix(8))"
        var configuration = RelayConfiguration()
        configuration.eoseTimeout = .seconds(20)
        let quiet = Logger(label: "burrow.bench.relay", factory: { _ in SwiftLogNoOpLogHandler() })
        var rng = SystemRandomNumberGenerator()
        let keys = (0..<clients).map { _ in Keys.generate(using: &rng) }
        let pools = try keys.map { try RelayPool(urls: [url], authKeys: $0, configuration: configuration, logger: quiet) }
        let ledger = Ledger(subscribers: clients)

        // Subscribe everyone and wait for every EOSE before the first publish.
        let filter = Filter(kinds: [1], tags: ["t": [tag]])
        var readers: [Task<Void, Never>] = []
        for pool in pools {
            let stream = pool.subscribe([filter])
            readers.append(Task {
                for await item in stream {
                    switch item {
                    case .event(let event, _): ledger.delivered(event.id, at: DispatchTime.now().uptimeNanoseconds)
                    case .eoseAll: ledger.subscribed()
                    case .closed, .error, .reconnected: ledger.subscriptionError()
                    case .eose, .notice: break
                    }
                }
            })
        }
        defer { for reader in readers { reader.cancel() } }
        let subscribeDeadline = ContinuousClock.now + .seconds(30)
        while ledger.subscribedCount < clients && ContinuousClock.now < subscribeDeadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        guard ledger.subscribedCount == clients else {
            for pool in pools { await pool.close() }
            throw BenchFailure.check("only \(ledger.subscribedCount) of \(clients) subscriptions were answered (EOSE) within 30 s")
        }

        // Publish: client i sends at start + (i / clients + n) / rate, each waiting for its OK.
        let interval = 1.0 / rate
        let start = ContinuousClock.now + .milliseconds(200)
        let end = start + .milliseconds(Int64(seconds * 1000))
        await withTaskGroup(of: Void.self) { group in
            for (index, (pool, key)) in zip(pools, keys).enumerated() {
                group.addTask {
                    var rng = SystemRandomNumberGenerator()
                    var sequence = 0
                    while true {
                        let offset = (Double(index) / Double(clients) + Double(sequence)) * interval
                        let slot = start + .milliseconds(Int64(offset * 1000))
                        guard slot < end else { return }
                        try? await Task.sleep(until: slot, clock: .continuous)
                        let content = "burrow-bench client \(index) event \(sequence)"
                        guard let event = try? Event.sign(kind: 1, content: content, tags: [["t", tag]],
                                                          createdAt: Int64(Date().timeIntervalSince1970), keys: key, rng: &rng)
                        else { return }
                        ledger.sending(event.id, at: DispatchTime.now().uptimeNanoseconds)
                        let answer = await pool.publish(event, timeout: .seconds(10)).first
                        ledger.answered(event.id, accepted: answer?.accepted ?? false, message: answer?.message ?? "no answer")
                        sequence += 1
                    }
                }
            }
        }
        let publishSeconds = (ContinuousClock.now - start).seconds

        // Drain: wait for every accepted event to reach every subscriber, or the deadline.
        let drainDeadline = ContinuousClock.now + .milliseconds(Int64(RelayLoadBench.drainSeconds * 1000))
        while ledger.missing().events > 0 && ContinuousClock.now < drainDeadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        var result = ledger.result()
        result.publishSeconds = publishSeconds
        for pool in pools { await pool.close() }
        return result
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// Everything the clients saw, shared between their tasks.
/// `@unchecked Sendable`: every field is touched only under `lock`.
private final class Ledger: @unchecked Sendable {
    private let lock = NSLock()
    private let subscribers: Int
    private var eoseCount = 0
    private var errors = 0
    private var sentAt: [EventID: UInt64] = [:]
    private var acceptedIDs: Set<EventID> = []
    private var refused: [String: Int] = [:]
    private var deliveryCount: [EventID: Int] = [:]
    private var latencies: [Double] = []

    init(subscribers: Int) {
        self.subscribers = subscribers
        latencies.reserveCapacity(1 << 18)
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    func subscribed() { locked { eoseCount += 1 } }
    var subscribedCount: Int { locked { eoseCount } }
    func subscriptionError() { locked { errors += 1 } }

    func sending(_ id: EventID, at nanoseconds: UInt64) { locked { sentAt[id] = nanoseconds } }

    func answered(_ id: EventID, accepted: Bool, message: String) {
        locked {
            if accepted { acceptedIDs.insert(id) } else { refused[message.isEmpty ? "refused" : message, default: 0] += 1 }
        }
    }

    func delivered(_ id: EventID, at nanoseconds: UInt64) {
        locked {
            deliveryCount[id, default: 0] += 1
            if let sent = sentAt[id], nanoseconds >= sent { latencies.append(Double(nanoseconds - sent) / 1e6) }
        }
    }

    /// Accepted events not yet delivered to every subscriber, and the deliveries they lack.
    func missing() -> (events: Int, deliveries: Int) {
        locked {
            var events = 0
            var deliveries = 0
            for id in acceptedIDs {
                let count = deliveryCount[id] ?? 0
                if count < subscribers {
                    events += 1
                    deliveries += subscribers - count
                }
            }
            return (events, deliveries)
        }
    }

    func result() -> LoadResult {
        let (lost, missingDeliveries) = missing()
        return locked {
            var result = LoadResult()
            result.published = sentAt.count
            result.accepted = acceptedIDs.count
            result.refused = refused
            result.deliveries = deliveryCount.values.reduce(0, +)
            result.lost = lost
            result.missingDeliveries = missingDeliveries
            result.subscriptionErrors = errors
            let sorted = latencies.sorted()
            if !sorted.isEmpty {
                result.p50 = sorted[min(sorted.count - 1, sorted.count / 2)]
                result.p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
            }
            return result
        }
    }
}
