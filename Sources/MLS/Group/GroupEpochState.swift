/// The complete state of one epoch as a member holds it (RFC 9420 §8, §11): the public group
/// state (GroupContext, ratchet tree, transcript hashes) and this member's secrets for it.
///
/// A value type. Every transition builds the next epoch's value from this one and replaces it
/// only when everything verified, so a failing message leaves the group as it was.
struct GroupEpochState: Sendable {
    /// The highest epoch a group may be joined at or committed from: far beyond any real group
    /// (2^62 commits), and below both `UInt64.max` (`epoch + 1`) and `Int64.max` (the store).
    static let maximumEpoch: UInt64 = 1 << 62

    var tree: RatchetTree
    var interimTranscriptHash: [UInt8]
    /// The confirmation tag of the commit that started this epoch (GroupInfo carries it).
    var confirmationTag: [UInt8]
    /// The key schedule outputs, with `encryption_secret` wiped once the secret tree holds it.
    var epochSecrets: EpochSecrets
    /// This epoch's GroupContext, sender-data secret, membership key and secret tree.
    var messageSecrets: MessageSecrets
    var privateKeys: TreeKEMPrivateKeys
    /// Our signature key: the one our leaf in `tree` carries.
    var signer: SignaturePrivateKey
    /// Proposals received (or sent) in this epoch, for commits that refer to them.
    var proposals: ProposalStore

    var groupContext: GroupContext { messageSecrets.groupContext }
    var cipherSuite: CipherSuiteProvider { messageSecrets.cipherSuite }
    var ownLeaf: LeafIndex { privateKeys.ownLeaf }
    var epoch: UInt64 { groupContext.epoch }

    /// The epoch's state from a freshly run key schedule.
    init(tree: RatchetTree, groupContext: GroupContext, interimTranscriptHash: [UInt8], confirmationTag: [UInt8],
         epochSecrets: EpochSecrets, privateKeys: TreeKEMPrivateKeys, signer: SignaturePrivateKey,
         configuration: GroupConfiguration) throws {
        self.tree = tree
        self.interimTranscriptHash = interimTranscriptHash
        self.confirmationTag = confirmationTag
        self.messageSecrets = try MessageSecrets(groupContext: groupContext, epochSecrets: epochSecrets, leafCount: tree.leafCount,
                                                 configuration: configuration.senderRatchet)
        self.epochSecrets = try epochSecrets.retained()
        self.privateKeys = privateKeys
        self.signer = signer
        self.proposals = ProposalStore()
    }

    /// Restores stored parts (see `GroupStateCodec`).
    init(tree: RatchetTree, interimTranscriptHash: [UInt8], confirmationTag: [UInt8], epochSecrets: EpochSecrets,
         messageSecrets: MessageSecrets, privateKeys: TreeKEMPrivateKeys, signer: SignaturePrivateKey, proposals: ProposalStore) {
        self.tree = tree
        self.interimTranscriptHash = interimTranscriptHash
        self.confirmationTag = confirmationTag
        self.epochSecrets = epochSecrets
        self.messageSecrets = messageSecrets
        self.privateKeys = privateKeys
        self.signer = signer
        self.proposals = proposals
    }

    /// The members of this epoch, as the framing layer and results name them.
    func member(_ leaf: LeafIndex) -> Member? { tree.leaf(at: leaf).map { Member(leafIndex: leaf, leafNode: $0) } }

    /// The signature key of a member sender, for verifying framed messages of this epoch.
    func signatureKey(of sender: Sender) throws -> SignaturePublicKey {
        guard case .member(let leaf) = sender else {
            throw MLSError.senderNotAllowed("only members may send to this group (external senders are not supported)")
        }
        guard let node = tree.leaf(at: LeafIndex(leaf)) else { throw MLSError.blankLeaf(leaf) }
        return SignaturePublicKey(node.signatureKey)
    }
}

/// A group member: its leaf index and leaf node (credential, signature key, capabilities).
public struct Member: Hashable, Sendable {
    public let leafIndex: LeafIndex
    public let leafNode: LeafNode

    public init(leafIndex: LeafIndex, leafNode: LeafNode) {
        self.leafIndex = leafIndex
        self.leafNode = leafNode
    }

