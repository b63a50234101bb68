/// PrivateMessage protection (RFC 9420 §6.3):
/// ```
/// key, nonce        = next generation of the sender's handshake or application ratchet
/// ciphertext        = AEAD.Seal(key, nonce XOR reuse_guard, PrivateContentAAD, PrivateMessageContent)
/// sender_data_key   = ExpandWithLabel(sender_data_secret, "key",   ciphertext_sample, AEAD.Nk)
/// sender_data_nonce = ExpandWithLabel(sender_data_secret, "nonce", ciphertext_sample, AEAD.Nn)
/// encrypted_sender_data = AEAD.Seal(sender_data_key, sender_data_nonce, SenderDataAAD, SenderData)
/// ```
/// Proposals and commits use the handshake ratchet, application data the application ratchet.
extension MessageSecrets {
    /// Encrypts signed content from our own leaf as a PrivateMessage of this epoch, taking the
    /// next generation of our ratchet. The content must have been signed for `.privateMessage`
    /// by a member sender, and a commit must carry its confirmation tag. `rng` supplies the
    /// 4-byte reuse guard.
    ///
    /// The ratchet advance is part of the returned state: persist it before the ciphertext leaves
    /// the process, or a crash could reuse a key and nonce. A throw leaves `self` unchanged.
    public mutating func protectPrivate(_ content: AuthenticatedContent, padding: MessagePadding = .none,
                                        using rng: inout some RandomNumberGenerator) throws -> PrivateMessage {
        guard content.wireFormat == .privateMessage else {
            throw MLSError.wireFormatMismatch(expected: WireFormat.privateMessage.rawValue, actual: content.wireFormat.rawValue)
        }
        let framed = content.content
        try FramingRules.checkEpoch(groupID: framed.groupID, epoch: framed.epoch, contentType: framed.contentType,
                                    secrets: self, isPastEpoch: false)
        try FramingRules.check(framed, wireFormat: .privateMessage, confirmationTag: content.auth.confirmationTag)
        guard case .member(let leafValue) = framed.sender else {
            throw MLSError.senderNotAllowed("a PrivateMessage must come from a member")
        }
        let leaf = LeafIndex(leafValue)

        var tree = secretTree
        let material: RatchetKeyMaterial
        do {
            material = try tree.nextSenderKey(leaf: leaf, type: Self.ratchetType(for: framed.contentType))
        } catch {
            throw Self.senderKeyError(error, leaf: leafValue)
        }
        let reuseGuard = rng.randomBytes(4)

        var message = PrivateMessage(groupID: framed.groupID, epoch: framed.epoch, contentType: framed.contentType,
                                     authenticatedData: framed.authenticatedData, encryptedSenderData: [], ciphertext: [])
        var plaintext = PrivateMessageContent(body: framed.body, auth: content.auth).tlsSerialized
        defer { Secret.wipe(&plaintext) }
        plaintext.append(contentsOf: repeatElement(0, count: padding.paddingLength(contentLength: plaintext.count)))
        let senderData = SenderData(leafIndex: leafValue, generation: material.generation, reuseGuard: reuseGuard)
        do {
            message.ciphertext = try cipherSuite.aeadSeal(key: material.key, nonce: try material.nonce(reuseGuard: reuseGuard),
                                                          aad: message.contentAAD, plaintext: plaintext)
            let senderDataKey = try SenderDataKey(cipherSuite, senderDataSecret: senderDataSecret, ciphertext: message.ciphertext)
            message.encryptedSenderData = try cipherSuite.aeadSeal(key: senderDataKey.key, nonce: senderDataKey.nonce,
                                                                   aad: message.senderDataAAD, plaintext: senderData.tlsSerialized)
        } catch {
            throw MLSError.encryptionFailed
        }
        secretTree = tree
        return message
    }

