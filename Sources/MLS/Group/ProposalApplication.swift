/// The group state a commit's proposals lead to, before any UpdatePath (RFC 9420 §12.4.1
/// "provisional" state), and what changed on the way.
struct ProvisionalState: Sendable {
    var tree: RatchetTree
    var extensions: Extensions
    var extensionsChanged: Bool
    /// New members in proposal order, with the KeyPackages their Welcome is addressed to.
    var added: [(leaf: LeafIndex, keyPackage: KeyPackage)]
    /// Members removed by Remove or SelfRemove, with their leaves before removal.
    var removed: [Member]
    /// Members whose leaf an Update proposal replaced.
    var updated: [LeafIndex]
    /// PreSharedKey proposals' ids, in commit order (the order of the PSK secret chain).
    var pskIDs: [PreSharedKeyID]
    /// Whether the commit must carry an UpdatePath (RFC 9420 §12.4).
    var pathRequired: Bool
    var committed: [CommittedProposal]

    var addedLeaves: Set<LeafIndex> { Set(added.map(\.leaf)) }

    func isRemoved(_ leaf: LeafIndex) -> Bool { removed.contains { $0.leafIndex == leaf } }
}

extension GroupEpochState {
    /// Validates a commit's proposal list (RFC 9420 §12.2, SelfRemove per
    /// draft-ietf-mls-extensions, OpenMLS 0.8.1's choices) and applies it to a copy of the tree
    /// in OpenMLS's order: updates, removes, self-removes, then adds; the
    /// GroupContextExtensions proposal sets the extensions every leaf is then checked against.
    ///
    /// `committer` is nil when checking a single proposal on receipt (no commit yet).
    /// `keyPackageTime` (Unix seconds) is the time inline Add proposals' KeyPackages are
    /// validated at; nil means the caller vouches for them (our own commit, whose adds were
    /// validated when the application handed them in). Proposals that came by reference were
    /// validated when received.
    func applyProposals(_ proposals: [ResolvedProposal], committer: LeafIndex?, keyPackageTime: UInt64?) throws -> ProvisionalState {
        let cs = cipherSuite
        let groupID = groupContext.groupID
        var updates: [(LeafIndex, LeafNode)] = []
        var removes: [LeafIndex] = []
        var selfRemoves: [LeafIndex] = []
        var adds: [(KeyPackage, validate: Bool)] = []
        var pskIDs: [PreSharedKeyID] = []
        var newExtensions: Extensions?
        var targets = Set<LeafIndex>()

        func target(_ leaf: LeafIndex, _ what: String) throws {
            guard targets.insert(leaf).inserted else {
                throw MLSError.invalidProposal("more than one Update, Remove or SelfRemove for \(leaf) (\(what))")
            }
        }

        for item in proposals {
            switch item.proposal {
            case .add(let add):
                adds.append((add.keyPackage, item.reference == nil && keyPackageTime != nil))
            case .update(let update):
                guard item.reference != nil, item.sender != committer else {
                    throw MLSError.invalidProposal("the committer's own Update (its path replaces its leaf)")
                }
                try target(item.sender, "Update")
                updates.append((item.sender, update.leafNode))
            case .remove(let remove):
                let leaf = LeafIndex(remove.removed)
                guard leaf != committer else { throw MLSError.invalidProposal("a Remove of the committer") }
                try target(leaf, "Remove")
                removes.append(leaf)
            case .selfRemove:
                guard item.reference != nil, item.sender != committer else {
                    throw MLSError.invalidProposal("a SelfRemove of the committer")
                }
                try target(item.sender, "SelfRemove")
                selfRemoves.append(item.sender)
            case .preSharedKey(let psk):
                guard psk.psk.nonce.count == cs.kdfNh else {
                    throw MLSError.invalidProposal("PreSharedKey nonce of \(psk.psk.nonce.count) bytes")
                }
                if case .resumption(let usage, _, _) = psk.psk.psk, usage != .application {
                    throw MLSError.invalidProposal("resumption PSK with usage \(usage) in a normal commit")
                }
                guard !pskIDs.contains(psk.psk) else { throw MLSError.invalidProposal("the same PSK twice") }
                pskIDs.append(psk.psk)
            case .groupContextExtensions(let gce):
                guard newExtensions == nil else { throw MLSError.invalidProposal("more than one GroupContextExtensions") }
                do { try gce.extensions.validate(for: .groupContext) } catch {
                    throw MLSError.invalidProposal("GroupContextExtensions carries an extension not allowed in a GroupContext")
                }
                newExtensions = gce.extensions
            case .reInit, .externalInit, .custom:
                throw MLSError.unsupportedProposal(item.proposal.proposalType.rawValue)
            }
        }

        let extensions = newExtensions ?? groupContext.extensions
        let required = extensions.requiredCapabilities
        var tree = self.tree

        for (leaf, node) in updates {
            guard let current = tree.leaf(at: leaf) else { throw MLSError.blankLeaf(leaf.value) }
            guard leaf != ownLeaf else { throw MLSError.invalidProposal("an Update of our leaf that we did not send") }
            guard case .update = node.source else { throw MLSError.invalidProposal("Update leaf node source is not update") }
            try Self.requireSameCredential(node, as: current, at: leaf)
            try tree.validateLeafNode(node, at: leaf, groupID: groupID, suite: cs, requiredCapabilities: required)
            guard node.encryptionKey != current.encryptionKey, !tree.containsEncryptionKey(node.encryptionKey) else {
                throw MLSError.invalidProposal("Update leaf encryption key is not new to the tree")
            }
            try Self.requireUniqueSignatureKey(node.signatureKey, in: tree, except: leaf)
            try tree.update(leaf, with: node)
        }

        var removed: [Member] = []
        for leaf in removes + selfRemoves {
            guard let node = tree.leaf(at: leaf) else {
                throw MLSError.invalidProposal("Remove or SelfRemove of \(leaf), which holds no member")
            }
            removed.append(Member(leafIndex: leaf, leafNode: node))
            try tree.remove(leaf)
        }

        var added: [(leaf: LeafIndex, keyPackage: KeyPackage)] = []
        var newSignatureKeys = Set<[UInt8]>()
        var newInitKeys = Set<[UInt8]>()
        // What every Add is checked against, gathered once: per-Add scans of the members made a
        // commit adding N members cost O(N²).
        var memberIndex = MemberIndex(adds.isEmpty ? [] : tree.members.map(\.leaf))
        var nextSlot = 0
        for (keyPackage, validate) in adds {
            if validate, let time = keyPackageTime { _ = try keyPackage.validate(at: time, requireAcceptableRange: false) }
            guard keyPackage.cipherSuite == cs.suite else { throw MLSError.invalidProposal("Add of a KeyPackage of another suite") }
            let leaf = keyPackage.leafNode
            let slot = LeafIndex(UInt32(truncatingIfNeeded: tree.firstBlankLeaf(from: nextSlot) ?? tree.leafCount))
            if memberIndex.credentialsMutuallySupported(with: leaf) {
                try leaf.validateOwnContent(at: slot, groupID: groupID, suite: cs, requiredCapabilities: required)
            } else {
                // The full check names the member that fails it.
                try tree.validateLeafNode(leaf, at: slot, groupID: groupID, suite: cs, requiredCapabilities: required)
            }
            guard !tree.containsEncryptionKey(leaf.encryptionKey), !tree.containsEncryptionKey(keyPackage.initKey),
                  newInitKeys.insert(keyPackage.initKey).inserted
            else { throw MLSError.invalidProposal("Add of a KeyPackage whose keys are already in the group") }
            guard newSignatureKeys.insert(leaf.signatureKey).inserted else {
                throw MLSError.invalidProposal("two Adds with the same signature key")
            }
            if memberIndex.signatureKeys.contains(leaf.signatureKey) {
                try Self.requireUniqueSignatureKey(leaf.signatureKey, in: tree, except: nil)
            }
            let index = tree.add(leaf, at: slot)
            nextSlot = Int(index.value) + 1
            memberIndex.insert(leaf)
            added.append((index, keyPackage))
        }

        if let newExtensions {
            for (index, leaf) in tree.members {
                if let required, !leaf.capabilities.satisfies(required) {
                    throw MLSError.invalidProposal("\(index) does not meet the new required capabilities")
                }
                for ext in newExtensions where !leaf.capabilities.supportsExtension(ext.extensionType) {
                    throw MLSError.invalidProposal("\(index) does not support GroupContext extension \(ext.extensionType)")
                }
            }
        }

        let committed = try proposals.map { item -> CommittedProposal in
            guard let sender = member(item.sender) else { throw MLSError.blankLeaf(item.sender.value) }
            return CommittedProposal(proposal: item.proposal, sender: sender, byReference: item.reference != nil)
        }
        let pathFree: Set<ProposalType> = [.add, .preSharedKey, .reInit]
        return ProvisionalState(
            tree: tree, extensions: extensions, extensionsChanged: newExtensions != nil && newExtensions != groupContext.extensions,
            added: added, removed: removed, updated: updates.map(\.0), pskIDs: pskIDs,
            pathRequired: proposals.isEmpty || proposals.contains { !pathFree.contains($0.proposal.proposalType) },
            committed: committed)
    }

