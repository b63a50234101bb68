/// Errors of the MLS module: each case says what was wrong with the input or the request.
///
/// Messages name structures, nodes and rules, never secret values. (Byte-level decoding failures
/// are `TLSDecodingError`.)
public enum MLSError: Error, Equatable, Sendable {
    // MARK: Ratchet tree (RFC 9420 §7)

    /// A ratchet tree broke a structural rule of §7 or §12.4.3.1; the text names node and rule.
    case invalidRatchetTree(String)
    /// A tree's hash differs from the one it was announced with (e.g. in GroupInfo).
    case treeHashMismatch
    /// A leaf index lies outside the tree.
    case leafIndexOutOfRange(UInt32)
    /// An operation named a blank leaf where a member was required.
    case blankLeaf(UInt32)
    /// A leaf node's signature does not verify under its own signature key.
    case invalidLeafSignature(leaf: UInt32)
    /// A leaf node breaks a rule of RFC 9420 §7.3 other than its signature; the text says which.
    case invalidLeafNode(leaf: UInt32, String)
    /// An HPKE encryption key appears in more than one node.
    case duplicateEncryptionKey(node: Int)
    /// A signature key appears in more than one leaf.
    case duplicateSignatureKey(leaf: UInt32)
    /// An Update proposal or UpdatePath would give a member another credential (RFC 9420
    /// §5.3.1 leaves successors to the application; here a credential never changes).
    case credentialChanged(leaf: UInt32)

    // MARK: TreeKEM (RFC 9420 §7.4–§7.6)

    /// An UpdatePath does not fit the tree (node count, resolution sizes, leaf source…).
    case invalidUpdatePath(String)
    /// The parent hash computed for an UpdatePath differs from the one its leaf node signs.
    case parentHashMismatch
    /// A public key derived from a decrypted path secret differs from the UpdatePath's.
    case pathKeyMismatch(node: Int)
    /// No ciphertext in the UpdatePath is addressed to a key this member holds.
    case noPathSecretForMember
    /// A path secret failed to decrypt (wrong key or tampered ciphertext).
    case pathSecretDecryptionFailed
    /// The private state does not match the tree (a private key for a blank node or a key
    /// whose public half differs from the tree's).
    case privateStateMismatch(node: Int)

    // MARK: KeyPackages (RFC 9420 §10.1)

    /// A KeyPackage broke a validation rule; the text names the rule (signature, suite,
    /// version, leaf source, keys, capabilities).
    case invalidKeyPackage(String)
    /// A KeyPackage's lifetime does not contain the validation time, or spans more than
    /// `Lifetime.maximumRange`.
    case keyPackageLifetime(notBefore: UInt64, notAfter: UInt64, time: UInt64)

    // MARK: Framing (RFC 9420 §6)

    /// The MLSMessage does not carry a PublicMessage or PrivateMessage (a Welcome, GroupInfo or
    /// KeyPackage where a framed message was expected); the value is its wire format.
    case notAFramedMessage(wireFormat: UInt16)
    /// A framed message names another group.
    case wrongGroupID
    /// A framed message's epoch is not the epoch of the secrets it was offered to.
    case wrongEpoch(expected: UInt64, actual: UInt64)
    /// A handshake message (proposal or commit) arrived for a past epoch; only application
    /// messages may use the secrets kept for past epochs.
    case handshakeFromPastEpoch(epoch: UInt64)
    /// Content signed for one wire format was offered for the other (the signature binds it).
    case wireFormatMismatch(expected: UInt16, actual: UInt16)
    /// This sender type may not send this content type in this wire format (RFC 9420 §6,
    /// §12.1.8: application data only encrypted, external senders only proposals, …).
    case senderNotAllowed(String)
    /// A commit lacks its confirmation tag.
    case missingConfirmationTag
    /// A commit's confirmation tag does not verify under the new epoch's confirmation key.
    case invalidConfirmationTag
    /// A PublicMessage from a member lacks its membership tag.
    case missingMembershipTag
    /// A PublicMessage's membership tag does not verify under the epoch's membership key.
    case invalidMembershipTag
    /// A framed message's signature does not verify under the sender's signature key.
    case invalidMessageSignature
    /// The sender's signature key is not a usable Ed25519 key.
    case invalidSenderSignatureKey
    /// A PrivateMessage's sender data did not decrypt (wrong epoch secrets or tampered bytes).
    case senderDataDecryptionFailed
    /// A PrivateMessage's content did not decrypt (tampered ciphertext, header or sender data).
    case contentDecryptionFailed
    /// Decrypted SenderData did not decode.
    case malformedSenderData(TLSDecodingError)
    /// A decrypted PrivateMessageContent did not decode, or its padding was not all zero.
    case malformedMessageContent(TLSDecodingError)
    /// The sender ratchet has handed out this generation's key already: a replayed or duplicated
    /// message.
    case generationReplayed(leaf: UInt32, generation: UInt32)
    /// The generation lies further ahead than the maximum forward distance allows.
    case generationTooFarAhead(leaf: UInt32, generation: UInt32, next: UInt32)
    /// The generation is older than the out-of-order tolerance keeps keys for.
    case generationTooOld(leaf: UInt32, generation: UInt32, newest: UInt32)
    /// The secret tree cannot give this leaf a key (its ratchet is exhausted or the secret was
    /// deleted).
    case senderKeyUnavailable(leaf: UInt32)
    /// Encryption refused its inputs (a key or nonce of the wrong size).
    case encryptionFailed

    // MARK: Groups (RFC 9420 §10–§12)

    /// The group can no longer send or process handshake messages: this member was removed
    /// (or left). Late application messages of kept past epochs still decrypt.
    case groupInactive
    /// No secrets are kept for the message's epoch (older than the retained past epochs, or
    /// not yet reached).
    case epochUnavailable(epoch: UInt64, current: UInt64)
    /// A message sent by this member came back (own PrivateMessages cannot be decrypted; an
    /// own PublicMessage is not processed as if from someone else).
    case ownMessage
    /// A commit refers to a proposal this member has not received in the epoch.
    case unknownProposalReference
    /// A proposal breaks a rule of RFC 9420 §12.1–§12.2 (or draft-ietf-mls-extensions for
    /// SelfRemove); the text names the rule.
    case invalidProposal(String)
    /// A proposal type this engine does not apply (ReInit, ExternalInit, custom types).
    case unsupportedProposal(UInt16)
    /// A commit breaks a rule of RFC 9420 §12.4 (path required, committer removed, …).
    case invalidCommit(String)
    /// A pre-shared key named by a proposal or Welcome is not available to this member.
    case unknownPreSharedKey
    /// An operation needs a pending commit and there is none.
    case noPendingCommit
    /// A new commit was requested while one of ours is still pending (merge or clear it first).
    case pendingCommitExists
    /// The Welcome has no secrets for any KeyPackage of ours.
    case welcomeNotForUs
    /// The Welcome's GroupSecrets or GroupInfo did not decrypt.
    case welcomeDecryptionFailed
    /// A Welcome or its GroupInfo breaks a rule of RFC 9420 §12.4.3.1; the text names it.
    case invalidWelcome(String)
    /// The GroupInfo signature does not verify under the signer's leaf key.
    case invalidGroupInfoSignature
    /// Neither the GroupInfo nor the caller supplied the ratchet tree.
    case missingRatchetTree
    /// Group parameters given to create a group or build a KeyPackage are inconsistent; the
    /// text says how.
    case invalidGroupParameters(String)
    /// Serialized group state could not be restored; the text names the part.
    case invalidGroupState(String)
    /// The application refused a verified commit (its `authorize` hook threw).
    case commitRejected(String)
}
