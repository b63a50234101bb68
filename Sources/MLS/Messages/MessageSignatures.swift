/// SignWithLabel / VerifyWithLabel (RFC 9420 §5.1.2) applied to the signed wire structures:
/// each signs its `…TBS` encoding under its own label. Verification throws
/// `MLSCryptoError.invalidSignature` (or `invalidPublicKey`) rather than returning a Bool.
extension LeafNode {
    /// Signs the leaf with the private key matching `signatureKey`, replacing `signature`.
    public mutating func sign(with key: SignaturePrivateKey, suite: CipherSuiteProvider, position: TreePosition?) throws {
        signature = try suite.signWithLabel(key, label: LeafNode.signatureLabel, content: toBeSigned(position: position))
    }

    /// Checks `signature` under the leaf's own `signatureKey`. `position` is required for update
    /// and commit sources (RFC 9420 §7.2).
    public func verifySignature(suite: CipherSuiteProvider, position: TreePosition?) throws {
        try suite.verifyWithLabel(
            SignaturePublicKey(signatureKey), label: LeafNode.signatureLabel,
            content: toBeSigned(position: position), signature: signature)
    }
}

extension KeyPackage {
    /// Signs the package with the leaf's signature key, replacing `signature`. Sign the leaf
    /// node first: its signature is part of the package's signed content.
    public mutating func sign(with key: SignaturePrivateKey, suite: CipherSuiteProvider) throws {
        signature = try suite.signWithLabel(key, label: KeyPackage.signatureLabel, content: toBeSigned)
    }

    /// Checks the package signature under the leaf's `signatureKey` (not the leaf's own
    /// signature; `KeyPackage.validate` checks both).
    public func verifySignature(suite: CipherSuiteProvider) throws {
        try suite.verifyWithLabel(
            SignaturePublicKey(leafNode.signatureKey), label: KeyPackage.signatureLabel,
            content: toBeSigned, signature: signature)
    }

    /// `KeyPackageRef` = RefHash("MLS 1.0 KeyPackage Reference", encoded KeyPackage): the value
    /// Welcomes address new members by and Marmot publishes in the `i` tag.
    public func reference(suite: CipherSuiteProvider) -> [UInt8] {
        suite.makeKeyPackageRef(tlsSerialized)
    }
}

extension GroupInfo {
    /// Signs with the signer's leaf key, replacing `signature`.
    public mutating func sign(with key: SignaturePrivateKey, suite: CipherSuiteProvider) throws {
        signature = try suite.signWithLabel(key, label: GroupInfo.signatureLabel, content: toBeSigned)
    }

    /// Checks `signature` under the signature key of the leaf at `signer`, which the caller
    /// looks up in the ratchet tree.
    public func verifySignature(signerKey: [UInt8], suite: CipherSuiteProvider) throws {
        try suite.verifyWithLabel(
            SignaturePublicKey(signerKey), label: GroupInfo.signatureLabel, content: toBeSigned, signature: signature)
    }
}
