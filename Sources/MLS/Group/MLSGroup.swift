/// One member's view of an MLS group (RFC 9420): the state machine the Marmot layer drives.
///
/// A sans-I/O value: randomness and the clock are passed in, bytes come in and go out. Every
/// mutating call either succeeds completely or throws an `MLSError` (or a decoding error) and
/// leaves the group exactly as it was — an invalid or hostile message can cost a failed call,
/// never a corrupted state. Persist `serialized()` after every successful mutating call, and
/// before any produced message leaves the process (a crash must never reuse a ratchet key).
///
/// Lifecycle: `create` or `join`, then `process` incoming messages, `encrypt` application
/// data, and `commit…` changes, each commit waiting as pending until `mergePendingCommit`
/// (published) or `clearPendingCommit` (lost a race).
public struct MLSGroup: Sendable {
    var state: GroupEpochState
    /// Message secrets of recent past epochs, oldest first.
    var pastEpochs: [PastEpoch]
    /// Resumption PSKs of recent past epochs, by epoch.
    var resumptionPSKs: [UInt64: Secret]
    /// External PSKs this member knows, by PSK id.
    var externalPSKs: [[UInt8]: Secret]
    var pending: PendingCommit?
    public internal(set) var configuration: GroupConfiguration
    /// False once we were removed: only late application messages of kept epochs still decrypt.
    public internal(set) var isActive: Bool

    init(state: GroupEpochState, configuration: GroupConfiguration, externalPSKs: [[UInt8]: Secret] = [:]) {
        self.state = state
        self.pastEpochs = []
        self.resumptionPSKs = [:]
        self.externalPSKs = externalPSKs
        self.pending = nil
        self.configuration = configuration
        self.isActive = true
    }

    // MARK: Creating and joining

    /// Creates a one-member group at epoch 0 (RFC 9420 §11) with a fresh leaf for us.
    ///
    /// `groupContextExtensions` are carried as given (Marmot: 0xF2EE then
    /// `required_capabilities`); our `capabilities` must meet them. `lifetime` is our leaf's
    /// (key_package source, as OpenMLS creates it).
    public static func create(
        groupID: [UInt8], credential: Credential, signer: SignaturePrivateKey, capabilities: Capabilities = Capabilities(),
        lifetime: Lifetime, leafExtensions: Extensions = Extensions(), groupContextExtensions: Extensions = Extensions(),
        configuration: GroupConfiguration = .default, cipherSuite: CipherSuite = .mls128DHKEMX25519AES128GCMSHA256Ed25519,
        using rng: inout some RandomNumberGenerator
    ) throws -> MLSGroup {
        guard let cs = try? CipherSuiteProvider(cipherSuite) else {
            throw MLSError.invalidGroupParameters("unsupported cipher suite \(cipherSuite)")
        }
        do {
            try groupContextExtensions.validate(for: .groupContext)
            try leafExtensions.validate(for: .leafNode)
        } catch {
            throw MLSError.invalidGroupParameters("an extension is not allowed in a GroupContext or leaf node")
        }
        for ext in groupContextExtensions where !capabilities.supportsExtension(ext.extensionType) {
            throw MLSError.invalidGroupParameters("our capabilities lack GroupContext extension \(ext.extensionType)")
        }
        let leafPair = try cs.hpke.generateKeyPair(using: &rng)
        var leaf = LeafNode(encryptionKey: leafPair.publicKey.bytes, signatureKey: signer.publicKey.bytes, credential: credential,
                            capabilities: capabilities, source: .keyPackage(lifetime), extensions: leafExtensions)
        try leaf.sign(with: signer, suite: cs, position: nil)
        let tree = RatchetTree(creator: leaf)
        do {
            try tree.validateLeafNode(leaf, at: LeafIndex(0), groupID: groupID, suite: cs,
                                      requiredCapabilities: groupContextExtensions.requiredCapabilities)
        } catch {
            throw MLSError.invalidGroupParameters("our leaf does not meet the group's parameters: \(error)")
        }
        let context = GroupContext(cipherSuite: cipherSuite, groupID: groupID, epoch: 0, treeHash: tree.treeHash,
                                   confirmedTranscriptHash: [], extensions: groupContextExtensions)
        let joinerSecret = try KeySchedule.joinerSecret(cs, initSecret: KeySchedule.newGroupInitSecret(cs, using: &rng),
                                                        commitSecret: KeySchedule.zeroCommitSecret(cs), groupContext: context)
        let epochSecrets = try EpochSecrets(cs, joinerSecret: joinerSecret, pskSecret: nil, groupContext: context)
        let tag = epochSecrets.confirmationTag(confirmedTranscriptHash: [])
        let state = try GroupEpochState(
            tree: tree, groupContext: context,
            interimTranscriptHash: TranscriptHash.interim(cs, confirmedTranscriptHash: [], confirmationTag: tag),
            confirmationTag: tag, epochSecrets: epochSecrets,
            privateKeys: TreeKEMPrivateKeys(ownLeaf: LeafIndex(0), leafPrivateKey: leafPair.privateKey),
            signer: signer, configuration: configuration)
        return MLSGroup(state: state, configuration: configuration)
    }

