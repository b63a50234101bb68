/// Processing a commit received from another member (RFC 9420 §12.4.2).
///
/// Works on copies throughout: the current epoch is never touched. The caller gets the next
/// epoch's state only when the commit's proposals, path, key schedule and confirmation tag
/// all verified.
struct ProcessedCommit: Sendable {
    let summary: CommitSummary
    /// The next epoch; nil when the commit removed us (we cannot derive it and leave the group).
    let next: GroupEpochState?
}

extension GroupEpochState {
    func processCommit(_ verified: VerifiedAuthenticatedContent, configuration: GroupConfiguration, psks: PSKSources,
                       time: UInt64) throws -> ProcessedCommit {
        guard case .commit(let commit) = verified.body else { throw MLSError.invalidCommit("not a commit") }
        guard case .member(let senderIndex) = verified.sender else {
            throw MLSError.senderNotAllowed("only member commits are supported (no external commits)")
        }
        let committer = LeafIndex(senderIndex)
        guard committer != ownLeaf else { throw MLSError.ownMessage }
        guard let committerMember = member(committer) else { throw MLSError.blankLeaf(senderIndex) }
        let cs = cipherSuite

        // Resolve proposals: by reference from this epoch's store, inline ones from the committer.
        var resolved: [ResolvedProposal] = []
        var seenReferences = Set<[UInt8]>()
        for item in commit.proposals {
            switch item {
            case .reference(let reference):
                guard let stored = proposals.proposal(for: reference) else { throw MLSError.unknownProposalReference }
                guard seenReferences.insert(reference).inserted else {
                    throw MLSError.invalidCommit("the same proposal reference twice")
                }
                resolved.append(ResolvedProposal(proposal: stored.proposal, sender: stored.sender, reference: reference))
            case .proposal(let proposal):
                resolved.append(ResolvedProposal(proposal: proposal, sender: committer, reference: nil))
            }
        }
        var provisional = try applyProposals(resolved, committer: committer, keyPackageTime: time)
        if provisional.pathRequired && commit.path == nil {
            throw MLSError.invalidCommit("an UpdatePath is required by these proposals")
        }

        guard epoch < GroupEpochState.maximumEpoch else { throw MLSError.invalidCommit("the group is at its last epoch \(epoch)") }
        var context = GroupContext(cipherSuite: cs.suite, groupID: groupContext.groupID, epoch: epoch + 1, treeHash: [],
                                   confirmedTranscriptHash: groupContext.confirmedTranscriptHash, extensions: provisional.extensions)
        let removedSelf = provisional.isRemoved(ownLeaf)
        var commitSecret = KeySchedule.zeroCommitSecret(cs)
        var nextKeys = privateKeys
        if let path = commit.path {
            try Self.requireSameCredential(path.leafNode, as: committerMember.leafNode, at: committer)
            try provisional.tree.validateLeafNode(path.leafNode, at: committer, groupID: context.groupID, suite: cs,
                                                  requiredCapabilities: provisional.extensions.requiredCapabilities)
            try Self.requireUniqueSignatureKey(path.leafNode.signatureKey, in: provisional.tree, except: committer)
            try provisional.tree.mergeUpdatePath(path, from: committer, groupID: context.groupID,
                                                 excluding: provisional.addedLeaves, suite: cs)
            context.treeHash = provisional.tree.treeHash
            if !removedSelf {
                commitSecret = try nextKeys.processUpdatePath(path, from: committer, tree: provisional.tree, groupContext: context,
                                                              excluding: provisional.addedLeaves, suite: cs).commitSecret
            }
        } else {
            context.treeHash = provisional.tree.treeHash
            nextKeys.prune(to: provisional.tree)
        }

        let summary = CommitSummary(
            epoch: context.epoch, committer: committerMember, proposals: provisional.committed,
            added: provisional.added.map { Member(leafIndex: $0.leaf, leafNode: $0.keyPackage.leafNode) },
            removed: provisional.removed, updated: provisional.updated, hasPath: commit.path != nil,
            extensionsChanged: provisional.extensionsChanged, extensions: provisional.extensions, removedSelf: removedSelf)
        // Removed: the path secrets were not encrypted to us, so the new epoch stays unknown.
        if removedSelf { return ProcessedCommit(summary: summary, next: nil) }

        let pskSecret = try self.pskSecret(for: provisional.pskIDs, external: psks.external, resumption: psks.resumption)
        let transition = try EpochTransition(cs, provisional: context, commit: verified.authenticatedContent,
                                             previousInterim: interimTranscriptHash, initSecret: epochSecrets.initSecret,
                                             commitSecret: commitSecret, pskSecret: pskSecret)
        try verified.authenticatedContent.verifyConfirmationTag(cs, confirmationKey: transition.epochSecrets.confirmationKey,
                                                                confirmedTranscriptHash: transition.groupContext.confirmedTranscriptHash)
        let next = try GroupEpochState(
            tree: provisional.tree, groupContext: transition.groupContext, interimTranscriptHash: transition.interimTranscriptHash,
            confirmationTag: transition.confirmationTag, epochSecrets: transition.epochSecrets, privateKeys: nextKeys,
            signer: signer, configuration: configuration)
        return ProcessedCommit(summary: summary, next: next)
    }
}
