import Foundation

/// What a backup holds, sealed inside `BackupFile`: the identity, DM contacts with their cards
/// and verification marks, group and DM history, and the groups. A logical copy of the store's
/// rows, not the database file: sessions, pending handshakes, key packages, outboxes and relay
/// bookkeeping stay behind (Docs/security-model.md, "Backups").
///
/// JSON (the fields' own names, byte fields in base64). The container authenticates every byte, so a
/// content that fails to decode was written by a program we do not know: `corrupt`.
public struct BackupContent: Codable, Equatable, Sendable, CustomStringConvertible {
    public static let format = "burrow-backup"
    public static let version = 1

    /// The parts `backup create --include` chooses from.
    public enum Part: String, Codable, CaseIterable, Sendable {
        case identity, contacts, messages, groups
    }

    public var format = Self.format
    public var version = Self.version
    public var createdAt: Int64
    public var parts: [Part]
    public var identity: Identity?
    public var relays: [Relay]
    public var contacts: [Contact]
    public var directMessages: [DirectMessage]
    public var groups: [Group]
    public var groupMessages: [GroupMessage]
    public var memberNames: [MemberName]
    /// Ids of the events the node handled (group events, gift wraps): a restored node skips
    /// them instead of meeting old epochs' commits and spent message keys again.
    public var handledEvents: [Data]

    public init(createdAt: Int64, parts: [Part], identity: Identity?, relays: [Relay], contacts: [Contact],
                directMessages: [DirectMessage], groups: [Group], groupMessages: [GroupMessage], memberNames: [MemberName],
                handledEvents: [Data]) {
        self.createdAt = createdAt
        self.parts = parts
        self.identity = identity
        self.relays = relays
        self.contacts = contacts
        self.directMessages = directMessages
        self.groups = groups
        self.groupMessages = groupMessages
        self.memberNames = memberNames
        self.handledEvents = handledEvents
    }

    /// The Nostr secret key and the DM identity record (its `I` and `S` and own card).
    public struct Identity: Codable, Equatable, Sendable, CustomStringConvertible {
        public var nostrSecretKey: Data
        public var createdAt: Int64
        /// The DM engine's `local` record, or nil if DMs were never used.
        public var dmIdentity: Data?
        public init(nostrSecretKey: Data, createdAt: Int64, dmIdentity: Data?) {
            self.nostrSecretKey = nostrSecretKey
            self.createdAt = createdAt
            self.dmIdentity = dmIdentity
        }
        public var description: String { "Identity(redacted)" }
    }

    public struct Relay: Codable, Equatable, Sendable {
        public var url: String
        public var read: Bool
        public var write: Bool
        public var addedAt: Int64
        public init(url: String, read: Bool, write: Bool, addedAt: Int64) {
            self.url = url
            self.read = read
            self.write = write
            self.addedAt = addedAt
        }
    }

    /// A DM contact: its name, and the engine's contact record (card, state, verified mark).
    public struct Contact: Codable, Equatable, Sendable {
        public var identity: Data
        public var name: String
        public var addedAt: Int64
        public var record: Data
        public init(identity: Data, name: String, addedAt: Int64, record: Data) {
            self.identity = identity
            self.name = name
            self.addedAt = addedAt
            self.record = record
        }
    }

    public struct DirectMessage: Codable, Equatable, Sendable {
        public var contact: Data
        public var direction: String
        public var msgID: Data
        public var kind: Int
        public var sentAt: Int64
        public var receivedAt: Int64?
        public var body: Data
        public var status: String
        public init(contact: Data, direction: String, msgID: Data, kind: Int, sentAt: Int64, receivedAt: Int64?, body: Data, status: String) {
            self.contact = contact
            self.direction = direction
            self.msgID = msgID
            self.kind = kind
            self.sentAt = sentAt
            self.receivedAt = receivedAt
            self.body = body
            self.status = status
        }
    }

