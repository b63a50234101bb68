/// The labeled functions of RFC 9420 §5: every derivation, signature, HPKE encryption and
/// reference hash in MLS is domain-separated by a label, prefixed "MLS 1.0 " except in RefHash.
extension CipherSuiteProvider {
    /// The prefix RFC 9420 puts before every ExpandWithLabel, SignWithLabel and EncryptWithLabel label.
    public static let labelPrefix: [UInt8] = Array("MLS 1.0 ".utf8)

    // MARK: Key derivation (§8)

    /// `ExpandWithLabel(Secret, Label, Context, Length) = KDF.Expand(Secret, KDFLabel, Length)`
    /// with `KDFLabel { uint16 length; opaque label<V> = "MLS 1.0 " + Label; opaque context<V>; }`.
    public func expandWithLabel(_ secret: Secret, label: [UInt8], context: [UInt8], length: Int) throws -> Secret {
        guard length >= 0, length <= Int(UInt16.max) else { throw MLSCryptoError.invalidOutputLength(length) }
        return try kdfExpand(prk: secret, info: kdfLabel(label: label, context: context, length: length), length: length)
    }

    public func expandWithLabel(_ secret: Secret, label: String, context: [UInt8], length: Int) throws -> Secret {
        try expandWithLabel(secret, label: Array(label.utf8), context: context, length: length)
    }

    /// `DeriveSecret(Secret, Label) = ExpandWithLabel(Secret, Label, "", KDF.Nh)`.
    public func deriveSecret(_ secret: Secret, label: [UInt8]) -> Secret {
        HKDFPrimitives.expandHashLength(prk: secret, info: kdfLabel(label: label, context: [], length: kdfNh))
    }

    public func deriveSecret(_ secret: Secret, label: String) -> Secret {
        deriveSecret(secret, label: Array(label.utf8))
    }

    /// `DeriveTreeSecret(Secret, Label, Generation, Length) =
    /// ExpandWithLabel(Secret, Label, uint32 Generation, Length)`.
    public func deriveTreeSecret(_ secret: Secret, label: String, generation: UInt32, length: Int) throws -> Secret {
        var context = TLSWriter(capacity: 4)
        context.writeUInt32(generation)
        return try expandWithLabel(secret, label: label, context: context.bytes, length: length)
    }

    private func kdfLabel(label: [UInt8], context: [UInt8], length: Int) -> [UInt8] {
        var writer = TLSWriter(capacity: 16 + label.count + context.count)
        writer.writeUInt16(UInt16(truncatingIfNeeded: length))
        writer.writeOpaque(CipherSuiteProvider.labelPrefix + label)
        writer.writeOpaque(context)
        return writer.bytes
    }

    // MARK: References (§5.2)

    /// `RefHash(label, value) = Hash(RefHashInput { opaque label<V>; opaque value<V>; })`;
    /// the label is used as given (it already reads "MLS 1.0 …").
    public func refHash(label: String, value: [UInt8]) -> [UInt8] {
        var writer = TLSWriter(capacity: 48 + value.count)
        writer.writeOpaque(Array(label.utf8))
        writer.writeOpaque(value)
        return hash(writer.bytes)
    }

    /// `MakeKeyPackageRef(value) = RefHash("MLS 1.0 KeyPackage Reference", value)`, where
    /// `value` is the complete encoded KeyPackage.
    public func makeKeyPackageRef(_ encodedKeyPackage: [UInt8]) -> [UInt8] {
        refHash(label: "MLS 1.0 KeyPackage Reference", value: encodedKeyPackage)
    }

    /// `MakeProposalRef(value) = RefHash("MLS 1.0 Proposal Reference", value)`, where `value`
    /// is the encoded AuthenticatedContent carrying the proposal.
    public func makeProposalRef(_ encodedAuthenticatedContent: [UInt8]) -> [UInt8] {
        refHash(label: "MLS 1.0 Proposal Reference", value: encodedAuthenticatedContent)
    }

