import Backup
import Foundation
import Logging
import MLS
import Marmot
import Nostr
import Store

/// What a restore brought back, and what it left to the first sync.
public struct RestoreSummary: Sendable {
    public let npub: String
    public let contacts: [String]
    public let groups: [String]
    public let groupMessages: Int
    public let directMessages: Int
    public let backupCreatedAt: Int64
}

/// Backups (issue 25): a logical copy of the store's rows that a family can restore on a new
/// machine. Sessions and MLS secrets are not resumed blindly (Docs/security-model.md,
/// "Backups"): DM contacts re-handshake at the first message, and each group catches up from
/// its relays and then replaces its own leaf's keys, or asks an admin to re-add it.
extension BurrowNode {
    /// The rows of `parts`, read in one transaction. Groups and contacts need the identity
    /// (their state is bound to our keys), so choosing them includes it.
    public func backupContent(parts requested: Set<BackupContent.Part>) throws -> BackupContent {
        var parts = requested
        if parts.contains(.groups) || parts.contains(.contacts) { parts.insert(.identity) }
        let ordered = BackupContent.Part.allCases.filter(parts.contains)
        return try store.transaction { tx in
            var identity: BackupContent.Identity?
            if parts.contains(.identity) {
                guard let stored = try tx.identity.get() else { throw StoreError.storeCorrupt("the identity is missing") }
                identity = .init(nostrSecretKey: Data(stored.secretKey), createdAt: stored.createdAt,
                                 dmIdentity: try tx.pigeonRecords.get("local").map { Data($0) })
            }
            let relays = try tx.relays.list().map { BackupContent.Relay(url: $0.url, read: $0.read, write: $0.write, addedAt: $0.addedAt) }
            var contacts: [BackupContent.Contact] = []
            var directMessages: [BackupContent.DirectMessage] = []
            if parts.contains(.contacts) {
                for contact in try tx.dmContacts.list() {
                    guard let record = try tx.pigeonRecords.get("contact:" + Hex.encode(contact.identity)) else { continue }
                    contacts.append(.init(identity: Data(contact.identity), name: contact.name, addedAt: contact.addedAt, record: Data(record)))
                }
                if parts.contains(.messages) {
                    let kept = Set(contacts.map(\.identity))
                    directMessages = try tx.dmMessages.all().filter { kept.contains(Data($0.contact)) && $0.kind != FeedService.feedKeysKind }.map {
                        .init(contact: Data($0.contact), direction: $0.direction.rawValue, msgID: Data($0.msgID), kind: $0.kind,
                              sentAt: $0.sentAt, receivedAt: $0.receivedAt, body: Data($0.body),
                              status: $0.status == .queued ? StoredDM.Status.sent.rawValue : $0.status.rawValue)
                    }
                }
            }
            var groups: [BackupContent.Group] = []
            var groupMessages: [BackupContent.GroupMessage] = []
            var memberNames: [BackupContent.MemberName] = []
            let keptStates: Set<StoredGroup.State> = [.active, .leaving, .left, .removed]
            // Each kept group's state is decoded once, for its name, epoch and members.
            let kept = parts.contains(.groups) || parts.contains(.messages)
                ? try tx.groups.list().filter { keptStates.contains($0.state) }.map { try LoadedGroup($0) } : []
            if parts.contains(.groups) {
                for loaded in kept {
                    let row = loaded.row
                    groups.append(.init(mlsGroupID: Data(row.mlsGroupID), nostrGroupID: Data(row.nostrGroupID), state: row.state.rawValue,
                                        mlsState: Data(row.mlsState), createdAt: row.createdAt, lastSelfUpdate: row.lastSelfUpdate,
                                        syncSince: row.syncSince, name: loaded.group.data.name, epoch: Int64(clamping: loaded.group.epoch)))
                }
            }
            if parts.contains(.messages) {
                // Without the groups, a group's history is kept under its own group id (shown
                // by `messages` once the group is joined again).
                for loaded in kept {
                    let groupID = loaded.row.mlsGroupID
                    for m in try tx.messages.list(mlsGroupID: groupID) {
                        groupMessages.append(.init(mlsGroupID: Data(m.mlsGroupID), id: Data(m.id), eventID: Data(m.eventID), sender: Data(m.sender),
                                                   kind: m.kind, createdAt: m.createdAt, content: m.content, rumorJSON: m.rumorJSON,
                                                   epoch: m.epoch, receivedAt: m.receivedAt, generation: m.generation))
                    }
                    for member in loaded.group.members {
                        if let name = try tx.memberNames.name(pubkey: member.bytes, mlsGroupID: groupID),
                           let at = try tx.memberNames.updatedAt(pubkey: member.bytes, mlsGroupID: groupID) {
                            memberNames.append(.init(pubkey: Data(member.bytes), mlsGroupID: Data(groupID), name: name, updatedAt: at))
                        }
                    }
                }
            }
            // Groups' and DMs' handled events go with them (without those, they mean nothing).
            let handled = parts.contains(.groups) || parts.contains(.contacts) ? try tx.processedEvents.allIDs().map { Data($0) } : []
            return BackupContent(createdAt: Self.now(), parts: ordered, identity: identity, relays: relays, contacts: contacts,
                                 directMessages: directMessages, groups: groups, groupMessages: groupMessages, memberNames: memberNames,
                                 handledEvents: handled)
        }
    }