    /// A group: its row with the MLS state of the backup's moment (`restore` does not resume it
    /// blindly: it catches up from relays and then updates its own leaf, or asks to be re-added).
    public struct Group: Codable, Equatable, Sendable, CustomStringConvertible {
        public var mlsGroupID: Data
        public var nostrGroupID: Data
        public var state: String
        public var mlsState: Data
        public var createdAt: Int64
        public var lastSelfUpdate: Int64
        public var syncSince: Int64
        /// Shown by `backup show` without decoding the MLS state.
        public var name: String
        public var epoch: Int64
        public init(mlsGroupID: Data, nostrGroupID: Data, state: String, mlsState: Data, createdAt: Int64, lastSelfUpdate: Int64,
                    syncSince: Int64, name: String, epoch: Int64) {
            self.mlsGroupID = mlsGroupID
            self.nostrGroupID = nostrGroupID
            self.state = state
            self.mlsState = mlsState
            self.createdAt = createdAt
            self.lastSelfUpdate = lastSelfUpdate
            self.syncSince = syncSince
            self.name = name
            self.epoch = epoch
        }
        public var description: String { "Group(\(name), epoch \(epoch), state redacted)" }
    }

    public struct GroupMessage: Codable, Equatable, Sendable {
        public var mlsGroupID: Data
        public var id: Data
        public var eventID: Data
        public var sender: Data
        public var kind: Int
        public var createdAt: Int64
        public var content: String
        public var rumorJSON: String
        public var epoch: Int64
        public var receivedAt: Int64
        public var generation: Int64
        public init(mlsGroupID: Data, id: Data, eventID: Data, sender: Data, kind: Int, createdAt: Int64, content: String,
                    rumorJSON: String, epoch: Int64, receivedAt: Int64, generation: Int64) {
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
            self.generation = generation
        }
    }

    public struct MemberName: Codable, Equatable, Sendable {
        public var pubkey: Data
        public var mlsGroupID: Data
        public var name: String
        public var updatedAt: Int64
        public init(pubkey: Data, mlsGroupID: Data, name: String, updatedAt: Int64) {
            self.pubkey = pubkey
            self.mlsGroupID = mlsGroupID
            self.name = name
            self.updatedAt = updatedAt
        }
    }

    public var description: String {
        "BackupContent(parts: \(parts.map(\.rawValue)), \(contacts.count) contacts, \(groups.count) groups, "
            + "\(groupMessages.count + directMessages.count) messages, secrets redacted)"
    }

    // MARK: Encoding

    public func encoded() throws(BackupError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do { return Array(try encoder.encode(self)) } catch { throw .corrupt("the content cannot be encoded") }
    }

    /// Decodes and checks the shape of every row (lengths of keys and ids, known states), so a
    /// restore never meets a row the store would refuse halfway.
    public static func decode(_ bytes: [UInt8]) throws(BackupError) -> BackupContent {
        let decoder = JSONDecoder()
        let content: BackupContent
        do { content = try decoder.decode(BackupContent.self, from: Data(bytes)) } catch {
            throw .corrupt("the content is not a Burrow backup's")
        }
        guard content.format == format else { throw .corrupt("the content is not a Burrow backup's") }
        guard content.version == version else { throw .unsupported("content version \(content.version) (this program reads \(version))") }
        try content.validate()
        return content
    }

    private func validate() throws(BackupError) {
        func check(_ ok: Bool, _ what: String) throws(BackupError) { if !ok { throw .corrupt(what) } }
        if let identity { try check(identity.nostrSecretKey.count == 32, "the identity key is not 32 bytes") }
        try check(contacts.isEmpty && directMessages.isEmpty || identity?.dmIdentity != nil, "DM contacts without the DM identity")
        try check(groups.isEmpty || identity != nil, "groups without the identity they belong to")
        for c in contacts { try check(c.identity.count == 32 && !c.name.isEmpty && !c.record.isEmpty, "a contact row is malformed") }
        for m in directMessages {
            try check(m.contact.count == 32 && m.msgID.count == 16 && ["in", "out"].contains(m.direction)
                      && ["queued", "sent", "delivered", "received"].contains(m.status), "a DM row is malformed")
        }
        let groupStates: Set<String> = ["active", "leaving", "left", "removed"]
        for g in groups {
            try check(!g.mlsGroupID.isEmpty && g.nostrGroupID.count == 32 && groupStates.contains(g.state) && !g.mlsState.isEmpty,
                      "a group row is malformed")
        }
        for m in groupMessages {
            try check(!m.mlsGroupID.isEmpty && m.id.count == 32 && m.eventID.count == 32 && m.sender.count == 32, "a message row is malformed")
        }
        for n in memberNames { try check(n.pubkey.count == 32 && !n.mlsGroupID.isEmpty, "a member name row is malformed") }
        for id in handledEvents { try check(id.count == 32, "an event id is not 32 bytes") }
    }
}
