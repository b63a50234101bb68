import Foundation
import MLS
import Marmot
import Nostr
import Store

/// How a group restored from a backup came back (reported by `sync` and `run`).
public struct RestoredGroupOutcome: Sendable, Equatable {
    public enum Stage: String, Sendable {
        /// Caught up from its relays, then our leaf's keys were replaced (a self-update).
        case resumed
        /// The relays no longer hold what follows the backup's epoch: a join request went to
        /// an admin, who re-adds us.
        case rejoining
        /// An admin re-added us; the backup's leaf was removed (or is left to an admin).
        case rejoined
    }
    public let group: String
    public let name: String
    public let stage: Stage
    public let detail: String
}

/// Groups restored from a backup are not resumed blindly (issue 25): the backup's MLS state is
/// only a starting point. After the first sync has brought it as far as the relays allow, the
/// node either replaces its own leaf's keys at once (a self-update commit: the backup file and
/// any old device can no longer read what follows) or, when the history on the relays no longer
/// reaches the backup's epoch, asks an admin to re-add it with a fresh KeyPackage.
extension GroupService {
    func resumeRestoredGroups(timeout: Duration, report: inout SyncReport) async {
        guard let marked = try? store.transaction({ try $0.settings.all(prefix: "restored:") }), !marked.isEmpty else { return }
        for (key, stage) in marked {
            guard let bytes = try? Hex.decode(String(key.dropFirst("restored:".count))) else { continue }
            let id = MLSGroupID(bytes)
            guard let loaded = try? store.transaction({ tx in try tx.groups.get(mlsGroupID: bytes).map { try LoadedGroup($0) } }),
                  loaded.row.state.isReadable else {
                _ = try? store.transaction { try $0.settings.delete(key) }
                continue
            }
            let name = loaded.group.data.name
            do {
                switch stage {
                case Settings.RestoreStage.catchingUp:
                    if report.strandedGroups.contains(loaded.group.nostrGroupID.hex) {
                        let admin = try await askToBeReAdded(loaded, timeout: timeout)
                        try store.transaction { try $0.settings.set(key, Settings.RestoreStage.rejoining) }
                        report.restoredGroups.append(.init(group: id.hex, name: name, stage: .rejoining,
                                                           detail: "the relays no longer hold this group's history since the backup; "
                                                               + "asked \(admin.npub.prefix(16))… to re-add us"))
                    } else {
                        let updated = try await commit(id, timeout: timeout) { group, now, rng in try group.selfUpdate(now: now, using: &rng) }
                        try store.transaction { tx in
                            var current = try loadGroup(mlsGroupID: id, in: tx)
                            current.row.lastSelfUpdate = Self.now()
                            try current.save(tx)
                            try tx.settings.set(key, Settings.RestoreStage.resumed(at: Self.now()))
                        }
                        report.restoredGroups.append(.init(group: id.hex, name: name, stage: .resumed,
                                                           detail: "caught up and replaced our keys (epoch \(updated.epoch))"))
                    }
                case Settings.RestoreStage.rejoining:
                    guard let outcome = try await acceptReAdd(id, timeout: timeout) else { continue }
                    try store.transaction { try $0.settings.delete(key) }
                    report.restoredGroups.append(.init(group: id.hex, name: name, stage: .rejoined, detail: outcome))
                default:
                    // Resumed: if events we cannot place turn up within a week (members moved on
                    // through commits the relays had lost when we caught up), ask to be re-added.
                    guard let since = Settings.RestoreStage.resumedAt(stage), Self.now() - since < Settings.RestoreStage.watch else {
                        _ = try? store.transaction { try $0.settings.delete(key) }
                        continue
                    }
                    guard report.strandedGroups.contains(loaded.group.nostrGroupID.hex) else { continue }
                    let admin = try await askToBeReAdded(loaded, timeout: timeout)
                    try store.transaction { try $0.settings.set(key, Settings.RestoreStage.rejoining) }
                    report.restoredGroups.append(.init(group: id.hex, name: name, stage: .rejoining,
                                                       detail: "events we cannot open arrived after we resumed; asked \(admin.npub.prefix(16))… to re-add us"))
                }
            } catch {
                // Kept for the next sync (a relay out of reach, an admin not answering yet).
                report.fail("", "restored group \(name): \(BurrowNode.describe(error)); tried again at the next sync")
            }
        }
    }

    /// A kind-1080 join request to the first admin that is not us, as `join request` sends.
    private func askToBeReAdded(_ loaded: LoadedGroup, timeout: Duration) async throws -> PublicKey {
        guard let admin = loaded.group.admins.first(where: { $0 != publicKey }) else {
            throw NodeError.invalidInput("we are this group's only admin, so no one can re-add us")
        }
        try store.transaction { try $0.settings.set(Settings.needsReAdd(loaded.group.mlsGroupID), "1") }
        let ours = try relays()
        _ = try await requestToJoin(groupID: loaded.group.mlsGroupID.hex, inviter: admin, name: nil,
                                    extraRelays: loaded.group.data.relays.map(\.string).filter { !ours.contains($0) },
                                    timeout: timeout, rejoining: true)
        return admin
    }

    /// Accepts an admin's re-add (a welcome into a newer epoch, waiting as an invite: the
    /// admin removed the backup's leaf in the same or an earlier commit, since one identity never
    /// holds two leaves). Nil while no re-add came.
    private func acceptReAdd(_ id: MLSGroupID, timeout: Duration) async throws -> String? {
        let invite = try store.transaction { tx in
            try tx.invites.list(state: .pending).first { $0.mlsGroupID == id.bytes && $0.groupState != nil }
        }
        guard let invite else { return nil }
        let view = try await acceptInvite(Hex.encode(invite.wrapperID), timeout: timeout)
        return "re-added by an admin (epoch \(view.epoch)); the backup's leaf is gone"
    }
}
