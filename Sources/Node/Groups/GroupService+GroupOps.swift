import Foundation
import MLS
import Marmot
import Nostr
import RelayClient
import Store

/// Group lifecycle: create, add, remove, rename, admins, self-update, leave.
///
/// Every commit follows MIP-02's order: the new state (with the pending commit) and the signed
/// events are stored first; then the commit is published; only after a relay accepted it is
/// it merged and are the welcomes sent. If no relay accepts it, it is cleared.
extension GroupService {
    /// Creates a group with us as admin (plus `admins`), inviting `invitees`: their KeyPackages
    /// are fetched, the creation commit is merged locally (never published) and each invitee
    /// gets a welcome on their inbox relays and ours.
    public func createGroup(name: String, description: String, invitees: [PublicKey], admins: [PublicKey],
                            timeout: Duration) async throws -> GroupView {
        let ours = try relays()
        guard !ours.isEmpty else { throw NodeError.invalidInput("no relays configured: add one with `burrow relay add URL`") }
        for admin in admins where admin != publicKey && !invitees.contains(admin) {
            throw NodeError.invalidInput("admin \(admin.hex) is not invited")
        }
        var fetched: [InviteeKeyPackage] = []
        for invitee in unique(invitees) where invitee != publicKey {
            fetched.append(try await fetchKeyPackage(for: invitee, timeout: timeout))
        }
        var rng = SystemRandomNumberGenerator()
        let now = Self.now()
        let (group, welcomes) = try MarmotGroup.create(
            creator: publicKey, name: name, description: description, admins: unique([publicKey] + admins),
            relays: try ours.map(BurrowNode.relayURL), invitees: fetched.map(\.keyPackage), now: now, using: &rng)
        let wraps = try giftWraps(welcomes, inbox: Self.inboxes(fetched), ours: ours, now: now, using: &rng)
        var loaded = LoadedGroup(row: StoredGroup(
            mlsGroupID: group.mlsGroupID.bytes, nostrGroupID: group.nostrGroupID.bytes, state: .active, mlsState: [], createdAt: now,
            lastSelfUpdate: now, syncSince: now), group: group)
        try store.transaction { tx in
            try loaded.save(tx)
            for (wrap, urls) in wraps {
                try tx.outbox.insert(OutboxEntry(eventID: wrap.id.bytes, mlsGroupID: group.mlsGroupID.bytes, purpose: .welcome,
                                                 json: wrap.jsonString, relays: urls, createdAt: now))
            }
        }
        await gateway.flushOutbox(timeout: timeout)
        return await namingInvitees((try? store.transaction { try loaded.namedView(tx: $0) }) ?? loaded.view, invitees, timeout: timeout)
    }

    /// Adds members (admins only): fetch their KeyPackages, commit, publish, merge, welcome.
    public func addMembers(_ groupText: String, keys invitees: [PublicKey], timeout: Duration) async throws -> GroupView {
        let view = try await addMembers(caughtUp: try await catchUp(groupText, timeout: timeout), keys: invitees, timeout: timeout)
        return await namingInvitees(view, invitees, timeout: timeout)
    }

    /// `view` with the invitees' names: their profiles are fetched as their KeyPackages were,
    /// so the one who invites sees names, not keys (a short wait; keys when none came).
    func namingInvitees(_ view: GroupView, _ invitees: [PublicKey], timeout: Duration) async -> GroupView {
        await profiles.fetchProfiles(of: invitees, timeout: ProfileService.profileWait(timeout))
        return profiles.withStoredNames(view, for: invitees.map(\.hex))
    }

