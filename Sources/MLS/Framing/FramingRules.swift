/// The rules RFC 9420 §6 puts on who may send what, in which wire format, applied both when we
/// protect a message (so we never emit one a peer must reject) and when we unprotect one.
enum FramingRules {
    /// Sender type × content type × wire format (RFC 9420 §6, §6.2, §12.1.8, §12.4.3.2):
    /// - application data only in a PrivateMessage (a PublicMessage would expose it);
    /// - a PrivateMessage only from a member (SenderData carries a leaf index);
    /// - `external` senders send proposals only, `new_member_proposal` only an Add proposal,
    ///   `new_member_commit` only a commit with an UpdatePath — all as PublicMessage; external
    ///   senders never propose Update, SelfRemove or ExternalInit;
    /// - a commit carries a confirmation tag.
    static func check(_ content: FramedContent, wireFormat: WireFormat, confirmationTag: [UInt8]?) throws {
        if wireFormat == .privateMessage {
            guard case .member = content.sender else {
                throw MLSError.senderNotAllowed("a PrivateMessage must come from a member")
            }
        } else if wireFormat == .publicMessage {
            guard content.contentType != .application else {
                throw MLSError.senderNotAllowed("application data must be sent as PrivateMessage")
            }
        } else {
            throw MLSError.notAFramedMessage(wireFormat: wireFormat.rawValue)
        }
        switch (content.sender, content.body) {
        case (.member, _):
            break
        case (.external, .proposal(let proposal)):
            // Update and SelfRemove speak for the sender's own leaf, ExternalInit belongs in an
            // external commit: none can come from outside the group (RFC 9420 §12.1.8).
            switch proposal {
            case .update, .selfRemove, .externalInit:
                throw MLSError.senderNotAllowed("an external sender may not propose \(proposal.proposalType.rawValue)")
            default:
                break
            }
        case (.external, _):
            throw MLSError.senderNotAllowed("an external sender may send only proposals")
        case (.newMemberProposal, .proposal(.add)):
            break
        case (.newMemberProposal, _):
            throw MLSError.senderNotAllowed("a new_member_proposal sender may send only an Add proposal")
        case (.newMemberCommit, .commit(let commit)):
            // Its signature key is the one in the path's leaf node, so the path must exist.
            guard commit.path != nil else {
                throw MLSError.senderNotAllowed("a new_member_commit commit must carry an UpdatePath")
            }
        case (.newMemberCommit, _):
            throw MLSError.senderNotAllowed("a new_member_commit sender may send only a commit")
        }
        if content.contentType == .commit {
            guard confirmationTag != nil else { throw MLSError.missingConfirmationTag }
        } else if confirmationTag != nil {
            throw MLSError.senderNotAllowed("only a commit carries a confirmation tag")
        }
    }

    /// Group id and epoch must be those of `secrets`; a handshake message must belong to the
    /// current epoch (OpenMLS accepts only application messages for past epochs).
    static func checkEpoch(groupID: [UInt8], epoch: UInt64, contentType: ContentType,
                           secrets: MessageSecrets, isPastEpoch: Bool) throws {
        guard groupID == secrets.groupID else { throw MLSError.wrongGroupID }
        guard epoch == secrets.epoch else { throw MLSError.wrongEpoch(expected: secrets.epoch, actual: epoch) }
        if isPastEpoch && contentType != .application { throw MLSError.handshakeFromPastEpoch(epoch: epoch) }
    }

    /// The key that must have signed `content`: from the content itself for new members (the
    /// leaf node of a new_member_commit's path, the KeyPackage of a new_member_proposal's Add),
    /// otherwise from the caller, who looks members up in the ratchet tree and external senders
    /// in the `external_senders` extension.
    static func signatureKey(for content: FramedContent,
                             lookup: (Sender) throws -> SignaturePublicKey) throws -> SignaturePublicKey {
        switch (content.sender, content.body) {
        case (.newMemberCommit, .commit(let commit)):
            guard let path = commit.path else {
                throw MLSError.senderNotAllowed("a new_member_commit commit must carry an UpdatePath")
            }
            return SignaturePublicKey(path.leafNode.signatureKey)
        case (.newMemberProposal, .proposal(.add(let add))):
            return SignaturePublicKey(add.keyPackage.leafNode.signatureKey)
        case (.newMemberCommit, _), (.newMemberProposal, _):
            throw MLSError.senderNotAllowed("new-member sender with the wrong content")
        case (.member, _), (.external, _):
            return try lookup(content.sender)
        }
    }
}
