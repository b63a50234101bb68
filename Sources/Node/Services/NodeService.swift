import Foundation
import Logging
import Nostr
import Store

/// What every service of the node shares: the home, the identity, the encrypted store (which
/// serializes its connection) and the log. Immutable; each service owns the rest of its state.
final class NodeContext: Sendable {
    let home: URL
    let keys: Keys
    let store: BurrowStore
    let logger: Logger

    init(home: URL, keys: Keys, store: BurrowStore, logger: Logger) {
        self.home = home
        self.keys = keys
        self.store = store
        self.logger = logger
    }
}

/// One part of the node (groups, direct messages, profiles, the mesh bridge, the relay
/// gateway): a type that owns its own state and reaches the shared context.
public protocol NodeService: Sendable {}

protocol ContextualService: NodeService {
    var context: NodeContext { get }
}

extension ContextualService {
    var home: URL { context.home }
    var keys: Keys { context.keys }
    var store: BurrowStore { context.store }
    var logger: Logger { context.logger }
    var publicKey: PublicKey { context.keys.publicKey }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// The configured relays, or the embedded relay when none is configured.
    func relays() throws -> [String] {
        let configured = try store.relays().map(\.url)
        return configured.isEmpty ? [BurrowNode.embeddedRelay] : configured
    }

    func unique(_ keys: [PublicKey]) -> [PublicKey] {
        var seen = Set<PublicKey>()
        return keys.filter { seen.insert($0).inserted }
    }
}
