import Pigeon
import Synchronization

/// The DM engine's state, decoded once: decoding re-derives a public key for every private key
/// (two per pending handshake), which made each stranger's handshake1 cost milliseconds
/// (issue 19, finding 5). Every write of the engine's records also writes a random version
/// stamp in the same transaction; the cached state is used only while the store holds its
/// stamp. A transaction that rolls back leaves the old stamp, which no cached state carries any
/// more, so the next read decodes again: the cache can be stale, never wrong.
final class PigeonStateCache: Sendable {
    private let entry = Mutex<(version: String, state: PigeonState)?>(nil)

    func state(ifVersion version: String) -> PigeonState? {
        entry.withLock { $0?.version == version ? $0?.state : nil }
    }

    /// Drops the cached state (its private keys) when the node locks.
    func forget() {
        entry.withLock { $0 = nil }
    }

    func remember(_ state: PigeonState, version: String) {
        entry.withLock { $0 = (version, state) }
    }

    /// 128 random bits, as hex.
    static func newVersion() -> String {
        var rng = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(rng.next() as UInt64, radix: 16) }.joined(separator: "-")
    }
}
