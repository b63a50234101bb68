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
        /// Each member's last battery level seen by this process, per group (alerts fire once
        /// per fall below the threshold).
        var batteries: [String: Int64] = [:]
        /// Locations already reported stale, by member and group, with the time they carry.
        var staleReported: [String: Int64] = [:]
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

    /// Whether a member's battery `level` is a fall below the alert threshold (20 %), remembered.
    func batteryFell(member: String, group: String, to level: Int64) -> Bool {
        live.withLock { state in
            let key = member + group
            let before = state.batteries[key]
            state.batteries[key] = level
            if state.batteries.count > 10_000 { state.batteries.removeAll() }
            return level < Self.batteryAlertThreshold && (before ?? 100) >= Self.batteryAlertThreshold
        }
    }

    /// Whether the stale location of `member` stamped `at` has not been reported yet (remembered).
    func staleNotYetReported(member: String, group: String, at: Int64) -> Bool {
        live.withLock { state in
            let key = member + group
            guard state.staleReported[key] != at else { return false }
            state.staleReported[key] = at
            if state.staleReported.count > 10_000 { state.staleReported.removeAll() }
            return true
        }
    }

    /// Battery alerts fire below this level (Whistle's).
    public static let batteryAlertThreshold: Int64 = 20

    /// The most group events a catch-up window held (tests check the bound).
    var largestCatchUpBatch: Int {
        get { live.withLock { $0.largestCatchUpBatch } }
        set { live.withLock { $0.largestCatchUpBatch = newValue } }
    }
}
