import Foundation
import MLS
import Marmot
import Nostr
import RelayClient
import Store

/// Group events (ARCHITECTURE "The event pipeline"): fetched per group, decided by
/// `GroupPipeline` in created_at order, and every state change committed in one transaction with
/// the messages it unlocks and the event's dedup record; then the commits owed are made.
extension GroupService {

    /// Brings one group up to date before we commit or send into it (the freshness rule).
    func catchUp(_ groupText: String, timeout: Duration) async throws -> MLSGroupID {
        let id = try groupID(groupText)
        var report = SyncReport()
        await recoverPendingCommits(timeout: timeout)
        await gateway.flushOutbox(timeout: timeout)
        try await syncGroups([id], timeout: timeout, report: &report)
        // Reasons can name keys and groups: debug only (the command's own report carries them).
        for issue in report.errors { logger.debug("catch-up skipped an event", metadata: ["event": "\(issue.eventID)", "reason": "\(issue.reason)"]) }
        return id
    }

    func admitWelcome(_ unwrapped: UnwrappedGift, wrapID: EventID) throws -> InviteView? {
        let eventID = wrapID
        guard unwrapped.rumor.kind == MarmotKind.welcome else {
            _ = try store.transaction { try $0.processedEvents.mark(eventID: eventID.bytes, outcome: "ignored rumor kind \(unwrapped.rumor.kind)") }
            return nil
        }
        let welcome = try WelcomeRumor.verify(unwrapped.rumor)
        return try store.transaction { tx -> InviteView in
            guard let stored = try tx.keyPackages.find(eventID: welcome.keyPackageEventID.bytes) else {
                throw NodeError.invalidInput("the welcome names KeyPackage \(welcome.keyPackageEventID.hex), which we never published")
            }
            let bundle: KeyPackageBundle
            do { bundle = try KeyPackageBundle(tlsSerialized: stored.bundle) } catch {
                throw StoreError.storeCorrupt("a stored KeyPackage does not decode")
            }
            let group = try MarmotGroup.join(welcome: welcome, keyPackage: bundle)
            let now = Self.now()
            // A welcome reusing the nostr_group_id of another group of ours is forged or
            // broken: its events would be confused with that group's.
            if try tx.groups.find(nostrGroupID: group.nostrGroupID.bytes).contains(where: {
                $0.mlsGroupID != group.mlsGroupID.bytes && $0.state != .declined
            }) {
                throw NodeError.invalidInput("the welcome's group reuses the nostr_group_id of another group of ours")
            }
            if let existing = try tx.groups.get(mlsGroupID: group.mlsGroupID.bytes), existing.state != .declined {
                // A welcome to a group we are no longer in (removed, or we left) is a new
                // invitation: accepting it starts a fresh MLS state, the old messages stay as
                // history. One into a newer epoch than ours re-adds us (our branch lost a
                // race); one for our epoch or older is a replay.
                let current = try LoadedGroup(existing)
                let noLongerMember = existing.state == .removed || existing.state == .left
                guard noLongerMember || existing.state.isReadable && group.epoch > current.group.epoch else {
                    throw NodeError.invalidInput("duplicate welcome for a group that is already \(existing.state.rawValue)")
                }
                try tx.invites.insert(StoredInvite(
                    wrapperID: wrapID.bytes, mlsGroupID: group.mlsGroupID.bytes, inviter: welcome.inviter.bytes,
                    rumorJSON: welcome.rumor.jsonString, keyPackageRef: stored.ref, state: .pending, receivedAt: now,
                    groupState: group.mls.serialized()))
                try tx.keyPackages.markConsumed(ref: stored.ref, at: now)
                try tx.processedEvents.mark(eventID: wrapID.bytes, outcome: "re-add invite", at: now)
                return InviteView(id: wrapID.hex, groupName: group.data.name, nostrGroupID: group.nostrGroupID.hex,
                                  from: welcome.inviter.hex, members: group.members.map(\.hex))
            }
            var loaded = LoadedGroup(row: StoredGroup(
                mlsGroupID: group.mlsGroupID.bytes, nostrGroupID: group.nostrGroupID.bytes, state: .pending, mlsState: [], createdAt: now,
                lastSelfUpdate: now, syncSince: welcome.rumor.createdAt), group: group)
            try loaded.save(tx)
            try tx.invites.insert(StoredInvite(
                wrapperID: wrapID.bytes, mlsGroupID: group.mlsGroupID.bytes, inviter: welcome.inviter.bytes,
                rumorJSON: welcome.rumor.jsonString, keyPackageRef: stored.ref, state: .pending, receivedAt: now))
            try tx.keyPackages.markConsumed(ref: stored.ref, at: now)
            try tx.processedEvents.mark(eventID: wrapID.bytes, outcome: "invite", at: now)
            return InviteView(id: wrapID.hex, groupName: group.data.name, nostrGroupID: group.nostrGroupID.hex,
                              from: welcome.inviter.hex, members: group.members.map(\.hex))
        }
    }

