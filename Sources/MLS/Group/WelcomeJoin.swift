/// Joining a group from a Welcome (RFC 9420 §12.4.3.1), in two steps like OpenMLS's
/// `ProcessedWelcome` → `StagedWelcome`: decrypting shows what group we are invited to (Marmot
/// asks the user before joining); verifying the GroupInfo and tree then yields the group.

/// A Welcome decrypted with one of our KeyPackages. Its GroupInfo is **unverified**: the
/// signature, tree and confirmation tag are checked by `join`.
public struct ProcessedWelcome: Sendable {
    public let cipherSuite: CipherSuiteProvider
    /// The decrypted GroupInfo, not yet verified.
    public let unverifiedGroupInfo: GroupInfo
    let groupSecrets: GroupSecrets
    let pskSecret: Secret?
    let keyPackage: KeyPackage
    /// Our keys for the package; nil when decrypted with the init key alone (inspection only).
    let bundle: KeyPackageBundle?

    /// The GroupContext we would join (group id, epoch, extensions such as Marmot's 0xF2EE),
    /// as claimed by the unverified GroupInfo.
    public var groupContext: GroupContext { unverifiedGroupInfo.groupContext }

    /// Decrypts the GroupSecrets addressed to `keyPackage` and, with the welcome secret, the
    /// GroupInfo. `externalPSKs` resolves external PSK ids the GroupSecrets name (resumption
    /// PSKs from other groups are not supported).
    public init(welcome: Welcome, keyPackage: KeyPackageBundle, externalPSKs: [[UInt8]: Secret] = [:]) throws {
        try self.init(welcome: welcome, keyPackage: keyPackage.keyPackage, initPrivateKey: keyPackage.initPrivateKey,
                      bundle: keyPackage, externalPSKs: externalPSKs)
    }

    /// Decrypts with the init key alone: enough to read and check the GroupInfo, not to join.
    public init(welcome: Welcome, keyPackage: KeyPackage, initPrivateKey: HPKEPrivateKey,
                externalPSKs: [[UInt8]: Secret] = [:]) throws {
        try self.init(welcome: welcome, keyPackage: keyPackage, initPrivateKey: initPrivateKey, bundle: nil, externalPSKs: externalPSKs)
    }

    private init(welcome: Welcome, keyPackage: KeyPackage, initPrivateKey: HPKEPrivateKey, bundle: KeyPackageBundle?,
                 externalPSKs: [[UInt8]: Secret]) throws {
        guard welcome.cipherSuite == keyPackage.cipherSuite, let cs = try? CipherSuiteProvider(welcome.cipherSuite) else {
            throw MLSError.invalidWelcome("cipher suite \(welcome.cipherSuite) differs from the KeyPackage's or is unsupported")
        }
        guard let entry = welcome.secrets(for: keyPackage.reference(suite: cs)) else { throw MLSError.welcomeNotForUs }
        var secretsBytes: [UInt8]
        do {
            secretsBytes = try cs.decryptWithLabel(initPrivateKey, label: "Welcome", context: welcome.encryptedGroupInfo,
                                                   ciphertext: entry.encryptedGroupSecrets)
        } catch {
            throw MLSError.welcomeDecryptionFailed
        }
        defer { Secret.wipe(&secretsBytes) }
        let groupSecrets: GroupSecrets
        do { groupSecrets = try GroupSecrets(tlsSerialized: secretsBytes) } catch {
            throw MLSError.invalidWelcome("GroupSecrets do not decode")
        }
        guard groupSecrets.joinerSecret.count == cs.kdfNh, groupSecrets.pathSecret.map({ $0.count == cs.kdfNh }) ?? true else {
            throw MLSError.invalidWelcome("GroupSecrets hold secrets of the wrong length")
        }

        var pskInputs: [PreSharedKeyInput] = []
        for id in groupSecrets.psks {
            guard case .external(let pskID) = id.psk, let psk = externalPSKs[pskID] else { throw MLSError.unknownPreSharedKey }
            pskInputs.append(PreSharedKeyInput(id: id, psk: psk))
        }
        let pskSecret = pskInputs.isEmpty ? nil : try KeySchedule.pskSecret(cs, psks: pskInputs)
        let welcomeSecret = KeySchedule.welcomeSecret(cs, joinerSecret: groupSecrets.joinerSecret, pskSecret: pskSecret)
        let (key, nonce) = try KeySchedule.welcomeKeyAndNonce(cs, welcomeSecret: welcomeSecret)
        let infoBytes: [UInt8]
        do { infoBytes = try cs.aeadOpen(key: key, nonce: nonce, aad: [], ciphertext: welcome.encryptedGroupInfo) } catch {
            throw MLSError.welcomeDecryptionFailed
        }
        let info: GroupInfo
        do { info = try GroupInfo(tlsSerialized: infoBytes) } catch { throw MLSError.invalidWelcome("GroupInfo does not decode") }
        guard info.groupContext.cipherSuite == welcome.cipherSuite, info.groupContext.version == .mls10 else {
            throw MLSError.invalidWelcome("GroupInfo names another cipher suite or version")
        }
        // A group no member could ever commit in (`epoch + 1`), nor store as a signed integer.
        guard info.groupContext.epoch < GroupEpochState.maximumEpoch else {
            throw MLSError.invalidWelcome("GroupInfo epoch \(info.groupContext.epoch) is beyond \(GroupEpochState.maximumEpoch)")
        }
        self.cipherSuite = cs
        self.unverifiedGroupInfo = info
        self.groupSecrets = groupSecrets
        self.pskSecret = pskSecret
        self.keyPackage = keyPackage
        self.bundle = bundle
    }