    /// Joins from a Welcome addressed to one of our KeyPackages (RFC 9420 §12.4.3.1). The
    /// ratchet tree comes from the GroupInfo's extension (MDK always sends it) or
    /// `ratchetTree`. The KeyPackage's lifetime is not checked: it is ours.
    public static func join(welcome: Welcome, keyPackage: KeyPackageBundle, ratchetTree: UnverifiedRatchetTree? = nil,
                            externalPSKs: [[UInt8]: Secret] = [:], configuration: GroupConfiguration = .default) throws -> MLSGroup {
        try join(ProcessedWelcome(welcome: welcome, keyPackage: keyPackage, externalPSKs: externalPSKs), ratchetTree: ratchetTree,
                 externalPSKs: externalPSKs, configuration: configuration)
    }

    /// Joins from a Welcome already decrypted (after the user accepted the invitation).
    public static func join(_ welcome: ProcessedWelcome, ratchetTree: UnverifiedRatchetTree? = nil,
                            externalPSKs: [[UInt8]: Secret] = [:], configuration: GroupConfiguration = .default) throws -> MLSGroup {
        MLSGroup(state: try welcome.verifiedState(ratchetTree: ratchetTree, configuration: configuration),
                 configuration: configuration, externalPSKs: externalPSKs)
    }

    // MARK: Reading the group

    public var cipherSuite: CipherSuiteProvider { state.cipherSuite }
    public var groupID: [UInt8] { state.groupContext.groupID }
    public var epoch: UInt64 { state.epoch }
    public var groupContext: GroupContext { state.groupContext }
    /// The GroupContext extensions (Marmot's 0xF2EE data, `required_capabilities`, …).
    public var extensions: Extensions { state.groupContext.extensions }
    public var ownLeafIndex: LeafIndex { state.ownLeaf }
    /// The current ratchet tree (public data).
    public var ratchetTree: RatchetTree { state.tree }
    /// The members, by leaf index.
    public var members: [Member] { state.tree.members.map { Member(leafIndex: $0.index, leafNode: $0.leaf) } }
    public func member(at leaf: LeafIndex) -> Member? { state.member(leaf) }
    /// Our signature key (rotated by `selfUpdate(newSigner:)`).
    public var signer: SignaturePrivateKey { state.signer }
    /// `epoch_authenticator` (RFC 9420 §8.7): equal for every member of the epoch.
    public var epochAuthenticator: Secret { state.epochSecrets.epochAuthenticator }
    /// Proposals received in this epoch and not yet committed.
    public var pendingProposals: [StoredProposal] { state.proposals.entries }
    /// Our commit awaiting `mergePendingCommit` / `clearPendingCommit`, if any.
    public var pendingCommit: CommitOutput? {
        pending.map { CommitOutput(commit: $0.message, welcome: $0.welcome, groupInfo: $0.groupInfo, summary: $0.summary) }
    }
    /// The epochs whose application messages still decrypt, oldest first.
    public var retainedEpochs: [UInt64] { pastEpochs.map(\.epoch) + (isActive ? [epoch] : []) }

    /// `MLS-Exporter(label, context, length)` of the current epoch (RFC 9420 §8.5).
    public func exporter(label: String, context: [UInt8], length: Int) throws -> Secret {
        try state.epochSecrets.exporter(label: label, context: context, length: length)
    }

