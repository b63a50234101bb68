import Foundation
import Logging
import Marmot
import Nostr
import Store
import Synchronization

/// The node: one identity, its encrypted store, and the services that own the rest — groups,
/// direct messages, profiles, the mesh bridge and the relay gateway. The node itself opens the
/// home, routes every inbound unit through one pipeline (`BurrowNode+Inbound`), syncs, and runs
/// live; the CLI calls the services for commands and only parses, forwards and prints.
///
/// Sendable: each service keeps its mutable state behind a `Mutex`, and `store` serializes its
/// connection. Operations that change state still run one at a time — one command per process,
/// or jobs of `burrow run`'s `NodeMailbox` — because an MLS epoch must have a single writer.
public final class BurrowNode: Sendable {
    public let home: URL
    public let keys: Keys
    /// The encrypted store. SPI for the benchmarks and tests, which read and write groups exactly
    /// as the node does; programs go through the node.
    @_spi(StoreAccess) public let store: BurrowStore
    let logger: Logger
    /// The relays: pools, publishing, fetching, the outbox.
    public let gateway: RelayGateway
    /// People's names and profiles.
    public let profiles: ProfileService
    /// The mesh `run` brought up, and what crosses between it and the relays.
    public let meshBridge: MeshBridgeService
    /// Pigeon direct messages.
    public let directMessages: DirectMessageService
    /// Marmot groups.
    public let groups: GroupService
    /// Feeds: the own feed, followed contacts' feeds, their keys and sync.
    public let feeds: FeedService
    /// Whether `lock` wiped the keys, and when a person last used the node (`--lock-after`).
    let lockState = Mutex(LockState())

    init(home: URL, store: BurrowStore, keys: Keys, logger: Logger) {
        self.home = home
        self.store = store
        self.keys = keys
        self.logger = logger
        let context = NodeContext(home: home, keys: keys, store: store, logger: logger)
        gateway = RelayGateway(context: context)
        profiles = ProfileService(context: context, gateway: gateway)
        meshBridge = MeshBridgeService(context: context, gateway: gateway)
        directMessages = DirectMessageService(context: context, gateway: gateway, meshBridge: meshBridge)
        groups = GroupService(context: context, gateway: gateway, profiles: profiles, meshBridge: meshBridge)
        feeds = FeedService(context: context, gateway: gateway, directMessages: directMessages, groups: groups)
        let feeds = feeds
        directMessages.feedKeys.install(.init(
            received: { peer, body, tx in try feeds.receivedFeedKeys(from: peer, body: body, tx) },
            afterBatch: { feeds.afterDMBatch() },
            removed: { peer in try feeds.contactRemoved(peer) }))
    }

    /// Creates the store and the identity (a fresh key, or `importing` one).
    public static func initialize(
        home: URL, passphrase: [UInt8], kdfMemoryMiB: Int, importing secret: SecretKey?,
        logger: Logger = Logger(label: "burrow.node")
    ) throws -> BurrowNode {
        let store = try BurrowStore.create(home: home, passphrase: passphrase, kdfMemoryMiB: kdfMemoryMiB)
        do {
            var rng = SystemRandomNumberGenerator()
            let secretKey = secret ?? SecretKey.generate(using: &rng)
            try store.setIdentity(secretKey: secretKey.bytes)
            return BurrowNode(home: home, store: store, keys: Keys(secretKey: secretKey), logger: logger)
        } catch {
            store.close()
            throw error
        }
    }

    /// Opens an existing home (exclusive: a second process gets `busy`).
    public static func open(home: URL, passphrase: [UInt8], logger: Logger = Logger(label: "burrow.node")) throws -> BurrowNode {
        let store = try BurrowStore.open(home: home, passphrase: passphrase)
        do {
            guard let identity = try store.identity() else { throw StoreError.storeCorrupt("the identity is missing") }
            let secretKey = try SecretKey(bytes: identity.secretKey)
            return BurrowNode(home: home, store: store, keys: Keys(secretKey: secretKey), logger: logger)
        } catch let error as StoreError {
            store.close()
            throw error
        } catch {
            store.close()
            throw StoreError.storeCorrupt("the stored identity key is invalid")
        }
    }

    public func close() { store.close() }

    /// Whether `home` holds a store (`not_initialized` otherwise).
    public static func exists(home: URL) -> Bool { BurrowStore.exists(home: home) }

    public var publicKey: PublicKey { keys.publicKey }

    // MARK: Relays

    /// Where `burrow run` serves the embedded relay when nothing listens there.
    public static let embeddedRelayHost = "127.0.0.1"
    public static let embeddedRelayPort = 7447
    /// The embedded relay's address: the relays of a node with none configured.
    public static let embeddedRelay = "ws://\(embeddedRelayHost):\(embeddedRelayPort)"

    /// The configured relays, or the embedded relay when none is configured (`burrow run`
    /// starts it when nothing listens there).
    public func relays() throws -> [String] { try gateway.relays() }

    /// Starts a mesh for this node (`run --mesh`, a nearby command): the DM tags of its Pigeon
    /// identity are ours.
    public func startMesh(_ setup: MeshSetup) async throws -> MeshService {
        try await MeshService.start(setup, dmIdentityKeys: directMessages.meshDMIdentityKeys(), logger: Logger(label: "burrow.mesh"))
    }

    /// Adds relays (validated and normalized); returns the configured list.
    @discardableResult
    public func addRelays(_ urls: [String]) throws -> [String] {
        let parsed = try urls.map { try Self.relayURL($0) }
        try store.transaction { tx in
            for url in parsed { _ = try tx.relays.add(url: url.string) }
        }
        return try relays()
    }

    /// Removes a relay; removing one that is not configured is `invalid_input`.
    @discardableResult
    public func removeRelay(_ url: String) throws -> [String] {
        let parsed = try Self.relayURL(url)
        guard try store.removeRelay(url: parsed.string) else {
            throw NodeError.invalidInput("\(parsed) is not a configured relay")
        }
        return try relays()
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// Parses and normalizes a relay URL as rust-nostr does (the form written into KeyPackages
    /// and group data).
    static func relayURL(_ text: String) throws -> RelayURL {
        let url: RelayURL
        do { url = try RelayURL(text.trimmingCharacters(in: .whitespacesAndNewlines)) } catch {
            throw NodeError.invalidInput("not a relay URL (ws:// or wss://): \(text)")
        }
        // `wss://host/` and `wss://host` are one relay: keep the form without the slash.
        if url.string.hasSuffix("/"), let bare = try? RelayURL(String(url.string.dropLast())), bare == url { return bare }
        return url
    }
}