    /// Decrypts and verifies a received PrivateMessage of this epoch: group and epoch, sender
    /// data, the generation (within the out-of-order tolerance and maximum forward distance, and
    /// not used before), the content (padding all zero), sender and content rules, then the
    /// signature under the key `signatureKey` returns for the member sender (its leaf's key in
    /// this epoch's tree; throw there for a blank or unknown leaf).
    ///
    /// The generation's key is consumed only when everything succeeds: a message that fails any
    /// check leaves `self` unchanged, so a forged message cannot burn a key a real one needs.
    /// `isPastEpoch` says these are the secrets of a past epoch, where only application messages
    /// are accepted.
    public mutating func unprotect(_ message: PrivateMessage, isPastEpoch: Bool = false,
                                   signatureKey: (Sender) throws -> SignaturePublicKey) throws -> VerifiedAuthenticatedContent {
        try FramingRules.checkEpoch(groupID: message.groupID, epoch: message.epoch, contentType: message.contentType,
                                    secrets: self, isPastEpoch: isPastEpoch)
        let senderData = try decryptSenderData(message)
        let leaf = senderData.leafIndex

        var tree = secretTree  // committed only when the message verifies
        let material: RatchetKeyMaterial
        do {
            material = try tree.receiverKey(leaf: LeafIndex(leaf), type: Self.ratchetType(for: message.contentType),
                                            generation: senderData.generation)
        } catch {
            throw Self.senderKeyError(error, leaf: leaf)
        }
        var plaintext: [UInt8]
        do {
            plaintext = try cipherSuite.aeadOpen(key: material.key, nonce: try material.nonce(reuseGuard: senderData.reuseGuard),
                                                 aad: message.contentAAD, ciphertext: message.ciphertext)
        } catch {
            throw MLSError.contentDecryptionFailed
        }
        defer { Secret.wipe(&plaintext) }
        let decrypted: PrivateMessageContent
        do {
            decrypted = try PrivateMessageContent(tlsSerialized: plaintext, contentType: message.contentType)
        } catch let error as TLSDecodingError {
            throw MLSError.malformedMessageContent(error)
        }

        let framed = FramedContent(groupID: message.groupID, epoch: message.epoch, sender: .member(leafIndex: leaf),
                                   authenticatedData: message.authenticatedData, body: decrypted.body)
        let content = AuthenticatedContent(wireFormat: .privateMessage, content: framed, auth: decrypted.auth)
        try FramingRules.check(framed, wireFormat: .privateMessage, confirmationTag: decrypted.auth.confirmationTag)
        let key = try FramingRules.signatureKey(for: framed, lookup: signatureKey)
        try content.verifySignature(key: key, serializedContext: serializedContext, suite: cipherSuite)
        secretTree = tree
        return VerifiedAuthenticatedContent(content, generation: senderData.generation)
    }

    /// Unprotects either kind of framed message (see the two `unprotect` overloads). Only a
    /// PrivateMessage advances the secret tree.
    public mutating func unprotect(_ message: ProtectedMessage, isPastEpoch: Bool = false,
                                   signatureKey: (Sender) throws -> SignaturePublicKey) throws -> VerifiedAuthenticatedContent {
        switch message {
        case .publicMessage(let m): return try unprotect(m, isPastEpoch: isPastEpoch, signatureKey: signatureKey)
        case .privateMessage(let m): return try unprotect(m, isPastEpoch: isPastEpoch, signatureKey: signatureKey)
        }
    }

    /// SenderData from `encrypted_sender_data`, keyed by a sample of the content ciphertext.
    private func decryptSenderData(_ message: PrivateMessage) throws -> SenderData {
        var plaintext: [UInt8]
        do {
            let key = try SenderDataKey(cipherSuite, senderDataSecret: senderDataSecret, ciphertext: message.ciphertext)
            plaintext = try cipherSuite.aeadOpen(key: key.key, nonce: key.nonce, aad: message.senderDataAAD,
                                                 ciphertext: message.encryptedSenderData)
        } catch {
            throw MLSError.senderDataDecryptionFailed
        }
        defer { Secret.wipe(&plaintext) }
        do {
            return try SenderData(tlsSerialized: plaintext)
        } catch let error as TLSDecodingError {
            throw MLSError.malformedSenderData(error)
        }
    }

    static func ratchetType(for contentType: ContentType) -> RatchetType {
        contentType == .application ? .application : .handshake
    }

    /// The framing error for a secret-tree lookup that failed for `leaf`.
    static func senderKeyError(_ error: Error, leaf: UInt32) -> MLSError {
        switch error {
        case MLSCryptoError.leafOutOfRange:
            return .leafIndexOutOfRange(leaf)
        case MLSCryptoError.generationAlreadyConsumed(let generation):
            return .generationReplayed(leaf: leaf, generation: generation)
        case MLSCryptoError.generationTooFarInFuture(let requested, let next):
            return .generationTooFarAhead(leaf: leaf, generation: requested, next: next)
        case MLSCryptoError.generationTooFarInPast(let requested, let newest):
            return .generationTooOld(leaf: leaf, generation: requested, newest: newest)
        default:
            return .senderKeyUnavailable(leaf: leaf)
        }
    }
}