    /// `MLS-Exporter(label, context, length)` of `epoch`: the current one or a retained past
    /// one (Marmot decrypts a late kind-445 event with the key of the epoch it was sent in).
    public func exporter(label: String, context: [UInt8], length: Int, epoch: UInt64) throws -> Secret {
        if isActive, epoch == state.epoch { return try exporter(label: label, context: context, length: length) }
        guard let past = pastEpochs.first(where: { $0.epoch == epoch }) else {
            throw MLSError.epochUnavailable(epoch: epoch, current: state.epoch)
        }
        return try past.exporter(label: label, context: context, length: length)
    }

    /// The current epoch's GroupInfo, signed by us.
    public func groupInfo(includeRatchetTree: Bool = true) throws -> GroupInfo {
        try state.signedGroupInfo(includeRatchetTree: includeRatchetTree)
    }

    /// Makes an external PSK available to PreSharedKey proposals and commits.
    public mutating func addExternalPSK(id: [UInt8], secret: Secret) { externalPSKs[id] = secret }

    // MARK: Commits

    /// Creates a commit (RFC 9420 §12.4) adding, removing, changing extensions and/or
    /// injecting PSKs, plus the stored proposals `storedProposals` selects (by default every
    /// proposal received this epoch that can be committed, as OpenMLS does). The group moves
    /// to the new epoch only on `mergePendingCommit`.
    ///
    /// An UpdatePath is sent when the proposals require one, when `forcePath`, or with
    /// `newSigner` (our leaf's new signature key, which signs the GroupInfo; the commit itself
    /// is signed with the current key). `keyPackages` must have been validated against the
    /// caller's clock.
    public mutating func commit(
        adding keyPackages: [VerifiedKeyPackage] = [], removing leaves: [LeafIndex] = [],
        groupContextExtensions: Extensions? = nil, preSharedKeys: [PreSharedKeyID] = [],
        storedProposals: StoredProposalSelection = .all, forcePath: Bool = false, newSigner: SignaturePrivateKey? = nil,
        authenticatedData: [UInt8] = [], using rng: inout some RandomNumberGenerator
    ) throws -> CommitOutput {
        guard isActive else { throw MLSError.groupInactive }
        guard pending == nil else { throw MLSError.pendingCommitExists }
        var inline: [Proposal] = keyPackages.map { .add(AddProposal(keyPackage: $0.keyPackage)) }
        inline += leaves.map { .remove(RemoveProposal(removed: $0.value)) }
        if let groupContextExtensions { inline.append(.groupContextExtensions(GroupContextExtensionsProposal(extensions: groupContextExtensions))) }
        inline += preSharedKeys.map { .preSharedKey(PreSharedKeyProposal(psk: $0)) }
        let parameters = CommitParameters(inline: inline, storedProposals: storedProposals, forcePath: forcePath,
                                          newSigner: newSigner, authenticatedData: authenticatedData)
        var current = state
        let commit = try current.createCommit(parameters, configuration: configuration, psks: psks, using: &rng)
        state = current
        pending = commit
        return CommitOutput(commit: commit.message, welcome: commit.welcome, groupInfo: commit.groupInfo, summary: commit.summary)
    }

    /// Adds members; the output's Welcome goes to them.
    public mutating func addMembers(_ keyPackages: [VerifiedKeyPackage], using rng: inout some RandomNumberGenerator) throws -> CommitOutput {
        try commit(adding: keyPackages, using: &rng)
    }

    public mutating func removeMembers(_ leaves: [LeafIndex], using rng: inout some RandomNumberGenerator) throws -> CommitOutput {
        try commit(removing: leaves, using: &rng)
    }

    /// Refreshes our leaf and path (post-compromise security), optionally rotating our
    /// signature key as MDK's `self_update` does. Includes no pending proposals, so the commit
    /// is a pure self-update.
    public mutating func selfUpdate(newSigner: SignaturePrivateKey? = nil, using rng: inout some RandomNumberGenerator) throws -> CommitOutput {
        try commit(storedProposals: .none, forcePath: true, newSigner: newSigner, using: &rng)
    }

    /// Replaces the GroupContext extensions (Marmot: group data 0xF2EE, required_capabilities).
    public mutating func updateGroupContextExtensions(_ extensions: Extensions,
                                                      using rng: inout some RandomNumberGenerator) throws -> CommitOutput {
        try commit(groupContextExtensions: extensions, storedProposals: .none, using: &rng)
    }

    /// Commits the proposals received this epoch (Marmot auto-commits SelfRemove proposals).
    public mutating func commitPendingProposals(using rng: inout some RandomNumberGenerator) throws -> CommitOutput {
        try commit(using: &rng)
    }

