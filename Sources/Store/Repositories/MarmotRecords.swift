/// Records of the Marmot tables. The store knows neither MLS nor Nostr: states and bundles
/// are opaque bytes serialized by their owners, keys and ids raw 32-byte values.

/// A KeyPackage we published, with its private keys (`bundle`, secret: never log it).
public struct StoredKeyPackage: Sendable {
    public let ref: [UInt8]
    public let eventID: [UInt8]?
    public let legacyEventID: [UInt8]?
    public let slot: String
    public let bundle: [UInt8]
    public let createdAt: Int64
    public let notAfter: Int64
    public let consumedAt: Int64?

    public init(ref: [UInt8], eventID: [UInt8]?, legacyEventID: [UInt8]?, slot: String, bundle: [UInt8],
                createdAt: Int64, notAfter: Int64, consumedAt: Int64? = nil) {
        self.ref = ref
        self.eventID = eventID
        self.legacyEventID = legacyEventID
        self.slot = slot
        self.bundle = bundle
        self.createdAt = createdAt
        self.notAfter = notAfter
        self.consumedAt = consumedAt
    }
}

/// A group this member belongs to (or was invited to, or left).
public struct StoredGroup: Sendable {
    public enum State: String, Sendable, CaseIterable {
        case pending, active, leaving, left, removed, declined

        /// Whether we read and write the group's events: active, or leaving until our leave
        /// is committed.
        public var isReadable: Bool { self == .active || self == .leaving }
    }

    public let mlsGroupID: [UInt8]
    public var nostrGroupID: [UInt8]
    public var state: State
    /// The serialized MLS group (secret). Its rollback snapshots are `StoredSnapshot`s.
    public var mlsState: [UInt8]
    public let createdAt: Int64
    public var lastSelfUpdate: Int64
    /// The newest created_at of a group event handled: fetches start a margin before it.
    public var syncSince: Int64

    public init(mlsGroupID: [UInt8], nostrGroupID: [UInt8], state: State, mlsState: [UInt8], createdAt: Int64, lastSelfUpdate: Int64,
                syncSince: Int64) {
        self.mlsGroupID = mlsGroupID
        self.nostrGroupID = nostrGroupID
        self.state = state
        self.mlsState = mlsState
        self.createdAt = createdAt
        self.lastSelfUpdate = lastSelfUpdate
        self.syncSince = syncSince
    }
}

extension StoredGroup: CustomStringConvertible {
    public var description: String { "StoredGroup(\(state.rawValue), state redacted)" }
}

/// A Welcome received in a gift wrap, validated, awaiting the user's consent.
public struct StoredInvite: Sendable {
    public enum State: String, Sendable { case pending, accepted, declined }
    public let wrapperID: [UInt8]
    public let mlsGroupID: [UInt8]
    public let inviter: [UInt8]
    public let rumorJSON: String
    public let keyPackageRef: [UInt8]
    public var state: State
    public let receivedAt: Int64
    /// For a re-add into a group we already hold: the joined MLS state (secret), applied on accept.
    public let groupState: [UInt8]?

    public init(wrapperID: [UInt8], mlsGroupID: [UInt8], inviter: [UInt8], rumorJSON: String, keyPackageRef: [UInt8],
                state: State, receivedAt: Int64, groupState: [UInt8]? = nil) {
        self.groupState = groupState
        self.wrapperID = wrapperID
        self.mlsGroupID = mlsGroupID
        self.inviter = inviter
        self.rumorJSON = rumorJSON
        self.keyPackageRef = keyPackageRef
        self.state = state
        self.receivedAt = receivedAt
    }
}

/// A decrypted inner event of a group (ours included).
public struct StoredMessage: Sendable, Equatable {
    /// Arrival order (ties of created_at sort by it).
    public let seq: Int64
    public let mlsGroupID: [UInt8]
    /// The inner event's (rumor's) id.
    public let id: [UInt8]
    /// The kind-445 event that carried it.
    public let eventID: [UInt8]
    public let sender: [UInt8]
    public let kind: Int
    public let createdAt: Int64
    public let content: String
    public let rumorJSON: String
    public let epoch: Int64
    public let receivedAt: Int64
    /// The sender's ratchet generation in `epoch` (its sending order there).
    public let generation: Int64

    public init(seq: Int64 = 0, mlsGroupID: [UInt8], id: [UInt8], eventID: [UInt8], sender: [UInt8], kind: Int, createdAt: Int64,
                content: String, rumorJSON: String, epoch: Int64, receivedAt: Int64, generation: Int64 = 0) {
        self.generation = generation
        self.seq = seq
        self.mlsGroupID = mlsGroupID
        self.id = id
        self.eventID = eventID
        self.sender = sender
        self.kind = kind
        self.createdAt = createdAt
        self.content = content
        self.rumorJSON = rumorJSON
        self.epoch = epoch
        self.receivedAt = receivedAt
    }
}

/// A signed event owed to relays.
public struct OutboxEntry: Sendable, Equatable {
    public enum State: String, Sendable { case pending, sent, failed }
    /// What an entry is for, which says how the node settles it (commits are never re-sent
    /// blindly; welcomes wait for their commit).
    public enum Purpose: String, Sendable, CaseIterable {
        case message, commit, proposal, welcome
    }
    public let eventID: [UInt8]
    public let mlsGroupID: [UInt8]?
    public let purpose: Purpose
    public let json: String
    /// Relay URLs to publish to.
    public let relays: [String]
    /// A commit event that must be sent first (welcomes wait for their commit).
    public let afterEvent: [UInt8]?
    public let createdAt: Int64
    public var state: State

    public init(eventID: [UInt8], mlsGroupID: [UInt8]?, purpose: Purpose, json: String, relays: [String], afterEvent: [UInt8]? = nil,
                createdAt: Int64, state: State = .pending) {
        self.eventID = eventID
        self.mlsGroupID = mlsGroupID
        self.purpose = purpose
        self.json = json
        self.relays = relays
        self.afterEvent = afterEvent
        self.createdAt = createdAt
        self.state = state
    }
}

/// A group's state before one of its recent commits (secret: never log it).
public struct StoredSnapshot: Sendable {
    public let epoch: Int64
    public let state: [UInt8]
    public let commitCreatedAt: Int64
    public let commitEventID: [UInt8]
    public let commitDigest: [UInt8]

    public init(epoch: Int64, state: [UInt8], commitCreatedAt: Int64, commitEventID: [UInt8], commitDigest: [UInt8]) {
        self.epoch = epoch
        self.state = state
        self.commitCreatedAt = commitCreatedAt
        self.commitEventID = commitEventID
        self.commitDigest = commitDigest
    }
}

/// What one of our commits meant to do (the node's `CommitIntent`, as JSON), kept while the
/// commit can still lose its epoch; `lost` once it did, until it is applied again.
public struct StoredCommitIntent: Sendable, Equatable {
    public let commitEventID: [UInt8]
    public let mlsGroupID: [UInt8]
    public let intent: String
    public let lost: Bool
    public let createdAt: Int64

    public init(commitEventID: [UInt8], mlsGroupID: [UInt8], intent: String, lost: Bool = false, createdAt: Int64) {
        self.commitEventID = commitEventID
        self.mlsGroupID = mlsGroupID
        self.intent = intent
        self.lost = lost
        self.createdAt = createdAt
    }
}
