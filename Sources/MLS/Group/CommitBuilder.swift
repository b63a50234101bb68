/// Creating a commit (RFC 9420 §12.4.1) and the Welcome for the members it adds (§12.4.3.1).
///
/// The order matters because each step signs or hashes the previous one's output: apply the
/// proposals, refresh our path over the provisional tree (encrypted under the provisional
/// GroupContext), sign the commit in the current epoch, hash it into the confirmed transcript,
/// run the key schedule, and only then compute the confirmation tag that completes the message.
struct CommitParameters {
    /// Proposals we send inline (the committer is their sender).
    var inline: [Proposal] = []
    /// Which proposals received in this epoch to include by reference.
    var storedProposals: StoredProposalSelection = .all
    /// Send an UpdatePath even when no proposal requires one.
    var forcePath = false
    /// A new signature key for our leaf (MDK rotates it on every self-update); implies a path.
    var newSigner: SignaturePrivateKey?
    var authenticatedData: [UInt8] = []
    /// The credential, capabilities and extensions of the leaf our path writes; nil keeps our
    /// current leaf's. Internal: the tests forge a credential change with it, which every
    /// receiver refuses (`MLSError.credentialChanged`).
    var leafTemplate: LeafNode?
}

/// Which stored proposals (received or sent earlier in the epoch) a commit includes by reference.
public enum StoredProposalSelection: Sendable, Hashable {
    /// None: the commit holds only what the caller asked for.
    case none
    /// Every stored proposal that can be committed together (OpenMLS's default).
    case all
    /// Exactly these, by `ProposalRef`, in this order.
    case only([[UInt8]])
}

/// The secrets a commit may need that do not belong to one epoch.
struct PSKSources {
    var external: [[UInt8]: Secret]
    var resumption: [UInt64: Secret]
}

extension GroupEpochState {
    /// Builds our commit. On success the current epoch's handshake ratchet has advanced (the
    /// commit used one of its keys) and the returned `PendingCommit` holds the next epoch; on
    /// failure nothing changed.
    mutating func createCommit(_ parameters: CommitParameters, configuration: GroupConfiguration, psks: PSKSources,
                               using rng: inout some RandomNumberGenerator) throws -> PendingCommit {
        let cs = cipherSuite
        let own = ownLeaf
        guard let committer = member(own) else { throw MLSError.blankLeaf(own.value) }
        let proposals = try selectProposals(inline: parameters.inline, stored: parameters.storedProposals)
        var provisional = try applyProposals(proposals, committer: own, keyPackageTime: nil)

        let hasPath = provisional.pathRequired || parameters.forcePath || parameters.newSigner != nil
        let nextSigner = parameters.newSigner ?? signer
        guard epoch < GroupEpochState.maximumEpoch else { throw MLSError.invalidCommit("the group is at its last epoch \(epoch)") }
        var context = GroupContext(cipherSuite: cs.suite, groupID: groupContext.groupID, epoch: epoch + 1, treeHash: [],
                                   confirmedTranscriptHash: groupContext.confirmedTranscriptHash, extensions: provisional.extensions)
        var commitSecret = KeySchedule.zeroCommitSecret(cs)
        var updatePath: UpdatePath?
        var prepared: PreparedUpdatePath?
        var nextKeys = privateKeys
        if hasPath {
            let path = try provisional.tree.applyOwnUpdatePath(from: own, groupID: groupContext.groupID, signer: nextSigner,
                                                               leafTemplate: parameters.leafTemplate, suite: cs, using: &rng)
            context.treeHash = provisional.tree.treeHash
            updatePath = try path.encrypt(in: provisional.tree, groupContext: context, excluding: provisional.addedLeaves,
                                          suite: cs, using: &rng)
            commitSecret = path.commitSecret
            nextKeys = path.privateKeys
            prepared = path
        } else {
            context.treeHash = provisional.tree.treeHash
            nextKeys.prune(to: provisional.tree)
        }

        let commit = Commit(proposals: proposals.map { item in item.reference.map(ProposalOrRef.reference) ?? .proposal(item.proposal) },
                            path: updatePath)
        var messageSecrets = self.messageSecrets
        var content = try messageSecrets.sign(.commit(commit), from: own, wireFormat: configuration.handshakeWireFormat,
                                              authenticatedData: parameters.authenticatedData, signer: signer)
        let pskSecret = try self.pskSecret(for: provisional.pskIDs, external: psks.external, resumption: psks.resumption)
        let transition = try EpochTransition(cs, provisional: context, commit: content, previousInterim: interimTranscriptHash,
                                             initSecret: epochSecrets.initSecret, commitSecret: commitSecret, pskSecret: pskSecret)
        content.auth.confirmationTag = transition.confirmationTag
        let message = try messageSecrets.protect(content, padding: configuration.padding, using: &rng)

        let next = try GroupEpochState(
            tree: provisional.tree, groupContext: transition.groupContext, interimTranscriptHash: transition.interimTranscriptHash,
            confirmationTag: transition.confirmationTag, epochSecrets: transition.epochSecrets, privateKeys: nextKeys,
            signer: nextSigner, configuration: configuration)

        var welcome: Welcome?
        var groupInfo: GroupInfo?
        if !provisional.added.isEmpty {
            let info = try next.signedGroupInfo(includeRatchetTree: configuration.useRatchetTreeExtension)
            welcome = try Self.welcome(groupInfo: info, transition: transition, provisional: provisional, path: prepared,
                                       suite: cs, using: &rng)
            groupInfo = info
        }
        let summary = CommitSummary(
            epoch: next.epoch, committer: committer, proposals: provisional.committed,
            added: provisional.added.compactMap { next.member($0.leaf) }, removed: provisional.removed,
            updated: provisional.updated, hasPath: hasPath, extensionsChanged: provisional.extensionsChanged,
            extensions: provisional.extensions, removedSelf: false)
        self.messageSecrets = messageSecrets
        return PendingCommit(message: message, welcome: welcome, groupInfo: groupInfo, summary: summary, next: next)
    }

