import Synchronization

/// Pigeon direct messages (Docs/protocols/pigeon-dm.md): the engine's state in the store and
/// its cache, contacts and cards, frames sent through the outbox to relays or the mesh, and
/// frames received from either.
public final class DirectMessageService: ContextualService {
    let context: NodeContext
    let gateway: RelayGateway
    let meshBridge: MeshBridgeService
    /// The DM engine's state as last read or written.
    let pigeonCache = PigeonStateCache()
    /// `run`'s outbox flushes and mailbox deletions, outside the mailbox.
    let liveSender = LiveSender()
    /// DM outbox rows the mesh already carried (it stores and forwards them), so a frame still
    /// owed to the relays is not put on the air again at every flush.
    let meshCarriedFrames = Mutex<Set<Int64>>([])
    /// The feed service's handlers for feed-keys bodies (content kind 4).
    let feedKeys = FeedKeysHook()

    init(context: NodeContext, gateway: RelayGateway, meshBridge: MeshBridgeService) {
        self.context = context
        self.gateway = gateway
        self.meshBridge = meshBridge
    }

    /// The running mesh, if any.
    var mesh: MeshService? { meshBridge.mesh }
}
