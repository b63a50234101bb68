import RelayClient
import Marmot
import Nostr

/// A group as the CLI shows it (Docs/cli.md "Group object"). Keys are lowercase hex.
public struct GroupView: Sendable, Equatable {
    public let nostrGroupID: String
    public let mlsGroupID: String
    public let name: String
    public let description: String
    public let epoch: UInt64
    public let members: [String]
    public let admins: [String]
    public let relays: [String]
    /// `pending`, `active`, `leaving`, `left`, `removed` (or `declined`, `stale`).
    public let state: String
    /// Member key (hex) → display name, for the members that have one.
    public internal(set) var memberNames: [String: String] = [:]
    /// In an update from a commit: who joined and who left with it (hex keys).
    public internal(set) var joined: [String] = []
    public internal(set) var left: [String] = []

    /// A group with anyone else whose relays are all loopback addresses reaches nobody else: a
    /// relay URL is written into the group data, so it must be one every member can reach.
    public var reachabilityWarning: String? {
        guard members.count > 1, !relays.isEmpty, relays.allSatisfy(Self.isLoopback) else { return nil }
        return "this group's relays (\(relays.joined(separator: ", "))) are reachable only on this machine, so members elsewhere "
            + "receive nothing: add a relay every member can reach — your home server's LAN address (burrow relay add ws://192.168.x.y:7447) "
            + "or public relays (burrow relay add --public) — and put it in the group with `burrow group relays GROUP --add URL`"
    }

    static func isLoopback(_ url: String) -> Bool { (try? RelayURL(url))?.isLoopback ?? false }
}

/// The public ratchet tree of a group's current epoch, so members' views can be compared
/// (MDK exposes the same serialization through `get_ratchet_tree_info`).
public struct RatchetTreeView: Sendable, Equatable {
    public let epoch: UInt64
    /// RFC 9420 §7.8 tree hash of the root, as the GroupContext carries it (hex).
    public let treeHash: String
    /// The tree as the `ratchet_tree` extension serializes it (RFC 9420 §12.4.3.3), hex.
    public let ratchetTree: String
}

/// A validated Welcome awaiting consent.
public struct InviteView: Sendable, Equatable {
    /// The gift wrap's event id.
    public let id: String
    public let groupName: String
    public let nostrGroupID: String
    public let from: String
    public let members: [String]
    /// The inviter's display name, when we know one.
    public internal(set) var fromName: String? = nil
}

/// A stored inner event of a group.
public struct MessageView: Sendable, Equatable {
    public let id: String
    public let eventID: String
    public let groupID: String
    public let kind: Int
    public let sender: String
    public let senderName: String?
    public let createdAt: Int64
    public let content: String
    /// Chat text (plain, or the `text` of Whistle's JSON chat).
    public let text: String?
    public let location: LocationPayload?
    public let reaction: Reaction?
    public let deleted: [String]?
}

/// The latest location of one member.
public struct LocationView: Sendable, Equatable {
    public let member: String
    public let name: String?
    public let payload: LocationPayload
    public let stale: Bool
}

/// A pending leave request (kind 2) from a member still in the group.
public struct LeaveRequestView: Sendable, Equatable {
    public let member: String
    public let createdAt: Int64
}

/// One event the pipeline could not use, and why.
public struct SyncIssue: Sendable, Equatable {
    public let eventID: String
    public let reason: String
}

/// Something the pipeline did that a live `run` reports as a JSON line.
public enum NodeUpdate: Sendable {
    case message(MessageView)
    case group(GroupView)
    case invite(InviteView)
    /// A join request (kind 1080) arrived for a group we administer.
    case joinRequest(JoinRequestView)
    /// A direct message received (or one of ours whose state changed).
    case dm(DMView)
    /// A DM contact appeared (a request) or changed (a new card, a session).
    case contact(ContactView)
    case error(SyncIssue)
    /// A member's location arrived (after its `message` line; `run` prints it in JSON).
    case location(group: String, LocationView)
    /// A member's battery fell below 20 %, or their location went stale: once per crossing.
    case alert(AlertView)
    /// The node locked (`burrow lock`, or idle past `--lock-after`: reason `idle`) or unlocked.
    case lock(locked: Bool, reason: String)
    /// A feed entry became readable (a contact's, from the mesh or the relays).
    case feed(FeedEntryView)
    /// `run` is connected and serving (its first line).
    case ready(pubkey: String, socket: String, embeddedRelay: String?)
}

/// An alert about a member, as Whistle's BatteryAlertService raises them.
public struct AlertView: Sendable, Equatable {
    public enum Kind: String, Sendable { case batteryLow = "battery_low", stale }
    public let kind: Kind
    public let group: String
    public let groupName: String
    public let member: String
    public let name: String?
    public let battery: Int64?
    /// The time of the member's last location.
    public let lastSeen: Int64
}

/// What a sync did.
public struct SyncReport: Sendable {
    /// Events newly processed (duplicates and own echoes not counted).
    public var processed = 0
    /// Messages newly stored, of any kind.
    public var messages = 0
    public var errors: [SyncIssue] = []
    public var updates: [NodeUpdate] = []
    /// `h` values of group events refused as older than the 45-day window.
    var tooOldGroups: Set<String> = []
    /// `h` values of group events still held when a pass ended (a commit we never received).
    var strandedGroups: Set<String> = []
    /// Groups restored from a backup that this sync resumed, or asked to be re-added to.
    public var restoredGroups: [RestoredGroupOutcome] = []
    /// Follow-up work the pipeline asked for (owed commits, intents to re-apply).
    var effects: [GroupPipeline.Effect] = []
    /// Gift wraps to us processed in this batch (any outcome): deleted from our mailbox.
    var settledWraps: [EventID] = []
    /// Group events the pipeline applied (decrypted and stored for one of our groups) in this
    /// pass: only these may be passed on from the mesh to relays.
    var applied: Set<EventID> = []

    public init() {}

    mutating func fail(_ id: EventID, _ reason: String) { fail(id.hex, reason) }

    mutating func fail(_ id: String, _ reason: String) {
        let issue = SyncIssue(eventID: id, reason: reason)
        errors.append(issue)
        updates.append(.error(issue))
    }
}
