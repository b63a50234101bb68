import Foundation
import Synchronization

/// Named crash points at the node's transaction boundaries and publish steps, for the crash
/// tests only: once armed (`NAME` or `NAME:N` for its Nth pass), the process dies there at
/// once, as a power cut would. Only the test build's `burrow-failpoint-probe` arms one (from
/// `BURROW_TEST_FAILPOINT`); the real `burrow` never does, so a check is one lock and one
/// comparison that always finds nothing armed.
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
    /// Direct messages: the ratchet step and its outbox frames are committed, nothing sent.
    case dmStored = "dm.stored"
    /// A frame a relay accepted, not yet marked sent (it will be sent again: a copy).
    case dmPublished = "dm.published"
    /// A received frame's state, message and processed mark are committed.
    case dmReceived = "dm.received"
    /// Passphrase change (`BurrowStore.changePassphrase`): the re-encrypted copy is synced.
    case passphraseCopied = "passphrase.copied"
    /// The header names the pending change.
    case passphrasePending = "passphrase.pending"
    /// The copy replaced the database; the header still names the change as pending.
    case passphraseSwapped = "passphrase.swapped"

    fileprivate struct Armed {
        let name: String
        let hit: Int
        var hits = 0
    }

    fileprivate static let armed = Mutex<Armed?>(nil)

    /// Arms `spec` (`NAME` or `NAME:N`); false when NAME is no failpoint or N is not positive.
    fileprivate static func arm(_ spec: String) -> Bool {
        let parts = spec.split(separator: ":", maxSplits: 1)
        guard let name = parts.first.map(String.init), Failpoint(rawValue: name) != nil else { return false }
        let hit = parts.count > 1 ? Int(parts[1]) : 1
        guard let hit, hit > 0 else { return false }
        armed.withLock { $0 = Armed(name: name, hit: hit) }
        return true
    }

    /// Dies here when this failpoint is armed and its pass has come (exit status 86, no
    /// cleanup, nothing flushed).
    func check() {
        let die = Self.armed.withLock { armed -> Bool in
            guard armed?.name == rawValue else { return false }
            armed?.hits += 1
            return (armed?.hits ?? 0) >= (armed?.hit ?? 1)
        }
        if die { _exit(86) }
    }
}

/// The test build's handle on the failpoints (`burrow-failpoint-probe`); not for programs.
@_spi(Failpoints) public enum Failpoints {
    /// Every failpoint's name.
    public static var names: [String] { Failpoint.allCases.map(\.rawValue) }

    /// Arms `spec` (`NAME` or `NAME:N`); false when NAME is no failpoint or N is not positive.
    public static func arm(_ spec: String) -> Bool { Failpoint.arm(spec) }
}