    /// The members' signature keys and credential types, so each Add is checked in O(1) for
    /// §7.3's uniqueness and mutual credential support rules.
    private struct MemberIndex {
        var signatureKeys: Set<[UInt8]> = []
        var credentialTypes: Set<CredentialType> = []
        var leaves: [LeafNode] = []
        /// Per credential type: whether every member supports it (computed when first asked).
        var supportedByAll: [CredentialType: Bool] = [:]

        init(_ leaves: [LeafNode]) {
            for leaf in leaves { insert(leaf) }
        }

        mutating func insert(_ leaf: LeafNode) {
            signatureKeys.insert(leaf.signatureKey)
            credentialTypes.insert(leaf.credential.credentialType)
            for (type, supported) in supportedByAll where supported {
                supportedByAll[type] = leaf.capabilities.supportsCredential(type)
            }
            leaves.append(leaf)
        }

        /// Whether `leaf` supports every credential type in use and every member supports its own.
        mutating func credentialsMutuallySupported(with leaf: LeafNode) -> Bool {
            guard credentialTypes.allSatisfy(leaf.capabilities.supportsCredential) else { return false }
            let type = leaf.credential.credentialType
            if let known = supportedByAll[type] { return known }
            let supported = leaves.allSatisfy { $0.capabilities.supportsCredential(type) }
            supportedByAll[type] = supported
            return supported
        }
    }