    /// Checks the GroupInfo signature under `signerKey` (RFC 9420 §12.4.3.1).
    public func verifyGroupInfoSignature(signerKey: [UInt8]) throws {
        do { try unverifiedGroupInfo.verifySignature(signerKey: signerKey, suite: cipherSuite) } catch {
            throw MLSError.invalidGroupInfoSignature
        }
    }

    /// Runs the key schedule from the joiner secret and checks the GroupInfo's confirmation
    /// tag against the confirmed transcript hash it claims.
    public func verifiedEpochSecrets() throws -> EpochSecrets {
        let context = unverifiedGroupInfo.groupContext
        let secrets = try EpochSecrets(cipherSuite, joinerSecret: groupSecrets.joinerSecret, pskSecret: pskSecret, groupContext: context)
        do {
            try secrets.verifyConfirmationTag(unverifiedGroupInfo.confirmationTag, confirmedTranscriptHash: context.confirmedTranscriptHash)
        } catch {
            throw MLSError.invalidConfirmationTag
        }
        return secrets
    }

    /// Verifies everything and builds our state of the group (RFC 9420 §12.4.3.1): the ratchet
    /// tree (from the GroupInfo's `ratchet_tree` extension, else `ratchetTree`) is validated
    /// and must hash to the GroupContext's tree hash; the GroupInfo signature verifies under
    /// its signer's leaf; our KeyPackage's leaf is in the tree; the path secret (if any)
    /// matches the tree's keys; and the confirmation tag verifies.
    func verifiedState(ratchetTree: UnverifiedRatchetTree?, configuration: GroupConfiguration) throws -> GroupEpochState {
        guard let bundle else { throw MLSError.invalidGroupParameters("joining needs the KeyPackage's private keys") }
        let cs = cipherSuite
        let info = unverifiedGroupInfo
        let context = info.groupContext
        let unverifiedTree: UnverifiedRatchetTree
        if let raw = info.extensions.ratchetTree {
            do { unverifiedTree = try UnverifiedRatchetTree(tlsSerialized: raw) } catch {
                throw MLSError.invalidWelcome("ratchet_tree extension does not decode")
            }
        } else if let ratchetTree {
            unverifiedTree = ratchetTree
        } else {
            throw MLSError.missingRatchetTree
        }
        let tree = try RatchetTree(verifying: unverifiedTree, groupID: context.groupID, suite: cs,
                                   requiredCapabilities: context.extensions.requiredCapabilities)
        guard tree.treeHash == context.treeHash else { throw MLSError.treeHashMismatch }
        let signer = LeafIndex(info.signer)
        guard let signerLeaf = tree.leaf(at: signer) else { throw MLSError.invalidWelcome("GroupInfo signer \(signer) is not a member") }
        try verifyGroupInfoSignature(signerKey: signerLeaf.signatureKey)
        guard let ownLeaf = tree.index(of: keyPackage.leafNode) else {
            throw MLSError.invalidWelcome("our KeyPackage's leaf is not in the tree")
        }
        let privateKeys = try TreeKEMPrivateKeys(joining: tree, ownLeaf: ownLeaf, leafPrivateKey: bundle.encryptionPrivateKey,
                                                 pathSecret: groupSecrets.pathSecret, committer: signer, suite: cs)
        let epochSecrets = try verifiedEpochSecrets()
        return try GroupEpochState(
            tree: tree, groupContext: context,
            interimTranscriptHash: TranscriptHash.interim(cs, confirmedTranscriptHash: context.confirmedTranscriptHash,
                                                          confirmationTag: info.confirmationTag),
            confirmationTag: info.confirmationTag, epochSecrets: epochSecrets, privateKeys: privateKeys,
            signer: bundle.signer, configuration: configuration)
    }
}
