import Crypto
import MLS
import Nostr

/// One member's Marmot group: the MLS group, its Nostr Group Data (0xF2EE) and snapshots of
/// the states before the commits that started the last five epochs, so a competing commit of
/// any of those epochs that wins MDK's race rule can take its place (rolling back as far as
/// needed).
///
/// Sans-I/O like `MLSGroup`: the clock and randomness come in, events go out. Every mutating
/// call either succeeds or throws and leaves the value as it was. Persist the value (and the
/// outgoing event's pending state) before anything it produced is published.
public struct MarmotGroup: Sendable {
    public private(set) var mls: MLSGroup
    public private(set) var data: NostrGroupData
    /// Oldest first; the last is the state before the commit that started the current epoch.
    public private(set) var snapshots: [RollbackPoint]
    /// MDK's `epoch_snapshot_retention`.
    public static let snapshotRetention = 5

    /// The group as it was before a commit was applied, that commit's order and the SHA-256 of
    /// its MLS bytes (the same ciphertext re-wrapped in another event is not a competitor).
    public struct RollbackPoint: Sendable {
        public let state: MLSGroup
        public let order: CommitOrder
        public let digest: [UInt8]

        public init(state: MLSGroup, order: CommitOrder, digest: [UInt8]) {
            self.state = state
            self.order = order
            self.digest = digest
        }