    /// Fetches and processes the group events of `ids`, following `nostr_group_id` changes.
    func syncGroups(_ ids: [MLSGroupID], timeout: Duration, report: inout SyncReport) async throws {
        var pendingIDs = ids
        var fetchedFor = Set<[UInt8]>()
        while !pendingIDs.isEmpty {
            let targets = try store.transaction { tx in try pendingIDs.compactMap { try tx.groups.get(mlsGroupID: $0.bytes) }.map { try LoadedGroup($0) } }
            pendingIDs = []
            let active = targets.filter { $0.row.state.isReadable && !fetchedFor.contains($0.row.nostrGroupID) }
            guard !active.isEmpty else { break }
            var urls = try relays()
            for group in active { for url in relayURLs(for: group.group, ours: urls) where !urls.contains(url) { urls.append(url) } }
            let since = active.map(\.row.syncSince).min().map { max(0, $0 - Self.groupEventMargin) }
            let filter = Filter(kinds: [MarmotKind.groupEvent], since: since, tags: ["h": active.map { Hex.encode($0.row.nostrGroupID) }])
            for group in active { fetchedFor.insert(group.row.nostrGroupID) }
            pendingIDs = try await catchUp(filter, from: urls, timeout: timeout, report: &report)
        }
        await carryOutEffects(timeout: timeout, report: &report)
    }

    /// Carries out what the pipeline asked for, once the groups are caught up: the commits we
    /// owe for received proposals, then our lost changes applied again. These make commits
    /// without catching up again (the groups were just brought up to date), so nothing here
    /// leads back into a sync.
    func carryOutEffects(timeout: Duration, report: inout SyncReport) async {
        let effects = report.effects
        report.effects = []
        var owed: [MLSGroupID] = []
        for case .commitOwed(let id) in effects where !owed.contains(id) { owed.append(id) }
        await commitOwedProposals(owed, timeout: timeout, report: &report)
        await retryLostIntents(timeout: timeout, report: &report)
    }

    /// At most this many group events are fetched and handled at once while catching up.
    static let catchUpBatch = 1000

