import Store
import Synchronization

/// Where direct messages meet feeds (feed.md 5.3): a feed-keys body (content kind 4) goes to
/// the feed service in the transaction that stores the DM; after each batch the service queues
/// the bodies it owes; a removed contact is re-keyed away from. Set once by the node, which
/// makes the feed service after this one.
final class FeedKeysHook: Sendable {
    struct Handlers: Sendable {
        let received: @Sendable (_ peer: [UInt8], _ body: [UInt8], _ tx: StoreTransaction) throws -> Void
        let afterBatch: @Sendable () -> Void
        let removed: @Sendable (_ peer: [UInt8]) throws -> Void
    }

    private let handlers = Mutex<Handlers?>(nil)

    func install(_ new: Handlers) { handlers.withLock { $0 = new } }

    var current: Handlers? { handlers.withLock { $0 } }
}
