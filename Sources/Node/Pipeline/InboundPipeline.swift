import Marmot
import Mesh
import Nostr
import Pigeon

/// Everything that reaches the node from outside, as one unit of the inbound pipeline.
enum InboundUnit: Sendable {
    /// Events a relay gave us (the live subscription, or a catch-up fetch).
    case relayEvents([Event])
    /// An event the mesh carried (Docs/protocols/mesh.md 8.4): handled as from a relay, and
    /// passed on to its group's relays once applied.
    case meshEvent(Event)
    /// The DM frames the mesh delivered, queued as they arrived (`MeshBridgeService`): the one
    /// route by which mesh DMs reach the engine.
    case meshDMFrames

    /// Whether group events are among it (our unconfirmed commits are settled before them).
    var carriesGroupEvents: Bool {
        switch self {
        case .relayEvents(let events): return events.contains { $0.kind == MarmotKind.groupEvent }
        case .meshEvent(let event): return event.kind == MarmotKind.groupEvent
        case .meshDMFrames: return false
        }
    }
}

/// The pipeline's routing decisions, from an envelope alone (no store, no keys): which
/// service's decision function takes the unit. The services decide the rest (`GroupPipeline`
/// for 445s, the Pigeon engine for DM frames, the welcome and join-request checks), each in
/// one store transaction with the unit's dedup record.
enum InboundPipeline {
    /// What an outer event is.
    enum Route: Equatable {
        /// A NIP-59 gift wrap to us: a DM frame, a join request or a welcome inside.
        case giftWrap
        /// A Marmot group event (kind 445), decided by `GroupPipeline`.
        case groupEvent
        /// A kind-0 profile, kept only for the people the live filter follows.
        case profile
        /// Nothing we read: dropped unrecorded (a relay may send what we never asked for).
        case ignored
    }

    static func route(_ event: Event) -> Route {
        switch event.kind {
        case Kind.giftWrap: return .giftWrap
        case MarmotKind.groupEvent: return .groupEvent
        case 0: return .profile
        default: return .ignored
        }
    }

    /// What a gift wrap's rumor is.
    enum WrappedRoute: Equatable {
        /// A Pigeon frame (Docs/protocols/pigeon-dm.md 6.1), stepped by the DM engine.
        case dmFrame
        /// A kind-1080 request to join one of our groups.
        case joinRequest
        /// A kind-444 Marmot welcome: a new invite.
        case welcome
        /// Any other rumor: recorded as ignored.
        case ignored(kind: Int)
    }

    static func route(rumorKind: Int) -> WrappedRoute {
        switch rumorKind {
        case NostrCarrier.rumorKind: return .dmFrame
        case JoinRequestRumor.kind: return .joinRequest
        case MarmotKind.welcome: return .welcome
        default: return .ignored(kind: rumorKind)
        }
    }

    /// Group events relays gave us within this many seconds are passed on to the mesh (8.4).
    static let meshBridgeWindow: Int64 = 3600
}

/// Work that follows an inbound job. The job itself only reads and writes the store; the
/// node carries these out after it: what needs the network outside the job, what changes a
/// group again (a commit) as a job of its own.
enum InboundEffect: Sendable {
    /// Commits owed for received proposals, and our changes whose commit lost its epoch.
    case commitsOwed
    /// Queued group events whose prerequisite went out (welcomes after their commit).
    case flushOutbox
    /// Queued DM frames go out; processed gift wraps are deleted from our mailbox.
    case flushDMs(deleteWraps: [EventID])
    /// The engine's answers to a mesh DM frame, straight back to its sender.
    case meshReplies(to: MeshID, frames: [[UInt8]])
    /// A group event passed on to the other carrier: to its group's relays (a mesh event we
    /// applied) or to the mesh (a recent one from the relays).
    case bridge(Event, to: BridgeTarget)
    /// Members who just joined are named (their profiles fetched) before the updates show.
    case nameNewMembers
    /// The set of groups we read changed: the live subscription is renewed.
    case resubscribe

    enum BridgeTarget: Sendable { case relays, mesh }
}

/// An inbound job's result: what to show and what to do next.
struct InboundOutcome: Sendable {
    var report = SyncReport()
    var effects: [InboundEffect] = []

    var resubscribe: Bool { effects.contains { if case .resubscribe = $0 { return true } else { return false } } }
}