    /// Fetches and processes group events oldest first in time windows that hold at most
    /// `catchUpBatch` events (a window with more is halved), so a member back from weeks
    /// offline catches up on thousands of events in bounded memory, with progress on stderr.
    /// Held events carry over to the next window; what is still held at the end is reported.
    func catchUp(_ filter: Filter, from urls: [String], timeout: Duration, report: inout SyncReport) async throws -> [MLSGroupID] {
        let end = Self.now() + GroupEvent.defaultMaxFutureSkew
        var start = filter.since ?? 0
        var width = max(1, end - start + 1)
        var changed: [MLSGroupID] = []
        var held: [Event] = []
        var total = 0
        var windows = 0
        while start <= end {
            var window = filter
            window.since = start
            window.until = min(end, start + width - 1)
            // One more than a batch says "too many here": the window is halved and fetched again.
            window.limit = width > 1 ? Self.catchUpBatch + 1 : nil
            let events = try await gateway.fetchEvents(window, from: urls, timeout: timeout, leavingStragglers: true)
            if events.count > Self.catchUpBatch, width > 1 {
                width = max(1, width / 2)
                continue
            }
            largestCatchUpBatch = max(largestCatchUpBatch, events.count)
            let (windowChanged, stillHeld) = processGroupEvents(held + events, report: &report, keepHeld: true)
            for id in windowChanged where !changed.contains(id) { changed.append(id) }
            held = stillHeld
            total += events.count
            windows += 1
            if !events.isEmpty, windows > 1 || total >= Self.catchUpBatch {
                logger.info("catching up", metadata: ["group_events": "\(total)", "through": "\(window.until ?? end)"])
            }
            start = (window.until ?? end) + 1
            if events.count < Self.catchUpBatch / 4 { width = min(width * 2, max(1, end - start + 1)) }
        }
        if !held.isEmpty { processGroupEvents(held, report: &report) }
        return changed
    }

    /// Processes group events in created_at order (then id), holding those that cannot be
    /// placed yet and retrying them after every pass that changed an epoch. Returns the groups
    /// whose nostr_group_id changed (to fetch again under the new id).
    @discardableResult
    func processGroupEvents(_ events: [Event], report: inout SyncReport) -> [MLSGroupID] {
        let (changed, held) = processGroupEvents(events, report: &report, keepHeld: false)
        _ = held
        return changed
    }

    /// As above; with `keepHeld` the events still held are returned instead of reported (a live
    /// node retries them as more events arrive).
    func processGroupEvents(_ events: [Event], report: inout SyncReport, keepHeld: Bool) -> (changed: [MLSGroupID], held: [Event]) {
        var queue = events.sorted(by: BurrowNode.createdAtOrder)
        var changed: [MLSGroupID] = []
        var lastHold: [String: String] = [:]
        var preJoin = Set<EventID>()
        while true {
            var held: [Event] = []
            var progressed = false
            for event in queue {
                switch handleGroupEvent(event, report: &report) {
                case .done(_, let renamed):
                    progressed = true
                    if let renamed, !changed.contains(renamed) { changed.append(renamed) }
                case .hold(let reason, let beforeJoin):
                    held.append(event)
                    lastHold[event.id.hex] = reason
                    if beforeJoin { preJoin.insert(event.id) }
                case .skipped:
                    break
                }
            }
            guard progressed, !held.isEmpty else {
                if keepHeld { return (changed, held) }
                let stranded = Set(held.compactMap(BurrowNode.hTag)).intersection(report.tooOldGroups)
                for nostrID in stranded { markNeedsReAdd(nostrGroupIDHex: nostrID, report: &report) }
                for event in held {
                    if preJoin.contains(event.id) {
                        _ = try? store.transaction { try $0.processedEvents.mark(eventID: event.id.bytes, outcome: "sent before we joined") }
                    } else {
                        if let h = BurrowNode.hTag(event) { report.strandedGroups.insert(h) }
                        report.fail(event.id, "held: \(lastHold[event.id.hex] ?? "cannot be placed yet")")
                    }
                }
                break
            }
            queue = held
        }
        return (changed, [])
    }

    /// Runs kind-445 events (verified, as a relay delivers them) through the pipeline now, with
    /// no relay: what `sync` does with what it fetched, follow-up commits aside.
    public func receiveGroupEvents(_ events: [Event]) -> SyncReport {
        var report = SyncReport()
        processGroupEvents(events, report: &report)
        return report
    }

