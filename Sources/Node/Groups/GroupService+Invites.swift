import Foundation
import MLS
import Marmot
import Nostr
import Store

/// Welcomes need consent: they wait as invites until accepted or declined.
extension GroupService {
    public func invites() throws -> [InviteView] {
        try store.transaction { tx in try tx.invites.list(state: .pending).map { try inviteView($0, tx: tx) } }
    }

    /// Joins the group of a pending invite (its state was validated on receipt), then
    /// publishes a fresh KeyPackage (the used one may be consumed again, but a new one keeps
    /// us invitable) and catches the group up.
    public func acceptInvite(_ idText: String, timeout: Duration) async throws -> GroupView {
        try await acceptInvite(idText, timeout: timeout, relaysRequired: true)
    }

    /// `relaysRequired: false` (a nearby join, perhaps with no relay in reach): the group is
    /// joined whatever the relays say; the KeyPackage and the catch-up wait for the next sync.
    func acceptInvite(_ idText: String, timeout: Duration, relaysRequired: Bool) async throws -> GroupView {
        let wrapperID = try resolveInvite(idText)
        let id = try store.transaction { tx -> MLSGroupID in
            guard let invite = try tx.invites.get(wrapperID: wrapperID), invite.state == .pending else {
                throw NodeError.unknownInvite("no pending invite \(idText)")
            }
            var loaded = try loadGroup(mlsGroupID: MLSGroupID(invite.mlsGroupID), in: tx)
            if let state = invite.groupState {
                // A re-add: the joined state replaces ours, with no snapshots of the old branch.
                let joined = try MarmotGroup(mls: MLSGroup(serialized: state))
                var row = loaded.row
                row.state = .active
                if let rumor = try? Rumor(json: invite.rumorJSON) { row.syncSince = rumor.createdAt }
                loaded = LoadedGroup(row: row, group: joined)
                try tx.snapshots.replace(mlsGroupID: invite.mlsGroupID, with: [])
                try tx.settings.delete(Settings.needsReAdd(MLSGroupID(invite.mlsGroupID)))
            }
            loaded.row.state = .active
            try loaded.save(tx)
            try tx.invites.setState(wrapperID: wrapperID, .accepted)
            return MLSGroupID(invite.mlsGroupID)
        }
        do { _ = try await publishKeyPackage(timeout: timeout) } catch {
            logger.warning("could not publish a fresh KeyPackage after joining", metadata: ["error": "\(BurrowNode.describe(error))"])
        }
        var report = SyncReport()
        do { try await syncGroups([id], timeout: timeout, report: &report) } catch where !relaysRequired {
            logger.info("joined without a relay in reach; the group catches up at the next sync")
        }
        return try store.transaction { try loadGroup(mlsGroupID: id, in: $0).namedView(tx: $0) }
    }

    public func declineInvite(_ idText: String) throws -> GroupView {
        let wrapperID = try resolveInvite(idText)
        return try store.transaction { tx in
            guard let invite = try tx.invites.get(wrapperID: wrapperID), invite.state == .pending else {
                throw NodeError.unknownInvite("no pending invite \(idText)")
            }
            var loaded = try loadGroup(mlsGroupID: MLSGroupID(invite.mlsGroupID), in: tx)
            loaded.row.state = .declined
            try loaded.save(tx)
            try tx.invites.setState(wrapperID: wrapperID, .declined)
            return loaded.view
        }
    }

    /// An invite: the full gift-wrap id, a unique prefix of it (at least 8 hex digits), or the
    /// group's name when exactly one pending invite has it (case-insensitive).
    func resolveInvite(_ text: String) throws -> [UInt8] {
        let lower = text.lowercased()
        let pending = try store.transaction { tx in try tx.invites.list(state: .pending).map { ($0, try inviteView($0, tx: tx)) } }
        if lower.count >= 8, lower.allSatisfy(\.isHexDigit) {
            let matches = pending.filter { Hex.encode($0.0.wrapperID).hasPrefix(lower) }
            if matches.count == 1 { return matches[0].0.wrapperID }
            if matches.count > 1 { throw NodeError.unknownInvite("\(text) matches \(matches.count) invites") }
        }
        let named = pending.filter { $0.1.groupName.lowercased() == lower }
        guard named.count == 1 else {
            if named.isEmpty { throw NodeError.unknownInvite("no pending invite \(text) (see `burrow invite list --sync`)") }
            throw NodeError.unknownInvite("\(named.count) invites are for a group called \(text); give the id: "
                                          + named.map { String($0.1.id.prefix(12)) }.joined(separator: ", "))
        }
        return named[0].0.wrapperID
    }

    func inviteView(_ invite: StoredInvite, tx: StoreTransaction) throws -> InviteView {
        let loaded = try loadGroup(mlsGroupID: MLSGroupID(invite.mlsGroupID), in: tx)
        var view = InviteView(id: Hex.encode(invite.wrapperID), groupName: loaded.group.data.name,
                              nostrGroupID: loaded.group.nostrGroupID.hex, from: Hex.encode(invite.inviter),
                              members: loaded.group.members.map(\.hex))
        view.fromName = try tx.memberNames.name(pubkey: invite.inviter, mlsGroupID: [])
        return view
    }
}
