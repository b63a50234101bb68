/// Signing framed content (RFC 9420 §6.1): `signature = SignWithLabel(., "FramedContentTBS",
/// FramedContentTBS)`, where the TBS binds the wire format and, for member and
/// new_member_commit senders, the current GroupContext.
extension AuthenticatedContent {
    /// Signs `content` for `wireFormat` with the sender's signature key. A commit's confirmation
    /// tag depends on this signature (through the confirmed transcript hash), so it starts out
    /// nil: set `auth.confirmationTag` before protecting a commit.
    ///
    /// `serializedContext` is the TLS encoding of the GroupContext of the content's epoch.
    public static func sign(_ content: FramedContent, wireFormat: WireFormat, signer: SignaturePrivateKey,
                            serializedContext: [UInt8], suite: CipherSuiteProvider) throws -> AuthenticatedContent {
        guard wireFormat == .publicMessage || wireFormat == .privateMessage else {
            throw MLSError.notAFramedMessage(wireFormat: wireFormat.rawValue)
        }
        let tbs = content.toBeSigned(wireFormat: wireFormat, serializedContext: serializedContext)
        let signature = try suite.signWithLabel(signer, label: FramedContent.signatureLabel, content: tbs)
        return AuthenticatedContent(wireFormat: wireFormat, content: content, auth: FramedContentAuthData(signature: signature))
    }

    /// Checks the signature under `key`; throws `invalidMessageSignature` or
    /// `invalidSenderSignatureKey`.
    func verifySignature(key: SignaturePublicKey, serializedContext: [UInt8], suite: CipherSuiteProvider) throws {
        let tbs = content.toBeSigned(wireFormat: wireFormat, serializedContext: serializedContext)
        do {
            try suite.verifyWithLabel(key, label: FramedContent.signatureLabel, content: tbs, signature: auth.signature)
        } catch MLSCryptoError.invalidPublicKey {
            throw MLSError.invalidSenderSignatureKey
        } catch {
            throw MLSError.invalidMessageSignature
        }
    }
}

extension MessageSecrets {
    /// Builds and signs this epoch's FramedContent from the member at `leaf`: the body, the
    /// application's `authenticatedData` (Marmot sends it empty) and the wire format it will be
    /// protected as. Commits still need their confirmation tag (see `AuthenticatedContent.sign`).
    public func sign(_ body: FramedContentBody, from leaf: LeafIndex, wireFormat: WireFormat,
                     authenticatedData: [UInt8] = [], signer: SignaturePrivateKey) throws -> AuthenticatedContent {
        let content = FramedContent(groupID: groupContext.groupID, epoch: groupContext.epoch,
                                    sender: .member(leafIndex: leaf.value), authenticatedData: authenticatedData, body: body)
        return try AuthenticatedContent.sign(content, wireFormat: wireFormat, signer: signer,
                                             serializedContext: serializedContext, suite: cipherSuite)
    }
}