    /// Adds members to a group just brought up to date.
    func addMembers(caughtUp id: MLSGroupID, keys invitees: [PublicKey], timeout: Duration) async throws -> GroupView {
        let current = try store.transaction { try loadGroup(mlsGroupID: id, in: $0) }
        guard current.group.isAdmin(publicKey) else { throw NodeError.notAdmin("only admins may add members") }
        let existing = Set(current.group.members)
        var fetched: [InviteeKeyPackage] = []
        for invitee in unique(invitees) {
            guard !existing.contains(invitee) else { throw NodeError.invalidInput("\(invitee.hex) is already a member") }
            fetched.append(try await fetchKeyPackage(for: invitee, timeout: timeout))
        }
        guard !fetched.isEmpty else { throw NodeError.invalidInput("name at least one key to add") }
        return try await commit(id, timeout: timeout, invitees: fetched, intent: .add(fetched.map(\.keyPackage.identity))) { group, now, rng in
            try group.addMembers(fetched.map(\.keyPackage), committer: self.publicKey, now: now, using: &rng)
        }
    }

    /// Removes members (admins only).
    public func removeMembers(_ groupText: String, keys: [PublicKey], timeout: Duration) async throws -> GroupView {
        try await removeMembers(caughtUp: try await catchUp(groupText, timeout: timeout), keys: keys, timeout: timeout)
    }

    func removeMembers(caughtUp id: MLSGroupID, keys: [PublicKey], timeout: Duration) async throws -> GroupView {
        try await commit(id, timeout: timeout, intent: .remove(unique(keys))) { group, now, rng in
            try group.removeMembers(self.unique(keys), committer: self.publicKey, now: now, using: &rng)
        }
    }

    /// Renames the group and/or changes its description (admins only).
    public func updateGroup(_ groupText: String, name: String?, description: String?, timeout: Duration) async throws -> GroupView {
        try await updateGroup(caughtUp: try await catchUp(groupText, timeout: timeout), name: name, description: description, timeout: timeout)
    }

    func updateGroup(caughtUp id: MLSGroupID, name: String?, description: String?, timeout: Duration) async throws -> GroupView {
        try await commit(id, timeout: timeout, intent: .rename(name: name, description: description)) { group, now, rng in
            var data = group.data
            if let name { data.name = name }
            if let description { data.description = description }
            return try group.updateData(data, committer: self.publicKey, now: now, using: &rng)
        }
    }

    /// Adds and removes admins (admins only; every admin must be a member; never zero admins).
    public func changeAdmins(_ groupText: String, add: [PublicKey], remove: [PublicKey], timeout: Duration) async throws -> GroupView {
        try await changeAdmins(caughtUp: try await catchUp(groupText, timeout: timeout), add: add, remove: remove, timeout: timeout)
    }

    func changeAdmins(caughtUp id: MLSGroupID, add: [PublicKey], remove: [PublicKey], timeout: Duration) async throws -> GroupView {
        try await commit(id, timeout: timeout, intent: .admins(add: add, remove: remove)) { group, now, rng in
            let members = Set(group.members)
            for key in add where !members.contains(key) { throw NodeError.invalidInput("\(key.hex) is not a member") }
            var admins = Set(group.admins)
            admins.formUnion(add)
            admins.subtract(remove)
            guard !admins.isEmpty else { throw NodeError.lastAdmin("the group would have no admin") }
            var data = group.data
            data.admins = admins.map(\.bytes)
            return try group.updateData(data, committer: self.publicKey, now: now, using: &rng)
        }
    }

    /// Changes the group's relays (admins only; at least one must remain). Members follow the
    /// new list from the next sync; the node resubscribes.
    public func changeRelays(_ groupText: String, add: [String], remove: [String], timeout: Duration) async throws -> GroupView {
        let adds = try add.map(BurrowNode.relayURL)
        let removes = try remove.map(BurrowNode.relayURL)
        let id = try await catchUp(groupText, timeout: timeout)
        return try await commit(id, timeout: timeout) { group, now, rng in
            var relays = group.data.relays.filter { !removes.contains($0) }
            for url in adds where !relays.contains(url) { relays.append(url) }
            guard !relays.isEmpty else { throw NodeError.invalidInput("a group needs at least one relay") }
            var data = group.data
            data.relays = relays
            return try group.updateData(data, committer: self.publicKey, now: now, using: &rng)
        }
    }

