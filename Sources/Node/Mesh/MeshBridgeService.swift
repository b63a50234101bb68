import Synchronization

/// The node's side of the mesh (Docs/protocols/mesh.md 8.3, 8.4): the mesh `run` (or a nearby
/// command) brought up, the DM frames it delivered waiting for a mailbox job, and the bounded
/// background publishes that pass mesh-received group events on to relays.
public final class MeshBridgeService: ContextualService {
    let context: NodeContext
    let gateway: RelayGateway
    let slot = Mutex<MeshService?>(nil)
    /// DM frames the mesh delivered, waiting for a mailbox job to step them.
    let dmQueue = Mutex<[MeshDMFrame]>([])
    /// Mesh-received group events being passed on to relays (bounded).
    let publisher = BridgePublisher()

    init(context: NodeContext, gateway: RelayGateway) {
        self.context = context
        self.gateway = gateway
    }
}