    /// Commits exactly the stored proposals named by `references`, nothing else.
    public mutating func commitProposals(_ references: [[UInt8]], using rng: inout some RandomNumberGenerator) throws -> CommitOutput {
        try commit(storedProposals: .only(references), using: &rng)
    }

    /// Moves to the epoch of our pending commit (it was published).
    @discardableResult
    public mutating func mergePendingCommit() throws -> CommitSummary {
        guard let pending else { throw MLSError.noPendingCommit }
        enterNextEpoch(pending.next)
        return pending.summary
    }

    /// Forgets our pending commit (another commit won the epoch, or publishing failed for good).
    public mutating func clearPendingCommit() { pending = nil }

    // MARK: Proposals

    /// Proposes to leave the group (draft-ietf-mls-extensions SelfRemove), as a PublicMessage
    /// as MDK sends it; another member commits it.
    public mutating func proposeSelfRemove(authenticatedData: [UInt8] = [], using rng: inout some RandomNumberGenerator) throws -> MLSMessage {
        try propose(.selfRemove, wireFormat: .publicMessage, authenticatedData: authenticatedData, using: &rng)
    }

    /// Sends a proposal for a later commit (a legacy `Remove` of ourselves, an Add, …) in the
    /// configured handshake wire format, or `wireFormat` when given. It is stored like a
    /// received one, so our commits and others' may include it by reference.
    public mutating func propose(_ proposal: Proposal, wireFormat: WireFormat? = nil, authenticatedData: [UInt8] = [],
                                 using rng: inout some RandomNumberGenerator) throws -> MLSMessage {
        guard isActive else { throw MLSError.groupInactive }
        _ = try state.applyProposals([ResolvedProposal(proposal: proposal, sender: state.ownLeaf, reference: [])], committer: nil,
                                     keyPackageTime: nil)
        var secrets = state.messageSecrets
        let content = try secrets.sign(.proposal(proposal), from: state.ownLeaf, wireFormat: wireFormat ?? configuration.handshakeWireFormat,
                                       authenticatedData: authenticatedData, signer: state.signer)
        let message = try secrets.protect(content, padding: configuration.padding, using: &rng)
        let reference = state.cipherSuite.makeProposalRef(content.tlsSerialized)
        state.messageSecrets = secrets
        state.proposals.insert(StoredProposal(reference: reference, proposal: proposal, sender: state.ownLeaf))
        return message
    }

    /// Forgets a stored proposal (one the application will never commit), so no commit of
    /// ours includes it and a commit of another member that does is refused as unknown.
    public mutating func discardProposal(reference: [UInt8]) {
        state.proposals.remove(reference: reference)
    }

    // MARK: Application messages

    /// Encrypts application data as a PrivateMessage of the current epoch.
    public mutating func encryptApplicationMessage(_ data: [UInt8], authenticatedData: [UInt8] = [],
                                                   using rng: inout some RandomNumberGenerator) throws -> MLSMessage {
        guard isActive else { throw MLSError.groupInactive }
        var secrets = state.messageSecrets
        let content = try secrets.sign(.application(data), from: state.ownLeaf, wireFormat: .privateMessage,
                                       authenticatedData: authenticatedData, signer: state.signer)
        let message = try secrets.protect(content, padding: configuration.padding, using: &rng)
        state.messageSecrets = secrets
        return message
    }

    // MARK: Incoming messages