        public static func digest(of messageBytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: messageBytes)) }
    }

    /// A commit of ours waiting to be published; the Welcome rumors go out only after a relay
    /// accepted `event` and the commit was merged.
    public struct PendingCommitEvent: Sendable {
        public let event: Event
        public let welcomes: [OutgoingWelcome]
        public let summary: CommitSummary
    }

    /// A Welcome rumor for one invitee, to gift-wrap to `recipient`.
    public struct OutgoingWelcome: Sendable {
        public let recipient: PublicKey
        public let rumor: Rumor
    }

    /// Restores a stored group.
    public init(mls: MLSGroup, snapshots: [RollbackPoint] = []) throws {
        guard let data = try NostrGroupData(extensions: mls.extensions) else { throw MarmotError.groupDataMissing }
        self.mls = mls
        self.data = data
        self.snapshots = Array(snapshots.suffix(Self.snapshotRetention))
    }

    /// MDK's snapshot TTL: snapshots of commits older than a week are dropped (a competing
    /// commit that late would be refused as too old anyway on most members).
    public static let snapshotTTL: Int64 = 7 * 24 * 60 * 60

    /// Forgets snapshots of commits made before `time` (their secrets go with them).
    public mutating func dropSnapshots(committedBefore time: Int64) {
        snapshots.removeAll { $0.order.createdAt < time }
    }

    /// Moves to `next` (the epoch a commit started), keeping the current state, without any
    /// pending commit of ours, as the snapshot to roll back to.
    private mutating func advance(to next: MLSGroup, order: CommitOrder, digest: [UInt8]) throws {
        let nextData = try NostrGroupData(extensions: next.extensions) ?? data
        var before = mls
        before.clearPendingCommit()
        mls = next
        data = nextData
        record(RollbackPoint(state: before, order: order, digest: digest))
    }

    private mutating func record(_ point: RollbackPoint) {
        snapshots.append(point)
        if snapshots.count > Self.snapshotRetention { snapshots.removeFirst(snapshots.count - Self.snapshotRetention) }
    }

    // MARK: Reading

    public var nostrGroupID: NostrGroupID { NostrGroupID(data.nostrGroupID) }
    public var mlsGroupID: MLSGroupID { MLSGroupID(mls.groupID) }
    public var epoch: UInt64 { mls.epoch }
    public var isActive: Bool { mls.isActive }

    /// Member identities in leaf order.
    public var members: [PublicKey] { mls.members.compactMap { $0.identity.flatMap { try? PublicKey(bytes: $0) } } }

    /// Admins that are still members (MDK prunes its list the same way).
    public var admins: [PublicKey] {
        let present = Set(mls.members.compactMap(\.identity))
        return data.admins.filter { present.contains($0) }.compactMap { try? PublicKey(bytes: $0) }
    }

    public func isAdmin(_ key: PublicKey) -> Bool { admins.contains(key) }

    /// Whether the group's RequiredCapabilities name SelfRemove (then leaving uses it).
    public var requiresSelfRemove: Bool { mls.extensions.requiredCapabilities?.proposalTypes.contains(.selfRemove) ?? false }

    public var ownIdentity: PublicKey? {
        mls.member(at: mls.ownLeafIndex)?.identity.flatMap { try? PublicKey(bytes: $0) }
    }

    // MARK: Creating and joining

    /// Creates a group as MDK's `create_group` does: our leaf, 0xF2EE and the LCD
    /// RequiredCapabilities, then — with invitees — the creation commit merged locally (never
    /// published) and one Welcome rumor per invitee.
    public static func create(
        creator: PublicKey, name: String, description: String, admins: [PublicKey], relays: [RelayURL],
        invitees: [VerifiedKeyPackageEvent], now: Int64, using rng: inout some RandomNumberGenerator
    ) throws -> (group: MarmotGroup, welcomes: [OutgoingWelcome]) {
        return try MarmotError.wrappingMLS {
            var adminKeys = admins.map(\.bytes)
            if adminKeys.isEmpty { adminKeys = [creator.bytes] }
            let data = NostrGroupData(name: name, description: description, admins: adminKeys, relays: relays, using: &rng)
            let extensions = try MarmotProfile.groupContextExtensions(
                data: data, required: MarmotProfile.requiredCapabilities(invitees: invitees))
            var mls = try MLSGroup.create(
                groupID: rng.randomBytes(16), credential: MarmotProfile.credential(for: creator),
                signer: SignaturePrivateKey.generate(using: &rng), capabilities: MarmotProfile.capabilities,
                lifetime: .standard(from: UInt64(max(0, now))), groupContextExtensions: extensions,
                configuration: MarmotProfile.configuration, using: &rng)
            guard !invitees.isEmpty else { return (try MarmotGroup(mls: mls), []) }
            let output = try mls.addMembers(invitees.map(\.keyPackage), using: &rng)
            try MemberIdentities.requireUnique(after: output.summary, members: mls.members)
            try mls.mergePendingCommit()
            let group = try MarmotGroup(mls: mls)
            let welcomes = try group.welcomeRumors(output, invitees: invitees, committer: creator, now: now)
            return (group, welcomes)
        }
    }

    /// Joins from a verified Welcome rumor with the KeyPackage it names. The group must carry
    /// Nostr Group Data, one leaf per identity, and the rumor's author (whose key signed the
    /// seal) must be the member who signed the GroupInfo and an admin: the inviter vouches
    /// for the group, and only an admin can have added us.
    public static func join(welcome: VerifiedWelcomeRumor, keyPackage: KeyPackageBundle) throws -> MarmotGroup {
        return try MarmotError.wrappingMLS {
            let processed = try ProcessedWelcome(welcome: welcome.welcome, keyPackage: keyPackage)
            let group = try MarmotGroup(mls: MLSGroup.join(processed, configuration: MarmotProfile.configuration))
            try MemberIdentities.requireUnique(group.mls.members)
            // The GroupInfo signature was verified by the join, under this leaf's key.
            let signer = LeafIndex(processed.unverifiedGroupInfo.signer)
            guard group.mls.member(at: signer)?.identity == welcome.inviter.bytes else {
                throw MarmotError.welcomeInviterMismatch("the welcome's author is not the member who signed its GroupInfo")
            }
            guard group.data.admins.contains(welcome.inviter.bytes) else {
                throw MarmotError.welcomeInviterMismatch("the welcome's author is not an admin of the group")
            }
            return group
        }
    }

    // MARK: Incoming group events

    /// The exporter secrets a kind-445 event may be encrypted with: the current epoch's, then
    /// up to five past epochs', newest first.
    public func exporterSecrets() throws -> [Secret] {
        return try MarmotError.wrappingMLS {
            try mls.retainedEpochs.sorted(by: >).prefix(GroupEvent.pastEpochLookback + 1).map {
                try mls.exporter(label: GroupEvent.exporterLabel, context: GroupEvent.exporterContext,
                                 length: GroupEvent.exporterSecretLength, epoch: $0)
            }
        }
    }

    public func decrypt(_ event: ValidatedGroupEvent) throws -> DecryptedGroupEvent {
        try event.decrypt(using: exporterSecrets())
    }

    /// Processes a decrypted group event: an application message (its inner event checked
    /// against the MLS sender), a proposal, or a commit (authorized by MDK's admin rules).
    ///
    /// A commit for an epoch already left replaces the applied one when it is earlier by MDK's
    /// rule (rolling back); otherwise it is `.stale`. Anything for a later epoch, or a commit
    /// naming a proposal not received yet, is `.hold` (the caller keeps it until the events
    /// before it arrive); our own message coming back is `.ownEcho`. What cannot be accepted
    /// at all throws, and the group is unchanged whenever the outcome changes nothing.
    public mutating func process(_ event: DecryptedGroupEvent) throws -> GroupEventOutcome {
        try MarmotError.wrappingMLS { try processUnwrapped(event) }
    }

    private mutating func processUnwrapped(_ event: DecryptedGroupEvent) throws -> GroupEventOutcome {
        let framed = try ProtectedMessage(event.message)
        guard framed.groupID == mls.groupID else { throw MLSError.wrongGroupID }
        let time = UInt64(max(0, event.event.createdAt))
        let order = CommitOrder(event.event)

        let digest = RollbackPoint.digest(of: event.messageBytes)
        if framed.contentType == .commit, framed.epoch < mls.epoch {
            guard let index = snapshots.lastIndex(where: { $0.state.epoch == framed.epoch }) else { return .stale(epoch: framed.epoch) }
            let point = snapshots[index]
            guard point.digest != digest else { return .duplicate(epoch: framed.epoch) }
            guard order < point.order else { return .stale(epoch: framed.epoch) }
            var candidate = point.state
            candidate.clearPendingCommit()
            let base = try MarmotGroup(mls: candidate)
            guard let summary = try base.applyCommit(event.message, to: &candidate, time: time) else { return .hold(.unknownProposal) }
            self.mls = candidate
            self.data = try NostrGroupData(extensions: candidate.extensions) ?? data
            self.snapshots = Array(snapshots[..<index])
            record(RollbackPoint(state: base.mls, order: order, digest: digest))
            return .commit(summary, replaced: point.order)
        }
        if framed.epoch > mls.epoch { return .hold(.epochAhead(epoch: framed.epoch, current: mls.epoch)) }

        var next = mls
        if framed.contentType == .commit {
            guard let summary = try applyCommit(event.message, to: &next, time: time) else { return .hold(.unknownProposal) }
            try advance(to: next, order: order, digest: digest)
            return .commit(summary, replaced: nil)
        }
        let result: ProcessedMessage
        do { result = try next.process(event.message, at: time) } catch MLSError.ownMessage { return .ownEcho }
        switch result {
        case .application(let application):
            guard let identity = application.sender.identity else {
                throw MarmotError.commitNotAuthorized("the sender has no basic credential")
            }
            var inner = try InnerEvent.verify(applicationData: application.data, senderIdentity: identity)
            inner.generation = application.generation
            self.mls = next
            return .application(inner, epoch: application.epoch)
        case .proposal(let proposal):
            guard let sender = mls.member(at: proposal.sender) else { throw MLSError.blankLeaf(proposal.sender.value) }
            let outcome = classify(proposal, from: sender)
            // A proposal Marmot never acts on is not kept: no commit of ours may sweep it in,
            // and a commit of another member that names it is refused as unknown.
            if case .proposalIgnored = outcome { next.discardProposal(reference: proposal.reference) }
            self.mls = next
            return outcome
        case .commit(let summary):
            // Only our own pending commit echoed back reaches here (handled above otherwise).
            try advance(to: next, order: order, digest: digest)
            return .commit(summary, replaced: nil)
        }
    }

    /// Applies a commit of the current epoch to `group` if Marmot's rules allow it; nil when it
    /// names a proposal this member has not received (yet).
    private func applyCommit(_ message: MLSMessage, to group: inout MLSGroup, time: UInt64) throws -> CommitSummary? {
        let admins = data.admins
        let members = mls.members
        var refusal: Error?
        let processed: ProcessedMessage
        do {
            processed = try group.process(message, at: time) { summary in
                do {
                    try AdminPolicy.authorize(summary, admins: admins, members: members)
                    try MemberIdentities.requireUnique(after: summary, members: members)
                } catch {
                    refusal = error
                    throw error
                }
            }
        } catch MLSError.unknownProposalReference {
            return nil
        } catch {
            // Marmot's own refusal, not MLS's wrapping of it.
            throw refusal ?? error
        }
        guard case .commit(let summary) = processed else { throw MLSError.invalidCommit("not a commit") }
        return summary
    }

    /// MDK's proposal rules: every member commits a SelfRemove from a non-admin; a legacy
    /// Remove of the proposer itself (a non-admin) is committed by admins and kept by the
    /// others for an admin's commit; everything else is ignored.
    private func classify(_ proposal: StoredProposal, from sender: Member) -> GroupEventOutcome {
        switch Self.owedCommit(of: proposal, senderIsAdmin: isAdmin(identity: sender.identity), weAreAdmin: isAdmin(identity: ownIdentity?.bytes)) {
        case .everyone, .admins(weAreAdmin: true):
            return .proposalToCommit(proposal, from: sender)
        case .admins(weAreAdmin: false):
            return .proposalKept(proposal, from: sender, reason: "a leave request for an admin to commit")
        case .nobody(let reason):
            return .proposalIgnored(proposal, from: sender, reason: reason)
        }
    }

    /// Who commits a received proposal under MDK's rules.
    private enum ProposalCommitter {
        case everyone
        case admins(weAreAdmin: Bool)
        case nobody(String)
    }

    private static func owedCommit(of proposal: StoredProposal, senderIsAdmin: Bool, weAreAdmin: Bool) -> ProposalCommitter {
        switch proposal.proposal {
        case .selfRemove:
            return senderIsAdmin ? .nobody("SelfRemove from an admin is ignored") : .everyone
        case .remove(let remove) where remove.removed == proposal.sender.value:
            return senderIsAdmin ? .nobody("a leave request from an admin is ignored (admins demote themselves first)")
                : .admins(weAreAdmin: weAreAdmin)
        default:
            return .nobody("proposal type ignored by Marmot")
        }
    }

    private func isAdmin(identity: [UInt8]?) -> Bool { identity.map { data.admins.contains($0) } ?? false }

    /// The received proposals this member must commit now (MDK auto-commits them): SelfRemoves
    /// of non-admins, and legacy leave requests of non-admins when we are an admin.
    public var owedProposals: [StoredProposal] {
        guard isActive else { return [] }
        let weAreAdmin = isAdmin(identity: ownIdentity?.bytes)
        return mls.pendingProposals.filter { stored in
            guard stored.sender != mls.ownLeafIndex, let sender = mls.member(at: stored.sender) else { return false }
            switch Self.owedCommit(of: stored, senderIsAdmin: isAdmin(identity: sender.identity), weAreAdmin: weAreAdmin) {
            case .everyone, .admins(weAreAdmin: true): return true
            case .admins(weAreAdmin: false), .nobody: return false
            }
        }
    }

    // MARK: Outgoing

    /// Encrypts an inner event (a rumor authored by us) as a kind-445 event of the current epoch.
    public mutating func seal(_ rumor: Rumor, now: Int64, using rng: inout some RandomNumberGenerator) throws -> Event {
        return try MarmotError.wrappingMLS {
            guard mls.isActive else { throw MarmotError.groupInactive }
            var next = mls
            let message = try next.encryptApplicationMessage(rumor.jsonBytes, using: &rng)
            let event = try sealMessage(message, now: now, using: &rng)
            mls = next
            return event
        }
    }

    /// Adds members (admins only). The commit waits as pending until `mergePendingCommit`.
    public mutating func addMembers(_ keyPackages: [VerifiedKeyPackageEvent], committer: PublicKey, now: Int64,
                                    using rng: inout some RandomNumberGenerator) throws -> PendingCommitEvent {
        try requireAdmin(committer)
        for invitee in keyPackages where mls.members.contains(where: { $0.identity == invitee.identity.bytes }) {
            throw MarmotError.alreadyAMember(invitee.identity.hex)
        }
        return try commit(now: now, using: &rng) { group, rng in
            try group.commit(adding: keyPackages.map(\.keyPackage), storedProposals: .none, using: &rng)
        } welcomes: { output, group in
            try group.welcomeRumors(output, invitees: keyPackages, committer: committer, now: now)
        }
    }

    /// Removes members by identity (admins only).
    public mutating func removeMembers(_ keys: [PublicKey], committer: PublicKey, now: Int64,
                                       using rng: inout some RandomNumberGenerator) throws -> PendingCommitEvent {
        try requireAdmin(committer)
        let leaves = try keys.map { key -> LeafIndex in
            guard let member = mls.members.first(where: { $0.identity == key.bytes }) else { throw MarmotError.notAMember(key.hex) }
            return member.leafIndex
        }
        let remaining = admins.filter { !keys.contains($0) }
        guard !remaining.isEmpty else { throw MarmotError.lastAdmin }
        return try commit(now: now, using: &rng) { group, rng in try group.commit(removing: leaves, storedProposals: .none, using: &rng) }
    }

    /// Re-adds a member that lost its state (a node restored from a backup, issue 25): one
    /// commit removes its current leaf and adds its new KeyPackage, so the identity never holds
    /// two leaves and the backup's leaf is gone the moment the new one arrives (admins only).
    public mutating func reAddMember(_ keyPackage: VerifiedKeyPackageEvent, committer: PublicKey, now: Int64,
                                     using rng: inout some RandomNumberGenerator) throws -> PendingCommitEvent {
        try requireAdmin(committer)
        guard let member = mls.members.first(where: { $0.identity == keyPackage.identity.bytes }) else {
            throw MarmotError.notAMember(keyPackage.identity.hex)
        }
        guard member.leafIndex != mls.ownLeafIndex else { throw MarmotError.commitNotAuthorized("we cannot re-add ourselves") }
        return try commit(now: now, using: &rng) { group, rng in
            try group.commit(adding: [keyPackage.keyPackage], removing: [member.leafIndex], storedProposals: .none, using: &rng)
        } welcomes: { output, group in
            try group.welcomeRumors(output, invitees: [keyPackage], committer: committer, now: now)
        }
    }

    /// Replaces the Nostr Group Data (rename, description, admins, relays), keeping the
    /// RequiredCapabilities (admins only; never zero admins, every admin a member).
    public mutating func updateData(_ newData: NostrGroupData, committer: PublicKey, now: Int64,
                                    using rng: inout some RandomNumberGenerator) throws -> PendingCommitEvent {
        try requireAdmin(committer)
        let present = Set(mls.members.compactMap(\.identity))
        guard !newData.admins.isEmpty else { throw MarmotError.lastAdmin }
        for admin in newData.admins where !present.contains(admin) { throw MarmotError.notAMember(Hex.encode(admin)) }
        var extensions = mls.extensions
        extensions.set(try newData.groupContextExtension())
        return try commit(now: now, using: &rng) { group, rng in try group.updateGroupContextExtensions(extensions, using: &rng) }
    }

    /// Refreshes our leaf and path with a new signature key (MDK's `self_update`).
    public mutating func selfUpdate(now: Int64, using rng: inout some RandomNumberGenerator) throws -> PendingCommitEvent {
        return try MarmotError.wrappingMLS {
            let signer = try SignaturePrivateKey.generate(using: &rng)
            return try commit(now: now, using: &rng) { group, rng in try group.selfUpdate(newSigner: signer, using: &rng) }
        }
    }

    /// Commits the proposals this member owes (`owedProposals`) and nothing else.
    public mutating func commitOwedProposals(now: Int64, using rng: inout some RandomNumberGenerator) throws -> PendingCommitEvent {
        let owed = owedProposals.map(\.reference)
        guard !owed.isEmpty else { throw MarmotError.mls(.invalidCommit("no received proposal is owed a commit")) }
        return try commit(now: now, using: &rng) { group, rng in try group.commitProposals(owed, using: &rng) }
    }

    /// Our leave proposal: SelfRemove (a PublicMessage) where the group requires it, else MDK's
    /// legacy Remove of our own leaf. Admins must demote themselves first.
    public mutating func leaveProposal(now: Int64, using rng: inout some RandomNumberGenerator) throws -> Event {
        return try MarmotError.wrappingMLS {
            guard mls.isActive else { throw MarmotError.groupInactive }
            if let own = ownIdentity, isAdmin(own) { throw MarmotError.commitNotAuthorized("admins must demote themselves before leaving") }
            var next = mls
            let message: MLSMessage
            if requiresSelfRemove {
                message = try next.proposeSelfRemove(using: &rng)
            } else {
                message = try next.propose(.remove(RemoveProposal(removed: next.ownLeafIndex.value)), using: &rng)
            }
            let event = try sealMessage(message, now: now, using: &rng)
            mls = next
            return event
        }
    }

    /// Moves to the epoch of our pending commit once a relay accepted `event`.
    @discardableResult
    public mutating func mergePendingCommit(published event: Event) throws -> CommitSummary {
        return try MarmotError.wrappingMLS {
            let bytes = mls.pendingCommit?.commit.tlsSerialized ?? []
            var next = mls
            let summary = try next.mergePendingCommit()
            try advance(to: next, order: CommitOrder(event), digest: RollbackPoint.digest(of: bytes))
            return summary
        }
    }

    /// Drops our pending commit (publishing failed, or another commit took the epoch).
    public mutating func clearPendingCommit() { mls.clearPendingCommit() }

    // MARK: Helpers

    private func requireAdmin(_ committer: PublicKey) throws {
        guard mls.isActive else { throw MarmotError.groupInactive }
        guard isAdmin(committer) else { throw MarmotError.notAdmin }
    }

    private mutating func commit<R: RandomNumberGenerator>(
        now: Int64, using rng: inout R,
        _ make: (inout MLSGroup, inout R) throws -> CommitOutput,
        welcomes: ((CommitOutput, MarmotGroup) throws -> [OutgoingWelcome])? = nil
    ) throws -> PendingCommitEvent {
        return try MarmotError.wrappingMLS {
            guard mls.isActive else { throw MarmotError.groupInactive }
            var next = mls
            let output = try make(&next, &rng)
            // Never publish what the other members would refuse: they would stay behind and we
            // would be alone on our branch.
            try AdminPolicy.authorize(output.summary, admins: data.admins, members: mls.members)
            try MemberIdentities.requireUnique(after: output.summary, members: mls.members)
            let event = try sealMessage(output.commit, now: now, using: &rng)
            let rumors = try welcomes?(output, self) ?? []
            mls = next
            return PendingCommitEvent(event: event, welcomes: rumors, summary: output.summary)
        }
    }

    /// Seals an MLS message with the current epoch's exporter secret.
    private func sealMessage(_ message: MLSMessage, now: Int64, using rng: inout some RandomNumberGenerator) throws -> Event {
        let secret = try mls.exporter(label: GroupEvent.exporterLabel, context: GroupEvent.exporterContext,
                                      length: GroupEvent.exporterSecretLength)
        return try GroupEvent.seal(message: message, exporterSecret: secret, nostrGroupID: data.nostrGroupID, createdAt: now, rng: &rng)
    }

    private func welcomeRumors(_ output: CommitOutput, invitees: [VerifiedKeyPackageEvent], committer: PublicKey,
                               now: Int64) throws -> [OutgoingWelcome] {
        guard let welcome = output.welcome else { return [] }
        let message = MLSMessage(body: .welcome(welcome))
        return try invitees.map {
            OutgoingWelcome(recipient: $0.identity, rumor: try WelcomeRumor.build(
                welcome: message, keyPackageEventID: $0.event.id, relays: data.relays, committer: committer, createdAt: now))
        }
    }
}
