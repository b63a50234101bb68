import Foundation
import Store
import Synchronization

/// The headless form of the design's auto-lock (issue 25): a locked `burrow run` wipes its
/// store key (the SQLCipher connection closes) and its identity key (zeroed in place), keeps its
/// relay and mesh connections, and leaves what arrives in its bounded inboxes (or on the
/// relays, unacknowledged) until `burrow unlock`.
struct LockState: Sendable {
    var locked = false
    var lastActivity = ContinuousClock.now
}

extension BurrowNode {
    public var isLocked: Bool { lockState.withLock { $0.locked } }

    /// A person used the node (a command, the page): `--lock-after` counts from here.
    public func touch() { lockState.withLock { $0.lastActivity = .now } }

    /// How long nobody has used the node.
    public var idleFor: Duration { lockState.withLock { ContinuousClock.now - $0.lastActivity } }

    /// Wipes the keys from memory. Run as a job of the node's mailbox, so nothing is using them.
    public func lock() {
        lockState.withLock { $0.locked = true }
        store.lock()
        keys.secretKey.wipe()
        directMessages.pigeonCache.forget()
    }

    /// Reopens the store with `passphrase` and restores the identity key from it.
    public func unlock(passphrase: [UInt8]) throws {
        guard isLocked else { return }
        try store.unlock(passphrase: passphrase)
        guard let identity = try store.identity() else { throw StoreError.storeCorrupt("the identity is missing") }
        var bytes = identity.secretKey
        defer { bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        do { try keys.secretKey.restore(bytes) } catch { throw StoreError.storeCorrupt("the stored identity key is not this node's") }
        lockState.withLock {
            $0.locked = false
            $0.lastActivity = .now
        }
    }
}