    /// One kind-445 event: the store's inputs, `GroupPipeline`'s decision, and what it says
    /// written back — one transaction.
    func handleGroupEvent(_ event: Event, report: inout SyncReport) -> GroupEventResult {
        let pipeline = GroupPipeline(now: Self.now())
        let now = pipeline.now
        var updates: [NodeUpdate] = []
        var newMessages = 0
        var effects: [GroupPipeline.Effect] = []
        var applied = false
        do {
            let result = try store.transaction { tx -> GroupEventResult in
                let processed = try tx.processedEvents.contains(eventID: event.id.bytes)
                let decision = try pipeline.decide(event, alreadyProcessed: processed) { nostrGroupID in
                    try tx.groups.find(nostrGroupID: nostrGroupID.bytes).filter { $0.state != .declined }.map { row in
                        GroupPipeline.Candidate(group: try LoadedGroup(row, tx: tx), joinedAt: { try self.joinedAt(row, tx: tx) })
                    }
                }
                switch decision {
                case .skip:
                    return .skipped
                case .record(let outcome, let counted):
                    try tx.processedEvents.mark(eventID: event.id.bytes, outcome: outcome, at: now)
                    return counted ? .done(epochChanged: false, nostrGroupIDChanged: nil) : .skipped
                case .hold(let reason, let beforeJoin):
                    return .hold(reason, beforeJoin: beforeJoin)
                case .reject(let reason, let tooOld):
                    if tooOld { report.tooOldGroups.insert(BurrowNode.hTag(event) ?? "") }
                    throw PipelineRejection(reason)
                case .apply(var change):
                    if let (inner, epoch) = change.message {
                        let stored = StoredMessage(
                            mlsGroupID: change.group.row.mlsGroupID, id: inner.rumor.id.bytes, eventID: event.id.bytes,
                            sender: inner.sender.bytes, kind: inner.rumor.kind, createdAt: inner.rumor.createdAt,
                            content: inner.rumor.content, rumorJSON: inner.rumor.jsonString, epoch: Int64(clamping: epoch), receivedAt: now,
                            generation: Int64(inner.generation ?? 0))
                        if try tx.messages.insert(stored) {
                            newMessages += 1
                            if case .chat(.nickname(let nickname))? = try? inner.content(), !nickname.value.isEmpty {
                                try tx.memberNames.set(pubkey: inner.sender.bytes, mlsGroupID: stored.mlsGroupID, name: nickname.value, at: now)
                            }
                            let view = try messageView(stored, tx: tx)
                            updates.append(.message(view))
                            if let payload = view.location {
                                updates += locationUpdates(payload, view: view, group: change.group, tx: tx)
                            }
                        }
                    }
                    try change.group.save(tx)
                    try tx.processedEvents.mark(eventID: event.id.bytes, outcome: "processed", at: now)
                    // Our own commit lost the epoch: its intent is applied again after this sync.
                    for case .retryIntent(_, let lost) in change.effects { try tx.commitIntents.markLost(commitEventID: lost.bytes) }
                    effects = change.effects
                    applied = true
                    if change.epochChanged {
                        // Who came and went with this commit, for "Dave joined Family" lines.
                        updates.append(.group(try withMembershipChange(change.group.namedView(tx: tx),
                                                                       before: Set(change.membersBefore.map(\.hex)), tx: tx)))
                    }
                    return .done(epochChanged: change.epochChanged,
                                 nostrGroupIDChanged: change.nostrGroupIDChanged ? change.group.group.mlsGroupID : nil)
                }
            }
            Failpoint.groupEventProcessed.check()
            if case .done = result {
                report.processed += 1
                report.messages += newMessages
                if applied { report.applied.insert(event.id) }
                report.updates += updates
                for effect in effects where !report.effects.contains(effect) { report.effects.append(effect) }
            }
            return result
        } catch {
            let reason = (error as? PipelineRejection)?.reason ?? BurrowNode.describe(error)
            _ = try? store.transaction { try $0.processedEvents.mark(eventID: event.id.bytes, outcome: "rejected: \(reason)", at: now) }
            report.processed += 1
            report.fail(event.id, reason)
            return .done(epochChanged: false, nostrGroupIDChanged: nil)
        }
    }

