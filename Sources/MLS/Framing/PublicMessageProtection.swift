/// PublicMessage protection (RFC 9420 §6.2): signed content in the clear, plus for member
/// senders `membership_tag = MAC(membership_key, AuthenticatedContentTBM)`, which shows the
/// sender held this epoch's secrets.
extension MessageSecrets {
    /// Frames signed content as a PublicMessage of this epoch. The content must have been signed
    /// for `.publicMessage`, be no application data, and (commits) carry its confirmation tag.
    public func protectPublic(_ content: AuthenticatedContent) throws -> PublicMessage {
        guard content.wireFormat == .publicMessage else {
            throw MLSError.wireFormatMismatch(expected: WireFormat.publicMessage.rawValue, actual: content.wireFormat.rawValue)
        }
        try FramingRules.checkEpoch(groupID: content.content.groupID, epoch: content.content.epoch,
                                    contentType: content.content.contentType, secrets: self, isPastEpoch: false)
        try FramingRules.check(content.content, wireFormat: .publicMessage, confirmationTag: content.auth.confirmationTag)
        var message = PublicMessage(content: content.content, auth: content.auth)
        if case .member = content.content.sender {
            message.membershipTag = cipherSuite.mac(key: membershipKey, data: message.toBeMACed(serializedContext: serializedContext))
        }
        return message
    }

    /// Verifies a received PublicMessage of this epoch: group and epoch, sender and content
    /// rules, the membership tag of a member sender (constant-time), then the signature under
    /// the key `signatureKey` returns for the sender (members: their leaf's key in this epoch's
    /// tree; external senders: the `external_senders` entry). New-member senders are verified
    /// with the key inside their own content and never reach `signatureKey`.
    ///
    /// `isPastEpoch` says these are the secrets of a past epoch, where only application messages
    /// are accepted — which a PublicMessage never is.
    public func unprotect(_ message: PublicMessage, isPastEpoch: Bool = false,
                          signatureKey: (Sender) throws -> SignaturePublicKey) throws -> VerifiedAuthenticatedContent {
        let content = message.authenticatedContent
        try FramingRules.checkEpoch(groupID: content.content.groupID, epoch: content.content.epoch,
                                    contentType: content.content.contentType, secrets: self, isPastEpoch: isPastEpoch)
        try FramingRules.check(content.content, wireFormat: .publicMessage, confirmationTag: content.auth.confirmationTag)
        switch content.content.sender {
        case .member:
            guard let tag = message.membershipTag else { throw MLSError.missingMembershipTag }
            let tbm = message.toBeMACed(serializedContext: serializedContext)
            guard cipherSuite.verifyMAC(key: membershipKey, data: tbm, mac: tag) else { throw MLSError.invalidMembershipTag }
        case .external, .newMemberProposal, .newMemberCommit:
            guard message.membershipTag == nil else {
                throw MLSError.senderNotAllowed("only a member's PublicMessage carries a membership tag")
            }
        }
        let key = try FramingRules.signatureKey(for: content.content, lookup: signatureKey)
        try content.verifySignature(key: key, serializedContext: serializedContext, suite: cipherSuite)
        return VerifiedAuthenticatedContent(content, generation: nil)
    }
}
