import Foundation

/// Named crash points at the node's transaction boundaries and publish steps, for the crash
/// tests only: when `BURROW_TEST_FAILPOINT` names one (optionally `NAME:N` for its Nth hit),
/// the process dies there at once, as a power cut would. Unset, a check is one comparison.
enum Failpoint: String, CaseIterable {
    case keyPackageStored = "keypackage.stored"
    case commitStored = "commit.stored"
    case commitPublished = "commit.published"
    case commitMerged = "commit.merged"
    case welcomePublished = "welcome.published"
    case messageStored = "message.stored"
    case messagePublished = "message.published"
    case giftWrapProcessed = "giftwrap.processed"
    case groupEventProcessed = "groupevent.processed"
    case syncFetched = "sync.fetched"
    case outboxPublished = "outbox.published"

    private static let armed: (name: String, hit: Int)? = {
        guard let value = ProcessInfo.processInfo.environment["BURROW_TEST_FAILPOINT"], !value.isEmpty else { return nil }
        let parts = value.split(separator: ":", maxSplits: 1)
        return (String(parts[0]), parts.count > 1 ? Int(parts[1]) ?? 1 : 1)
    }()

    nonisolated(unsafe) private static var hits = 0

    /// Dies here when this failpoint is armed (exit status 86, no cleanup, nothing flushed).
    func check() {
        guard let armed = Self.armed, armed.name == rawValue else { return }
        Self.hits += 1
        if Self.hits >= armed.hit { _exit(86) }
    }
}
