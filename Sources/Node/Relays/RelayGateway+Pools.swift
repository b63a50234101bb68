import Foundation
import Nostr
import RelayClient
import Synchronization

/// Relay pools by relay set, so one command (or `run`) reuses its connections.
final class PoolCache: Sendable {
    private let pools = Mutex<[String: RelayPool]>([:])

    func pool(for urls: [String], make: () throws -> RelayPool) rethrows -> RelayPool {
        let key = Set(urls).sorted().joined(separator: " ")
        return try pools.withLock { pools in
            if let pool = pools[key] { return pool }
            let pool = try make()
            pools[key] = pool
            return pool
        }
    }

    func drain() -> [RelayPool] {
        pools.withLock { pools in
            defer { pools = [:] }
            return Array(pools.values)
        }
    }
}

extension RelayGateway {
    func pool(_ urls: [String]) throws -> RelayPool {
        guard !urls.isEmpty else { throw NodeError.invalidInput("no relays configured: add one with `burrow relay add URL`") }
        return try pools.pool(for: urls) {
            var configuration = RelayConfiguration()
            configuration.authenticateWhenChallenged = false
            return try RelayPool(urls: urls, authKeys: keys, configuration: configuration, logger: logger)
        }
    }

    /// Closes every relay connection this node opened.
    public func closeConnections() async {
        for pool in pools.drain() { await pool.close() }
    }

    /// Publishes to `urls`; succeeds when at least one relay accepted, else throws the failure
    /// the answers describe (`relay_rejected`, `timeout`, `relay_unreachable`).
    @discardableResult
    func publishAccepted(_ event: Event, to urls: [String], timeout: Duration) async throws -> [PublishResult] {
        let results = try await pool(urls).publish(event, timeout: timeout)
        guard results.contains(where: \.accepted) else { throw Self.publishFailure(results, eventID: event.id) }
        return results
    }

    static func publishFailure(_ results: [PublishResult], eventID: EventID) -> NodeError {
        let reasons = results.map { "\n  \($0.url): \($0.error.map { "\($0)" } ?? $0.message)" }.joined()
        let text = "no relay accepted \(eventID.hex):\(reasons)"
        if results.contains(where: { $0.error == nil }) { return .relayRejected(text) }
        if !results.isEmpty, results.allSatisfy({ if case .timeout = $0.error { return true } else { return false } }) {
            return .timeout(text)
        }
        return .relayUnreachable(text)
    }

    /// Fetches one filter from `urls`, verified and deduplicated by the pool.
    /// With `leavingStragglers`, a relay that has not answered `stragglerGrace` after another
    /// answered in full is left behind (for reads a later sync repeats).
    func fetchEvents(_ filter: Filter, from urls: [String], timeout: Duration, leavingStragglers: Bool = false) async throws -> [Event] {
        let result = try await pool(urls).fetch(filter, timeout: timeout, stragglerGrace: leavingStragglers ? Self.stragglerGrace : nil)
        for failure in result.errors { logger.warning("relay failed during fetch", metadata: ["relay": "\(failure)"]) }
        return result.events
    }
}