    /// RFC 9420 §5.3.1: a member's new leaf must carry a valid successor of its credential.
    /// The only successor accepted is the credential itself: a member that could swap in
    /// another identity would be taken for that member (and, in Marmot, for an admin).
    static func requireSameCredential(_ new: LeafNode, as current: LeafNode, at leaf: LeafIndex) throws {
        guard new.credential == current.credential else { throw MLSError.credentialChanged(leaf: leaf.value) }
    }

    /// RFC 9420 §7.3: signature keys are unique among the group's leaves.
    static func requireUniqueSignatureKey(_ key: [UInt8], in tree: RatchetTree, except: LeafIndex?) throws {
        for (index, leaf) in tree.members where index != except && leaf.signatureKey == key {
            throw MLSError.invalidProposal("signature key already used by \(index)")
        }
    }

    /// The PSK inputs for `ids` (RFC 9420 §8.4): external PSKs from `external`, resumption
    /// PSKs of this group from `resumption` (by epoch) or the current epoch. Nil for no PSKs.
    func pskSecret(for ids: [PreSharedKeyID], external: [[UInt8]: Secret], resumption: [UInt64: Secret]) throws -> Secret? {
        guard !ids.isEmpty else { return nil }
        let inputs = try ids.map { id -> PreSharedKeyInput in
            switch id.psk {
            case .external(let pskID):
                guard let psk = external[pskID] else { throw MLSError.unknownPreSharedKey }
                return PreSharedKeyInput(id: id, psk: psk)
            case .resumption(_, let groupID, let epoch):
                guard groupID == groupContext.groupID else { throw MLSError.unknownPreSharedKey }
                if epoch == self.epoch { return PreSharedKeyInput(id: id, psk: epochSecrets.resumptionPSK) }
                guard let psk = resumption[epoch] else { throw MLSError.unknownPreSharedKey }
                return PreSharedKeyInput(id: id, psk: psk)
            }
        }
        return try KeySchedule.pskSecret(cipherSuite, psks: inputs)
    }
}