    // MARK: Signatures (§5.1.2)

    /// `SignWithLabel(SignatureKey, Label, Content)` over
    /// `SignContent { opaque label<V> = "MLS 1.0 " + Label; opaque content<V>; }` (Ed25519).
    public func signWithLabel(_ key: SignaturePrivateKey, label: String, content: [UInt8]) throws -> [UInt8] {
        try key.sign(signContent(label: label, content: content))
    }

    /// `VerifyWithLabel`; throws `invalidSignature` (or `invalidPublicKey`) instead of returning
    /// false, so a caller cannot ignore the outcome.
    public func verifyWithLabel(_ key: SignaturePublicKey, label: String, content: [UInt8], signature: [UInt8]) throws {
        let publicKey = try key.ed25519()
        guard signature.count == 64, publicKey.isValidSignature(signature, for: signContent(label: label, content: content)) else {
            throw MLSCryptoError.invalidSignature
        }
    }

    private func signContent(label: String, content: [UInt8]) -> [UInt8] {
        var writer = TLSWriter(capacity: 32 + content.count)
        writer.writeOpaque(CipherSuiteProvider.labelPrefix + Array(label.utf8))
        writer.writeOpaque(content)
        return writer.bytes
    }

    // MARK: Public-key encryption (§5.1.3)

    /// `EncryptWithLabel(PublicKey, Label, Context, Plaintext) = SealBase(PublicKey, EncryptContext, "", Plaintext)`
    /// with `EncryptContext { opaque label<V> = "MLS 1.0 " + Label; opaque context<V>; }`.
    public func encryptWithLabel(_ publicKey: HPKEPublicKey, label: String, context: [UInt8], plaintext: [UInt8],
                                 using rng: inout some RandomNumberGenerator) throws -> HPKECiphertext {
        let (enc, ciphertext) = try hpke.sealBase(recipient: publicKey, info: encryptContext(label: label, context: context),
                                                  aad: [], plaintext: plaintext, using: &rng)
        return HPKECiphertext(kemOutput: enc, ciphertext: ciphertext)
    }

    /// `EncryptWithLabel` with an explicit ephemeral key pair (deterministic; for tests).
    public func encryptWithLabel(_ publicKey: HPKEPublicKey, label: String, context: [UInt8], plaintext: [UInt8],
                                 ephemeral: HPKEKeyPair) throws -> HPKECiphertext {
        let (enc, ciphertext) = try hpke.sealBase(recipient: publicKey, info: encryptContext(label: label, context: context),
                                                  aad: [], plaintext: plaintext, ephemeral: ephemeral)
        return HPKECiphertext(kemOutput: enc, ciphertext: ciphertext)
    }

    /// `DecryptWithLabel(PrivateKey, Label, Context, KEMOutput, Ciphertext)`.
    public func decryptWithLabel(_ privateKey: HPKEPrivateKey, label: String, context: [UInt8], ciphertext: HPKECiphertext) throws -> [UInt8] {
        try hpke.openBase(enc: ciphertext.kemOutput, recipient: privateKey, info: encryptContext(label: label, context: context),
                          aad: [], ciphertext: ciphertext.ciphertext)
    }

    private func encryptContext(label: String, context: [UInt8]) -> [UInt8] {
        var writer = TLSWriter(capacity: 32 + context.count)
        writer.writeOpaque(CipherSuiteProvider.labelPrefix + Array(label.utf8))
        writer.writeOpaque(context)
        return writer.bytes
    }

    // MARK: HPKE key derivation used by TreeKEM and the key schedule

    /// `DeriveKeyPair(secret)` of the suite's HPKE KEM (node keys from path secrets, the
    /// external key pair from `external_secret`).
    public func deriveKeyPair(_ secret: Secret) throws -> HPKEKeyPair {
        try hpke.deriveKeyPair(ikm: secret)
    }
}