    /// When we entered the group: the welcome's created_at for a joined group, else its creation.
    func joinedAt(_ row: StoredGroup, tx: StoreTransaction) throws -> Int64 {
        let invite = try tx.invites.list(state: .accepted).last { $0.mlsGroupID == row.mlsGroupID }
        if let invite, let rumor = try? Rumor(json: invite.rumorJSON) { return rumor.createdAt }
        return row.createdAt
    }

    /// The active groups holding a received proposal we owe a commit (after a crash between
    /// storing the proposal and committing it; a full `sync` looks once).
    func groupsOwingCommits() -> [MLSGroupID] {
        (try? store.transaction { tx in
            try tx.groups.list().filter { $0.state == .active }.map { try LoadedGroup($0) }
                .filter { !$0.group.owedProposals.isEmpty }.map(\.group.mlsGroupID)
        }) ?? []
    }

    /// Commits the proposals every member commits on receipt (SelfRemove; a legacy self-Remove
    /// when we are admin), as MDK does, in each of `ids` that still holds such proposals.
    func commitOwedProposals(_ ids: [MLSGroupID], timeout: Duration, report: inout SyncReport) async {
        for id in ids {
            guard let loaded = try? store.transaction({ try loadGroup(mlsGroupID: id, in: $0) }), loaded.row.state == .active,
                  !loaded.group.owedProposals.isEmpty else { continue }
            do {
                let view = try await commit(loaded.group.mlsGroupID, timeout: timeout) { group, now, rng in
                    try group.commitOwedProposals(now: now, using: &rng)
                }
                report.updates.append(.group(view))
            } catch {
                logger.warning("could not commit a received proposal", metadata: ["error": "\(BurrowNode.describe(error))"])
            }
        }
    }

    /// Applies again, on top of the winning branch, what our commits that lost a race meant to
    /// do — what still applies: members not yet added, still to remove, a name not yet set.
    func retryLostIntents(timeout: Duration, report: inout SyncReport) async {
        guard let entries = try? store.transaction({ try $0.commitIntents.lost() }) else { return }
        for entry in entries {
            _ = try? store.transaction { try $0.commitIntents.delete(commitEventID: entry.commitEventID) }
            let id = MLSGroupID(entry.mlsGroupID)
            guard let intent = CommitIntent(json: entry.intent),
                  let current = try? store.transaction({ try loadGroup(mlsGroupID: id, in: $0) }),
                  current.row.state == .active, current.group.isAdmin(publicKey) else { continue }
            let members = Set(current.group.members)
            do {
                let view: GroupView?
                switch intent {
                case .add(let keys):
                    let missing = keys.filter { !members.contains($0) }
                    view = missing.isEmpty ? nil : try await addMembers(caughtUp: id, keys: missing, timeout: timeout)
                case .remove(let keys):
                    let present = keys.filter { members.contains($0) }
                    view = present.isEmpty ? nil : try await removeMembers(caughtUp: id, keys: present, timeout: timeout)
                case .rename(let name, let description):
                    let data = current.group.data
                    view = (name ?? data.name) == data.name && (description ?? data.description) == data.description ? nil
                        : try await updateGroup(caughtUp: id, name: name, description: description, timeout: timeout)
                case .admins(let add, let remove):
                    let admins = Set(current.group.admins)
                    let todo = add.contains { !admins.contains($0) } || remove.contains { admins.contains($0) }
                    view = todo ? try await changeAdmins(caughtUp: id, add: add.filter(members.contains), remove: remove, timeout: timeout) : nil
                }
                if let view { report.updates.append(.group(view)) }
                logger.info("re-applied a change whose commit lost its epoch", metadata: ["change": "\(intent.kind)"])
            } catch {
                report.fail("", "could not re-apply a change (\(intent.kind)) whose commit lost its epoch: \(BurrowNode.describe(error))")
            }
        }
    }