    public var credential: Credential { leafNode.credential }
    /// The basic credential's identity (Marmot: the 32-byte x-only Nostr key); nil otherwise.
    public var identity: [UInt8]? { leafNode.credential.basicIdentity }
    public var signatureKey: [UInt8] { leafNode.signatureKey }
}

/// What is kept of a past epoch (OpenMLS `MessageSecretsStore`): its message secrets and who
/// its members were, so a late application message is decrypted and its signature checked
/// against the sender's key of that epoch; and its exporter secret, because Marmot's outer
/// encryption of a late message is keyed by that epoch's MLS-Exporter output.
struct PastEpoch: Sendable {
    var messageSecrets: MessageSecrets
    let members: [UInt32: LeafNode]
    let exporterSecret: Secret

    var epoch: UInt64 { messageSecrets.epoch }

    init(messageSecrets: MessageSecrets, members: [UInt32: LeafNode], exporterSecret: Secret) {
        self.messageSecrets = messageSecrets
        self.members = members
        self.exporterSecret = exporterSecret
    }

    init(_ state: GroupEpochState) {
        messageSecrets = state.messageSecrets
        exporterSecret = state.epochSecrets.exporterSecret
        var members: [UInt32: LeafNode] = [:]
        for (index, leaf) in state.tree.members { members[index.value] = leaf }
        self.members = members
    }

    func signatureKey(of sender: Sender) throws -> SignaturePublicKey {
        guard case .member(let leaf) = sender else {
            throw MLSError.senderNotAllowed("only members may send to this group (external senders are not supported)")
        }
        guard let node = members[leaf] else { throw MLSError.blankLeaf(leaf) }
        return SignaturePublicKey(node.signatureKey)
    }

    /// MLS-Exporter of this past epoch, through `EpochSecrets` holding only its exporter secret.
    func exporter(label: String, context: [UInt8], length: Int) throws -> Secret {
        let cs = messageSecrets.cipherSuite
        let zero = Secret.zero(count: cs.kdfNh)
        return try EpochSecrets(cs, secrets: [zero, zero, exporterSecret, zero, zero, zero, zero, zero, zero])
            .exporter(label: label, context: context, length: length)
    }
}

extension EpochSecrets {
    /// These secrets with `encryption_secret` and `sender_data_secret` zeroed: once the epoch's
    /// `MessageSecrets` hold the secret tree and sender-data secret, keeping the root would let
    /// whoever reads the state re-derive keys already used and deleted (RFC 9420 §9.2).
    func retained() throws -> EpochSecrets {
        let zero = Secret.zero(count: cipherSuite.kdfNh)
        return try EpochSecrets(cipherSuite, secrets: [zero, zero, exporterSecret, externalSecret, confirmationKey,
                                                       membershipKey, resumptionPSK, epochAuthenticator, initSecret])
    }
}

/// The key-schedule steps shared by committing, processing a commit and joining (RFC 9420
/// §8, §8.2): transcript hashes, joiner and epoch secrets, confirmation tag.
struct EpochTransition: Sendable {
    let groupContext: GroupContext
    let joinerSecret: Secret
    let pskSecret: Secret?
    let epochSecrets: EpochSecrets
    let confirmationTag: [UInt8]
    let interimTranscriptHash: [UInt8]

    /// From the provisional GroupContext (new epoch, tree hash and extensions, old confirmed
    /// transcript hash) and the signed commit content.
    init(_ cs: CipherSuiteProvider, provisional: GroupContext, commit: AuthenticatedContent, previousInterim: [UInt8],
         initSecret: Secret, commitSecret: Secret, pskSecret: Secret?) throws {
        var context = provisional
        context.confirmedTranscriptHash = try commit.confirmedTranscriptHash(cs, interimTranscriptHash: previousInterim)
        groupContext = context
        joinerSecret = try KeySchedule.joinerSecret(cs, initSecret: initSecret, commitSecret: commitSecret, groupContext: context)
        self.pskSecret = pskSecret
        epochSecrets = try EpochSecrets(cs, joinerSecret: joinerSecret, pskSecret: pskSecret, groupContext: context)
        confirmationTag = epochSecrets.confirmationTag(confirmedTranscriptHash: context.confirmedTranscriptHash)
        interimTranscriptHash = TranscriptHash.interim(cs, confirmedTranscriptHash: context.confirmedTranscriptHash,
                                                       confirmationTag: confirmationTag)
    }
}