    /// Refreshes our leaf with a new signature key (any member may).
    public func selfUpdate(_ groupText: String, timeout: Duration) async throws -> GroupView {
        let id = try await catchUp(groupText, timeout: timeout)
        let view = try await commit(id, timeout: timeout) { group, now, rng in try group.selfUpdate(now: now, using: &rng) }
        try store.transaction { tx in
            var loaded = try loadGroup(mlsGroupID: id, in: tx)
            loaded.row.lastSelfUpdate = Self.now()
            try loaded.save(tx)
        }
        return view
    }

    /// Leaves: an admin first demotes itself (the last admin cannot leave), then a kind-2 leave
    /// request goes to the admins and the leave proposal (SelfRemove where the group requires
    /// it, else MDK's Remove of our own leaf). The group is `leaving` until a commit removes us.
    public func leave(_ groupText: String, timeout: Duration) async throws -> GroupView {
        let id = try await catchUp(groupText, timeout: timeout)
        let current = try store.transaction { try loadGroup(mlsGroupID: id, in: $0) }
        guard current.row.state.isReadable else {
            throw NodeError.invalidInput("the group is \(current.row.state.rawValue)")
        }
        if current.group.isAdmin(publicKey) {
            guard current.group.admins.count > 1 else {
                throw NodeError.lastAdmin("the last admin cannot leave: make another member admin first")
            }
            _ = try await commit(id, timeout: timeout) { group, now, rng in
                var data = group.data
                data.admins = group.admins.filter { $0 != self.publicKey }.map(\.bytes)
                return try group.updateData(data, committer: self.publicKey, now: now, using: &rng)
            }
        }
        _ = try await send(id, rumor: { try InnerEvent.leaveRequest(author: self.publicKey, createdAt: $0) }, timeout: timeout)
        var rng = SystemRandomNumberGenerator()
        let now = Self.now()
        let ours = try relays()
        let (event, urls) = try store.transaction { tx -> (Event, [String]) in
            var loaded = try loadGroup(mlsGroupID: id, in: tx)
            let event = try loaded.group.leaveProposal(now: now, using: &rng)
            loaded.row.state = .leaving
            try loaded.save(tx)
            let urls = relayURLs(for: loaded.group, ours: ours)
            try tx.processedEvents.mark(eventID: event.id.bytes, outcome: "own proposal", at: now)
            try tx.outbox.insert(OutboxEntry(eventID: event.id.bytes, mlsGroupID: id.bytes, purpose: .proposal, json: event.jsonString,
                                             relays: urls, createdAt: now))
            return (event, urls)
        }
        Failpoint.messageStored.check()
        try await gateway.publishAccepted(event, to: urls, timeout: timeout)
        try store.transaction { try $0.outbox.setState(eventID: event.id.bytes, .sent) }
        return try store.transaction { try loadGroup(mlsGroupID: id, in: $0).namedView(tx: $0) }
    }

    // MARK: The commit flow

    /// A commit of ours stored pending with its welcomes queued behind it, not published yet.
    public struct StagedCommit: Sendable {
        public let mlsGroupID: MLSGroupID
        public let pending: MarmotGroup.PendingCommitEvent
        /// Where it is to be published.
        public let relays: [String]
        /// The welcomes' gift wraps, queued behind the commit (a nearby invite also hands its
        /// one wrap to the joiner over the mesh).
        public let welcomeWraps: [Event]
    }