    /// Our inline proposals plus, by reference, every stored proposal that can join them in a
    /// valid commit (OpenMLS drops the rest: a Remove of us, our own SelfRemove, a second
    /// Remove of the same member, an Add that became invalid…). The inline ones must be valid.
    private func selectProposals(inline: [Proposal], stored: StoredProposalSelection) throws -> [ResolvedProposal] {
        let inlineItems = inline.map { ResolvedProposal(proposal: $0, sender: ownLeaf, reference: nil) }
        _ = try applyProposals(inlineItems, committer: ownLeaf, keyPackageTime: nil)
        switch stored {
        case .none:
            return inlineItems
        case .only(let wanted):
            // Exactly these, or nothing: a commit that silently dropped one would not be the
            // commit the caller asked for.
            var seen = Set<[UInt8]>()
            let chosen = try wanted.map { reference -> ResolvedProposal in
                guard seen.insert(reference).inserted else { throw MLSError.invalidCommit("the same proposal reference twice") }
                guard let entry = proposals.proposal(for: reference) else { throw MLSError.unknownProposalReference }
                return ResolvedProposal(proposal: entry.proposal, sender: entry.sender, reference: reference)
            }
            _ = try applyProposals(chosen + inlineItems, committer: ownLeaf, keyPackageTime: nil)
            return chosen + inlineItems
        case .all:
            break
        }
        var references: [ResolvedProposal] = []
        for stored in proposals.entries {
            let candidate = ResolvedProposal(proposal: stored.proposal, sender: stored.sender, reference: stored.reference)
            if (try? applyProposals(references + [candidate] + inlineItems, committer: ownLeaf, keyPackageTime: nil)) != nil {
                references.append(candidate)
            }
        }
        return references + inlineItems
    }

    /// This epoch's GroupInfo (RFC 9420 §12.4.3), signed by us: what a Welcome carries.
    func signedGroupInfo(includeRatchetTree: Bool) throws -> GroupInfo {
        var extensions = Extensions()
        if includeRatchetTree { try extensions.insert(.ratchetTree(tree.tlsSerialized)) }
        var info = GroupInfo(groupContext: groupContext, extensions: extensions, confirmationTag: confirmationTag, signer: ownLeaf.value)
        try info.sign(with: signer, suite: cipherSuite)
        return info
    }

    /// The Welcome (RFC 9420 §12.4.3.1): the GroupInfo sealed under the welcome key and nonce,
    /// and for each new member its GroupSecrets (joiner secret, the path secret of its lowest
    /// common ancestor with us, the PSK ids) HPKE-encrypted to its KeyPackage's init key.
    static func welcome(groupInfo: GroupInfo, transition: EpochTransition, provisional: ProvisionalState, path: PreparedUpdatePath?,
                        suite cs: CipherSuiteProvider, using rng: inout some RandomNumberGenerator) throws -> Welcome {
        let welcomeSecret = KeySchedule.welcomeSecret(cs, joinerSecret: transition.joinerSecret, pskSecret: transition.pskSecret)
        let (key, nonce) = try KeySchedule.welcomeKeyAndNonce(cs, welcomeSecret: welcomeSecret)
        let encryptedGroupInfo = try cs.aeadSeal(key: key, nonce: nonce, aad: [], plaintext: groupInfo.tlsSerialized)
        var secrets: [EncryptedGroupSecrets] = []
        for (leaf, keyPackage) in provisional.added {
            let groupSecrets = GroupSecrets(joinerSecret: transition.joinerSecret, pathSecret: path?.pathSecret(forJoiner: leaf),
                                            psks: provisional.pskIDs)
            var plaintext = groupSecrets.tlsSerialized
            defer { Secret.wipe(&plaintext) }
            let sealed = try cs.encryptWithLabel(HPKEPublicKey(keyPackage.initKey), label: "Welcome", context: encryptedGroupInfo,
                                                 plaintext: plaintext, using: &rng)
            secrets.append(EncryptedGroupSecrets(newMember: keyPackage.reference(suite: cs), encryptedGroupSecrets: sealed))
        }
        return Welcome(cipherSuite: cs.suite, secrets: secrets, encryptedGroupInfo: encryptedGroupInfo)
    }
}

extension MessageSecrets {
    /// Frames signed content in the wire format it was signed for.
    mutating func protect(_ content: AuthenticatedContent, padding: MessagePadding,
                          using rng: inout some RandomNumberGenerator) throws -> MLSMessage {
        switch content.wireFormat {
        case .publicMessage:
            return MLSMessage(body: .publicMessage(try protectPublic(content)))
        default:
            return MLSMessage(body: .privateMessage(try protectPrivate(content, padding: padding, using: &rng)))
        }
    }
}
