import Foundation

extension BurrowHome {
    /// The `locations GROUP --sync` entry of `member` once one that `accept` takes arrives here,
    /// asked every half second for up to `timeout`.
    public func location(of member: String, in group: String, within timeout: Duration,
                         accept: ([String: Any]) -> Bool = { _ in true }) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let entries = try ok(["locations", group, "--sync"])["locations"] as? [[String: Any]] ?? []
            if let entry = entries.first(where: { $0["member"] as? String == member }), accept(entry) { return entry }
            try await Task.sleep(for: .milliseconds(500))
        }
        throw NoLocation(timeout: timeout)
    }

    public struct NoLocation: Error, CustomStringConvertible {
        let timeout: Duration
        public var description: String { "no matching location arrived within \(timeout)" }
    }
}