    /// Forgets the intents of commits that can no longer lose (out of every group's snapshots).
    func pruneIntents() {
        _ = try? store.transaction { try $0.commitIntents.pruneSettled() }
    }

    /// Completes or clears our commits that were stored but never confirmed (a crash between
    /// storing, publishing and merging): a commit the relays hold is merged and its welcomes
    /// then go out; one they do not hold is cleared with its welcomes. Unreachable relays leave
    /// it for the next attempt.
    func recoverPendingCommits(timeout: Duration) async {
        guard let entries = try? store.transaction({ try $0.outbox.pending(purpose: .commit) }) else { return }
        for entry in entries {
            guard let id = entry.mlsGroupID, let event = try? UnverifiedEvent(json: entry.json).verified() else { continue }
            let held: Bool
            do {
                held = try await !gateway.fetchEvents(Filter(ids: [event.id]), from: entry.relays, timeout: timeout).isEmpty
            } catch {
                logger.warning("cannot ask the relays about an unconfirmed commit yet", metadata: ["event": "\(event.id.hex)"])
                continue
            }
            do {
                try store.transaction { tx in
                    var loaded = try loadGroup(mlsGroupID: MLSGroupID(id), in: tx)
                    let pending = loaded.group.mls.pendingCommit.map { $0.commit.tlsSerialized }
                    let isThisCommit = pending != nil && (try? GroupEvent.validate(event, now: event.createdAt)
                        .decrypt(using: loaded.group.exporterSecrets()).messageBytes) == pending
                    if held {
                        if isThisCommit {
                            let summary = try loaded.group.mergePendingCommit(published: event)
                            if summary.removedSelf { loaded.row.state = .left }
                            loaded.row.syncSince = max(loaded.row.syncSince, event.createdAt)
                            try loaded.save(tx)
                        }
                        try tx.outbox.setState(eventID: event.id.bytes, .sent)
                    } else {
                        if isThisCommit {
                            loaded.group.clearPendingCommit()
                            try loaded.save(tx)
                        }
                        try tx.outbox.setState(eventID: event.id.bytes, .failed)
                        try tx.outbox.failDependents(of: event.id.bytes)
                    }
                }
                logger.info(held ? "completed an unconfirmed commit" : "cleared an unpublished commit", metadata: ["event": "\(event.id.hex)"])
            } catch {
                logger.warning("could not settle an unconfirmed commit", metadata: ["error": "\(BurrowNode.describe(error))"])
            }
        }
    }

    /// A member whose missed commits fell out of the 45-day window can never catch up: it is
    /// told so plainly, and its group shows the state `stale` until an admin re-adds it.
    func markNeedsReAdd(nostrGroupIDHex: String, report: inout SyncReport) {
        guard let id = try? Hex.decode(nostrGroupIDHex, length: 32),
              let rows = try? store.transaction({ try $0.groups.find(nostrGroupID: id) }) else { return }
        for row in rows where row.state.isReadable {
            _ = try? store.transaction { try $0.settings.set(Settings.needsReAdd(MLSGroupID(row.mlsGroupID)), "1") }
            report.fail("", "group \(Hex.encode(row.mlsGroupID)): offline past the 45-day event window, commits were missed for good; "
                        + "ask an admin to remove and re-add you")
        }
    }

    /// Group events are fetched from a margin before the newest one handled.
    static let groupEventMargin: Int64 = 2 * 24 * 60 * 60

    enum GroupEventResult {
        case done(epochChanged: Bool, nostrGroupIDChanged: MLSGroupID?)
        /// Not placeable yet. `beforeJoin`: it predates our welcome, so if no later epoch change
        /// opens it, it was sent in an epoch before ours (e.g. the commit that added us).
        case hold(String, beforeJoin: Bool)
        case skipped
    }
}
