import MLS
import Marmot
import Nostr
import Store

/// The kind-445 pipeline as a value (ARCHITECTURE "The event pipeline"): one event, the groups
/// it may belong to and the time go in; a decision and the follow-up effects come out. No
/// store, relay or clock is reached: the node reads the inputs in a transaction, calls
/// `decide`, and writes what the decision says in the same transaction (swift-nio-ssh's state
/// machine and handler split). Tests drive it with no relay at all.
struct GroupPipeline {
    /// Group events larger than this are refused unread.
    static let maximumEventContent = 512 * 1024

    /// A group the event may belong to: one whose nostr_group_id is the event's `h` tag.
    struct Candidate {
        var group: LoadedGroup
        /// When we entered the group (the welcome's or the creation's time), asked only when
        /// the event cannot be opened.
        var joinedAt: () throws -> Int64
    }

    /// What the node does with the event.
    enum Decision {
        /// Already handled, or only for a group we have not accepted: nothing is recorded.
        case skip
        /// Nothing changes, but the event is recorded as handled with this outcome (a stale or
        /// re-wrapped commit, our own echo) so it is never processed again.
        case record(String, counted: Bool)
        /// Not placeable yet: kept and tried again after the next epoch change. `beforeJoin`:
        /// it predates our joining, so if nothing opens it, it was sent before our epoch.
        case hold(String, beforeJoin: Bool)
        /// Refused for good: recorded and reported with the reason. `tooOld`: older than the
        /// 45-day window (later events of its group may then be unplaceable for good).
        case reject(String, tooOld: Bool = false)
        /// The group moves on: store `change` in one transaction with the event's record.
        case apply(GroupChange)
    }

    /// A state change the event causes.
    struct GroupChange {
        /// The group after the event (MLS state, snapshots, row fields).
        var group: LoadedGroup
        /// The inner event an application message carried, with its epoch.
        var message: (inner: VerifiedInnerEvent, epoch: UInt64)?
        var epochChanged: Bool
        /// The members before the event (who joined and left is the difference).
        var membersBefore: [PublicKey] = []
        /// The group's nostr_group_id changed: fetch again under the new one.
        var nostrGroupIDChanged: Bool
        var effects: [Effect]
    }

    /// Work that follows a decision, carried out by the node after the transaction.
    enum Effect: Equatable {
        /// A received proposal that this member commits (MDK auto-commits SelfRemoves).
        case commitOwed(mlsGroupID: MLSGroupID)
        /// Our commit `lost` lost its epoch to another: what it meant to do is applied again.
        case retryIntent(mlsGroupID: MLSGroupID, lost: EventID)
    }

    let now: Int64

    /// Decides what `event` does. `alreadyProcessed` comes from the store's dedup record;
    /// `candidates` gives the groups under a `nostr_group_id` other than declined ones; it is
    /// asked only for an event that passed the envelope checks (decoding a group's state for
    /// garbage would be work for nothing).
    func decide(_ event: Event, alreadyProcessed: Bool,
                candidates lookup: (_ nostrGroupID: NostrGroupID) throws -> [Candidate]) rethrows -> Decision {
        if alreadyProcessed { return .skip }
        guard event.content.utf8.count <= Self.maximumEventContent else {
            return .reject("oversized: \(event.content.utf8.count) bytes of content")
        }
        let validated: ValidatedGroupEvent
        do { validated = try GroupEvent.validate(event, now: now) } catch MarmotError.groupEventTooOld(let createdAt, _) {
            return .reject("older than the 45-day event window (created_at \(createdAt))", tooOld: true)
        } catch {
            return .reject(BurrowNode.describe(error))
        }
        let candidates = try lookup(validated.nostrGroupID)
        guard !candidates.isEmpty else { return .reject("no group of ours has nostr_group_id \(validated.nostrGroupID.hex)") }
        // Groups we are in come first; a pending invite never shadows them (a forged welcome
        // reusing a group's nostr_group_id must not freeze the real group).
        let readable = candidates.filter { $0.group.row.state != .pending }
            .sorted { $0.group.row.state.isReadable && !$1.group.row.state.isReadable }
        guard !readable.isEmpty else { return .skip }
        var opened: (Candidate, DecryptedGroupEvent)?
        for candidate in readable {
            if let decrypted = try? candidate.group.group.decrypt(validated) {
                opened = (candidate, decrypted)
                break
            }
        }
        guard let (candidate, decrypted) = opened else {
            guard let ours = readable.first(where: { $0.group.row.state.isReadable }) else {
                // Left or removed: its later events are none of ours; recorded, not an error.
                return .record("for a group we no longer read", counted: false)
            }
            let joinedAt = (try? ours.joinedAt()) ?? ours.group.row.createdAt
            return .hold("no key of a known epoch opens it (a later epoch?)", beforeJoin: event.createdAt <= joinedAt)
        }
        return process(decrypted, event: event, in: candidate.group)
    }

    private func process(_ decrypted: DecryptedGroupEvent, event: Event, in loaded: LoadedGroup) -> Decision {
        var changed = loaded
        let outcome: GroupEventOutcome
        do { outcome = try changed.group.process(decrypted) } catch {
            return .reject(BurrowNode.describe(error))
        }
        let id = MLSGroupID(loaded.row.mlsGroupID)
        var change = GroupChange(group: changed, message: nil, epochChanged: false, membersBefore: loaded.group.members,
                                 nostrGroupIDChanged: false, effects: [])
        switch outcome {
        case .hold(let reason):
            return .hold(reason.description, beforeJoin: false)
        case .stale(let epoch):
            return .record("stale commit of epoch \(epoch)", counted: true)
        case .duplicate(let epoch):
            return .record("the commit of epoch \(epoch) again", counted: false)
        case .ownEcho:
            return .record("own echo", counted: false)
        case .application(let inner, let epoch):
            change.message = (inner, epoch)
        case .proposalToCommit:
            change.effects.append(.commitOwed(mlsGroupID: id))
        case .proposalKept, .proposalIgnored:
            break
        case .commit(let summary, let replaced):
            change.epochChanged = true
            if let lost = replaced?.eventID { change.effects.append(.retryIntent(mlsGroupID: id, lost: lost)) }
            if summary.removedSelf { change.group.row.state = loaded.row.state == .leaving ? .left : .removed }
            change.nostrGroupIDChanged = changed.group.nostrGroupID.bytes != loaded.row.nostrGroupID
        }
        change.group.row.syncSince = max(loaded.row.syncSince, event.createdAt)
        change.group.group.dropSnapshots(committedBefore: now - MarmotGroup.snapshotTTL)
        return .apply(change)
    }
}