    /// Processes a framed message of this group: application data of the current or a
    /// retained past epoch, a proposal (stored), or a commit (applied). `time` (Unix seconds;
    /// Marmot passes the event's `created_at`) is when KeyPackages in Add proposals must be
    /// valid. `authorize` sees a fully verified commit before it is applied and may refuse it
    /// by throwing (Marmot's admin rules); the group then stays as it was.
    ///
    /// Our own pending commit coming back is merged. Any failure leaves the group unchanged.
    public mutating func process(_ message: MLSMessage, at time: UInt64,
                                 authorize: ((CommitSummary) throws -> Void)? = nil) throws -> ProcessedMessage {
        let framed = try ProtectedMessage(message)
        guard framed.groupID == groupID else { throw MLSError.wrongGroupID }
        if let pending, pending.message == message {
            enterNextEpoch(pending.next)
            return .commit(pending.summary)
        }
        if isActive, framed.epoch == state.epoch { return try processCurrentEpoch(framed, time: time, authorize: authorize) }
        guard let index = pastEpochs.firstIndex(where: { $0.epoch == framed.epoch }) else {
            if !isActive { throw MLSError.groupInactive }
            throw MLSError.epochUnavailable(epoch: framed.epoch, current: state.epoch)
        }
        var past = pastEpochs[index]
        var secrets = past.messageSecrets
        let verified = try secrets.unprotect(framed, isPastEpoch: true) { try past.signatureKey(of: $0) }
        guard case .application(let data) = verified.body, case .member(let leaf) = verified.sender,
              let node = past.members[leaf] else { throw MLSError.handshakeFromPastEpoch(epoch: framed.epoch) }
        past.messageSecrets = secrets
        pastEpochs[index] = past
        return .application(ApplicationMessage(data: data, sender: Member(leafIndex: LeafIndex(leaf), leafNode: node),
                                               epoch: verified.epoch, authenticatedData: verified.authenticatedData,
                                               generation: verified.generation ?? 0))
    }

    private mutating func processCurrentEpoch(_ framed: ProtectedMessage, time: UInt64,
                                              authorize: ((CommitSummary) throws -> Void)?) throws -> ProcessedMessage {
        var secrets = state.messageSecrets
        let current = state
        let verified = try secrets.unprotect(framed, isPastEpoch: false) { try current.signatureKey(of: $0) }
        guard case .member(let leafValue) = verified.sender, let sender = state.member(LeafIndex(leafValue)) else {
            throw MLSError.senderNotAllowed("only members may send to this group")
        }
        guard sender.leafIndex != state.ownLeaf else { throw MLSError.ownMessage }
        switch verified.body {
        case .application(let data):
            state.messageSecrets = secrets
            return .application(ApplicationMessage(data: data, sender: sender, epoch: verified.epoch,
                                                   authenticatedData: verified.authenticatedData, generation: verified.generation ?? 0))
        case .proposal(let proposal):
            if case .add(let add) = proposal { _ = try add.keyPackage.validate(at: time, requireAcceptableRange: false) }
            _ = try state.applyProposals([ResolvedProposal(proposal: proposal, sender: sender.leafIndex, reference: [])],
                                         committer: nil, keyPackageTime: nil)
            let stored = StoredProposal(reference: state.cipherSuite.makeProposalRef(verified.authenticatedContent.tlsSerialized),
                                        proposal: proposal, sender: sender.leafIndex)
            state.messageSecrets = secrets
            state.proposals.insert(stored)
            return .proposal(stored)
        case .commit:
            let processed = try state.processCommit(verified, configuration: configuration, psks: psks, time: time)
            if let authorize {
                do { try authorize(processed.summary) } catch let error as MLSError { throw error } catch {
                    throw MLSError.commitRejected(String(describing: error))
                }
            }
            state.messageSecrets = secrets
            if let next = processed.next {
                enterNextEpoch(next)
            } else {
                retire(state)
                pending = nil
                isActive = false
            }
            return .commit(processed.summary)
        }
    }

    // MARK: Epoch bookkeeping

    private var psks: PSKSources { PSKSources(external: externalPSKs, resumption: resumptionPSKs) }

    /// Keeps the ending epoch's message secrets and resumption PSK (bounded by the
    /// configuration) and makes `next` current; a pending commit of the old epoch is dropped.
    private mutating func enterNextEpoch(_ next: GroupEpochState) {
        retire(state)
        state = next
        pending = nil
    }

    private mutating func retire(_ old: GroupEpochState) {
        if configuration.maxPastEpochs > 0 {
            pastEpochs.append(PastEpoch(old))
            if pastEpochs.count > configuration.maxPastEpochs { pastEpochs.removeFirst(pastEpochs.count - configuration.maxPastEpochs) }
        }
        if configuration.resumptionPSKRetention > 0 {
            resumptionPSKs[old.epoch] = old.epochSecrets.resumptionPSK
            let keep = Set(resumptionPSKs.keys.sorted().suffix(configuration.resumptionPSKRetention))
            resumptionPSKs = resumptionPSKs.filter { keep.contains($0.key) }
        }
    }
}

extension MLSGroup: CustomStringConvertible {
    public var description: String { "MLSGroup(epoch \(epoch), \(state.tree.memberCount) members, secrets redacted)" }
}