    /// Makes a commit on the stored group, stores it pending with its welcomes, publishes it,
    /// merges it once a relay accepted it (clears it otherwise), then sends the welcomes.
    func commit(_ id: MLSGroupID, timeout: Duration, invitees: [InviteeKeyPackage] = [], intent: CommitIntent? = nil,
                _ make: (inout MarmotGroup, Int64, inout SystemRandomNumberGenerator) throws -> MarmotGroup.PendingCommitEvent)
        async throws -> GroupView
    {
        let staged = try stageCommit(id, inbox: Self.inboxes(invitees), intent: intent, make)
        Failpoint.commitStored.check()
        let results: [PublishResult]
        do { results = try await gateway.pool(staged.relays).publish(staged.pending.event, timeout: timeout) } catch {
            try clearCommit(staged)
            throw error
        }
        guard results.contains(where: \.accepted) else {
            // Only a refusal from every relay proves no relay holds the commit. A timeout or a
            // dropped connection may have lost just the OK while a relay stored it and others
            // apply it: then it stays pending like a commit interrupted by a crash, and the next
            // sync or catch-up asks the relays whether to merge or clear it.
            if results.allSatisfy({ $0.error == nil }) { try clearCommit(staged) }
            throw RelayGateway.publishFailure(results, eventID: staged.pending.event.id)
        }
        Failpoint.commitPublished.check()
        let view = try confirmCommit(staged)
        // Relays hold it, so it is safe to merge everywhere: members on the mesh get it too.
        await meshBridge.carryOnMesh(staged.pending.event)
        Failpoint.commitMerged.check()
        await gateway.flushOutbox(timeout: timeout)
        return view
    }

    /// The store half of committing, before anything is published: `make` commits on the
    /// stored group; its welcomes are gift-wrapped (to each invitee's `inbox` relays and ours)
    /// before anything is stored, then the group with its pending commit, the dedup record, the
    /// intent and the outbox entries (welcomes behind the commit) commit in one transaction.
    public func stageCommit(
        _ id: MLSGroupID, _ make: (inout MarmotGroup, Int64, inout SystemRandomNumberGenerator) throws -> MarmotGroup.PendingCommitEvent
    ) throws -> StagedCommit {
        try stageCommit(id, inbox: [:], intent: nil, make)
    }

    func stageCommit(
        _ id: MLSGroupID, inbox: [PublicKey: [String]], intent: CommitIntent?,
        _ make: (inout MarmotGroup, Int64, inout SystemRandomNumberGenerator) throws -> MarmotGroup.PendingCommitEvent
    ) throws -> StagedCommit {
        var rng = SystemRandomNumberGenerator()
        let now = Self.now()
        let ours = try relays()
        return try store.transaction { tx -> StagedCommit in
            var loaded = try loadGroup(mlsGroupID: id, in: tx)
            guard loaded.row.state.isReadable else {
                throw NodeError.invalidInput("the group is \(loaded.row.state.rawValue)")
            }
            let pending: MarmotGroup.PendingCommitEvent
            do { pending = try make(&loaded.group, now, &rng) } catch let error as MarmotError {
                throw Self.nodeError(error)
            }
            // Wrapped before anything is stored: a welcome too big for a gift wrap fails here.
            let wraps = try giftWraps(pending.welcomes, inbox: inbox, ours: ours, now: now, using: &rng)
            try loaded.save(tx)
            let urls = relayURLs(for: loaded.group, ours: ours)
            try tx.processedEvents.mark(eventID: pending.event.id.bytes, outcome: "own commit", at: now)
            if let intent {
                try tx.commitIntents.record(StoredCommitIntent(commitEventID: pending.event.id.bytes, mlsGroupID: id.bytes, intent: intent.json,
                                                               createdAt: now))
            }
            try tx.outbox.insert(OutboxEntry(eventID: pending.event.id.bytes, mlsGroupID: id.bytes, purpose: .commit,
                                             json: pending.event.jsonString, relays: urls, createdAt: now))
            for (wrap, wrapURLs) in wraps {
                try tx.outbox.insert(OutboxEntry(eventID: wrap.id.bytes, mlsGroupID: id.bytes, purpose: .welcome, json: wrap.jsonString,
                                                 relays: wrapURLs, afterEvent: pending.event.id.bytes, createdAt: now))
            }
            return StagedCommit(mlsGroupID: id, pending: pending, relays: urls, welcomeWraps: wraps.map(\.0))
        }
    }