    /// Creates a store in `home` from `content`: its identity (or a fresh one), relays, DM
    /// contacts and history, groups and their history. Every row goes in one transaction after
    /// the store exists; any failure removes the new store again, so a failed restore leaves
    /// no half-restored home behind.
    public static func restore(_ content: BackupContent, home: URL, passphrase: [UInt8], kdfMemoryMiB: Int,
                               logger: Logger = Logger(label: "burrow.node")) throws -> (BurrowNode, RestoreSummary) {
        let secret: SecretKey?
        do { secret = try content.identity.map { try SecretKey(bytes: Array($0.nostrSecretKey)) } } catch {
            throw BackupError.corrupt("the identity key is invalid")
        }
        let node = try initialize(home: home, passphrase: passphrase, kdfMemoryMiB: kdfMemoryMiB, importing: secret, logger: logger)
        do {
            try node.store.transaction { tx in
                if let identity = content.identity {
                    try tx.identity.set(secretKey: Array(identity.nostrSecretKey), createdAt: identity.createdAt)
                    if let local = identity.dmIdentity {
                        try tx.pigeonRecords.set("local", Array(local))
                        // Feeds are not in the backup: the own feed comes back from contacts
                        // before anything new is written to it (feed.md 7.3).
                        try tx.settings.set(FeedService.catchingUpSetting, "1")
                    }
                }
                for relay in content.relays { _ = try tx.relays.add(url: relay.url, read: relay.read, write: relay.write, addedAt: relay.addedAt) }
                for contact in content.contacts {
                    try tx.pigeonRecords.set("contact:" + Hex.encode(Array(contact.identity)), Array(contact.record))
                    try tx.dmContacts.set(identity: Array(contact.identity), name: contact.name, at: contact.addedAt)
                }
                for m in content.directMessages {
                    guard let direction = StoredDM.Direction(rawValue: m.direction), let status = StoredDM.Status(rawValue: m.status) else {
                        throw BackupError.corrupt("a DM row is malformed")
                    }
                    _ = try tx.dmMessages.insert(StoredDM(contact: Array(m.contact), direction: direction, msgID: Array(m.msgID), sessionID: nil,
                                                          kind: m.kind, sentAt: m.sentAt, receivedAt: m.receivedAt, body: Array(m.body),
                                                          status: status))
                }
                for g in content.groups {
                    guard let state = StoredGroup.State(rawValue: g.state) else { throw BackupError.corrupt("a group row is malformed") }
                    let row = StoredGroup(mlsGroupID: Array(g.mlsGroupID), nostrGroupID: Array(g.nostrGroupID), state: state,
                                          mlsState: Array(g.mlsState), createdAt: g.createdAt, lastSelfUpdate: g.lastSelfUpdate, syncSince: g.syncSince)
                    do { _ = try LoadedGroup(row) } catch { throw BackupError.corrupt("a group's state does not decode") }
                    try tx.groups.save(row)
                    if state.isReadable { try tx.settings.set(Settings.restored(MLSGroupID(row.mlsGroupID)), Settings.RestoreStage.catchingUp) }
                }
                for m in content.groupMessages {
                    _ = try tx.messages.insert(StoredMessage(
                        mlsGroupID: Array(m.mlsGroupID), id: Array(m.id), eventID: Array(m.eventID), sender: Array(m.sender), kind: m.kind,
                        createdAt: m.createdAt, content: m.content, rumorJSON: m.rumorJSON, epoch: m.epoch, receivedAt: m.receivedAt,
                        generation: m.generation))
                    // Its event is handled: a catch-up fetching it again skips it (its keys are spent).
                    _ = try tx.processedEvents.mark(eventID: Array(m.eventID), outcome: "restored from a backup", at: content.createdAt)
                }
                for id in content.handledEvents {
                    _ = try tx.processedEvents.mark(eventID: Array(id), outcome: "handled before the backup", at: content.createdAt)
                }
                for n in content.memberNames {
                    try tx.memberNames.set(pubkey: Array(n.pubkey), mlsGroupID: Array(n.mlsGroupID), name: n.name, at: n.updatedAt)
                }
            }
        } catch {
            node.close()
            BurrowStore.removeCreatedHome(home)
            if let store = error as? StoreError, case .sqlite = store { throw BackupError.corrupt("a row of the backup does not fit the store") }
            throw error
        }
        let summary = RestoreSummary(
            npub: node.publicKey.npub, contacts: content.contacts.map(\.name), groups: content.groups.filter { $0.state == "active" }.map(\.name),
            groupMessages: content.groupMessages.count, directMessages: content.directMessages.count, backupCreatedAt: content.createdAt)
        return (node, summary)
    }
}

extension Settings {
    /// A group restored from a backup, and how far its resumption got.
    static func restored(_ mlsGroupID: MLSGroupID) -> String { "restored:" + mlsGroupID.hex }

    enum RestoreStage {
        /// Not synced since the restore: catch up, then update our leaf.
        static let catchingUp = "catching_up"
        /// The relays could not bring it up to date: a join request went to an admin.
        static let rejoining = "rejoining"
        /// Caught up and our keys replaced at this time; watched for a week (`watch`).
        static func resumed(at time: Int64) -> String { "resumed:\(time)" }
        static func resumedAt(_ stage: String) -> Int64? {
            stage.hasPrefix("resumed:") ? Int64(stage.dropFirst("resumed:".count)) : nil
        }
        static let watch: Int64 = 7 * 24 * 60 * 60
    }
}
