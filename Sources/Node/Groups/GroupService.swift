import Nostr
import Synchronization

/// Marmot groups: creating them and changing their members, admins and data; welcomes,
/// invites and join requests; our KeyPackages; sending into a group; and catching up on its
/// kind-445 events through `GroupPipeline`.
public final class GroupService: ContextualService {
    let context: NodeContext
    let gateway: RelayGateway
    let profiles: ProfileService
    let meshBridge: MeshBridgeService

    private struct LiveState {
        /// Live group events that could not be placed yet (`run` retries them as others arrive).
        var held: [Event] = []
        /// The most group events a catch-up window held (tests check the bound).
        var largestCatchUpBatch = 0
    }

    private let live = Mutex(LiveState())

    init(context: NodeContext, gateway: RelayGateway, profiles: ProfileService, meshBridge: MeshBridgeService) {
        self.context = context
        self.gateway = gateway
        self.profiles = profiles
        self.meshBridge = meshBridge
    }

    /// The running mesh, if any.
    var mesh: MeshService? { meshBridge.mesh }

    /// Live group events held at most; beyond, the oldest go (a catch-up fetches them again).
    static let maxLiveHeld = 1000

    /// Live group events that could not be placed yet (`run` retries them as others arrive).
    var liveHeld: [Event] {
        get { live.withLock { $0.held } }
        set { live.withLock { $0.held = newValue } }
    }

    /// The most group events a catch-up window held (tests check the bound).
    var largestCatchUpBatch: Int {
        get { live.withLock { $0.largestCatchUpBatch } }
        set { live.withLock { $0.largestCatchUpBatch = newValue } }
    }
}