    /// A relay accepted the staged commit: the group moves to its epoch and the outbox entry is
    /// sent (its welcomes may go).
    @discardableResult
    public func confirmCommit(_ staged: StagedCommit) throws -> GroupView {
        try store.transaction { tx -> GroupView in
            var loaded = try loadGroup(mlsGroupID: staged.mlsGroupID, in: tx)
            let before = Set(loaded.group.members.map(\.hex))
            if loaded.group.mls.pendingCommit != nil {
                let summary = try loaded.group.mergePendingCommit(published: staged.pending.event)
                if summary.removedSelf { loaded.row.state = .left }
            }
            loaded.row.syncSince = max(loaded.row.syncSince, staged.pending.event.createdAt)
            try loaded.save(tx)
            try tx.outbox.setState(eventID: staged.pending.event.id.bytes, .sent)
            return try withMembershipChange(loaded.namedView(tx: tx), before: before, tx: tx)
        }
    }

    /// `view` with who joined and who left since `before` (hex keys), named where we can.
    func withMembershipChange(_ view: GroupView, before: Set<String>, tx: StoreTransaction) throws -> GroupView {
        var view = view
        let after = Set(view.members)
        view.joined = after.subtracting(before).sorted()
        view.left = before.subtracting(after).sorted()
        let id = try Hex.decode(view.mlsGroupID)
        for key in view.left { view.memberNames[key] = try tx.memberNames.name(pubkey: try Hex.decode(key), mlsGroupID: id) }
        return view
    }

    /// Every relay refused the staged commit: it is dropped with its welcomes.
    func clearCommit(_ staged: StagedCommit) throws {
        try store.transaction { tx in
            var loaded = try loadGroup(mlsGroupID: staged.mlsGroupID, in: tx)
            loaded.group.clearPendingCommit()
            try loaded.save(tx)
            try tx.outbox.setState(eventID: staged.pending.event.id.bytes, .failed)
            try tx.outbox.failDependents(of: staged.pending.event.id.bytes)
        }
    }

    /// Each invitee's inbox relays (kind 10050), by key.
    static func inboxes(_ invitees: [InviteeKeyPackage]) -> [PublicKey: [String]] {
        Dictionary(invitees.map { ($0.keyPackage.identity, $0.inbox) }, uniquingKeysWith: { first, _ in first })
    }

    /// Gift-wraps each welcome rumor to its invitee, for their inbox relays and ours.
    func giftWraps(_ welcomes: [MarmotGroup.OutgoingWelcome], inbox: [PublicKey: [String]], ours: [String], now: Int64,
                   using rng: inout SystemRandomNumberGenerator) throws -> [(Event, [String])] {
        return try welcomes.map { welcome in
            let wrap: Event
            do {
                wrap = try GiftWrap.wrap(rumor: welcome.rumor, sender: keys, recipient: welcome.recipient, now: now, rng: &rng)
            } catch let error as NostrError {
                if case .nip44PlaintextLength = error {
                    throw NodeError.welcomeTooLarge("the welcome for \(welcome.recipient.hex) does not fit a gift wrap (\(welcome.rumor.jsonBytes.count)-byte rumor)")
                }
                throw error
            }
            var urls = inbox[welcome.recipient] ?? []
            for url in ours where !urls.contains(url) { urls.append(url) }
            return (wrap, urls)
        }
    }

    static func nodeError(_ error: MarmotError) -> Error {
        switch error {
        case .notAdmin: return NodeError.notAdmin("only admins may do this")
        case .lastAdmin: return NodeError.lastAdmin("the group would have no admin")
        case .notAMember(let key): return NodeError.invalidInput("\(key) is not a member")
        default: return error
        }
    }
}
