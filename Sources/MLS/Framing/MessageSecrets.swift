/// What protecting and unprotecting the framed messages of one epoch needs (OpenMLS
/// `MessageSecrets`): the epoch's GroupContext, its sender-data secret and membership key, and
/// its secret tree.
///
/// A group keeps one for the current epoch and, for late application messages, those of up to
/// five past epochs; nothing else of a past epoch is needed to read its messages. Encrypting or
/// decrypting advances `secretTree`, so the methods that do are `mutating` and leave the value
/// unchanged when they throw.
public struct MessageSecrets: Sendable, Equatable {
    public let cipherSuite: CipherSuiteProvider
    /// The GroupContext of this epoch: its group id and epoch frame every message, and its
    /// encoding is signed into FramedContentTBS for member and new_member_commit senders.
    public let groupContext: GroupContext
    /// `groupContext.tlsSerialized`, kept to avoid re-encoding per message.
    public let serializedContext: [UInt8]
    /// `sender_data_secret`: keys PrivateMessage sender data (RFC 9420 §6.3.2).
    public let senderDataSecret: Secret
    /// `membership_key`: keys PublicMessage membership tags (RFC 9420 §6.2).
    public let membershipKey: Secret
    /// The epoch's secret tree (handshake and application ratchets of every leaf).
    public internal(set) var secretTree: SecretTree

    /// Secrets from their parts (the message-protection vectors give exactly these).
    public init(cipherSuite: CipherSuiteProvider, groupContext: GroupContext, senderDataSecret: Secret,
                membershipKey: Secret, secretTree: SecretTree) {
        self.cipherSuite = cipherSuite
        self.groupContext = groupContext
        self.serializedContext = groupContext.tlsSerialized
        self.senderDataSecret = senderDataSecret
        self.membershipKey = membershipKey
        self.secretTree = secretTree
    }

    /// The secrets of a freshly derived epoch: the secret tree is rooted at the epoch's
    /// `encryption_secret` and shaped like the ratchet tree of `leafCount` leaves.
    public init(groupContext: GroupContext, epochSecrets: EpochSecrets, leafCount: Int,
                configuration: SenderRatchetConfiguration = .default) throws {
        let cs = epochSecrets.cipherSuite
        self.init(cipherSuite: cs, groupContext: groupContext, senderDataSecret: epochSecrets.senderDataSecret,
                  membershipKey: epochSecrets.membershipKey,
                  secretTree: try SecretTree(cs, encryptionSecret: epochSecrets.encryptionSecret, leafCount: leafCount,
                                             configuration: configuration))
    }

    public var groupID: [UInt8] { groupContext.groupID }
    public var epoch: UInt64 { groupContext.epoch }
}

extension MessageSecrets: CustomStringConvertible, CustomReflectable {
    public var description: String { "MessageSecrets(epoch \(groupContext.epoch), redacted)" }
    public var customMirror: Mirror { Mirror(self, children: ["epoch": groupContext.epoch]) }
}

extension MessageSecrets: TLSCodable {
    /// Group-state serialization (for the encrypted store, never the wire): the GroupContext,
    /// both secrets and the secret tree, in the clear.
    public func encode(to writer: inout TLSWriter) {
        groupContext.encode(to: &writer)
        senderDataSecret.withUnsafeBytes { writer.writeOpaque($0) }
        membershipKey.withUnsafeBytes { writer.writeOpaque($0) }
        secretTree.encode(to: &writer)
    }

    public init(from reader: inout TLSReader) throws {
        let context = try GroupContext(from: &reader)
        var senderData = try reader.readOpaque()
        defer { Secret.wipe(&senderData) }
        var membership = try reader.readOpaque()
        defer { Secret.wipe(&membership) }
        let tree = try SecretTree(from: &reader)
        guard context.cipherSuite == tree.cipherSuite.suite else {
            throw TLSDecodingError.malformed("MessageSecrets: GroupContext and secret tree name different suites")
        }
        let cs = tree.cipherSuite
        guard senderData.count == cs.kdfNh, membership.count == cs.kdfNh else {
            throw TLSDecodingError.malformed("MessageSecrets: secret of the wrong length")
        }
        self.init(cipherSuite: cs, groupContext: context, senderDataSecret: Secret(senderData),
                  membershipKey: Secret(membership), secretTree: tree)
    }
}
