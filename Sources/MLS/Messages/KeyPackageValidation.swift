/// A KeyPackage that passed `KeyPackage.validate(at:)`: the only form the group engine accepts
/// for an Add, so an unchecked package cannot be added by accident.
public struct VerifiedKeyPackage: Hashable, Sendable {
    public let keyPackage: KeyPackage
    /// Its `KeyPackageRef`, which Welcomes address it by.
    public let reference: [UInt8]

    fileprivate init(keyPackage: KeyPackage, reference: [UInt8]) {
        self.keyPackage = keyPackage
        self.reference = reference
    }
}

extension KeyPackage {
    /// Validates the package on its own, as RFC 9420 §10.1 and OpenMLS 0.8.1's
    /// `KeyPackageIn::validate` do, at `time` (Unix seconds, from the caller's clock):
    ///
    /// - cipher suite 0x0001 and version mls10;
    /// - the leaf's source is `key_package`, its signature verifies, its credential type and
    ///   extensions are listed in its capabilities, and those capabilities include the suite and
    ///   version;
    /// - init_key differs from the leaf's encryption key, both 32 bytes (X25519);
    /// - the package signature verifies and its extensions are supported by the leaf;
    /// - the lifetime contains `time` and spans at most `Lifetime.maximumRange`. With
    ///   `requireAcceptableRange` false the span is not checked: OpenMLS 0.8.1 checks only the
    ///   window for Add proposals it receives (the range cap is MDK's policy for published
    ///   packages), and the mlswg passive-client vectors add packages valid 0…2^64−1.
    ///
    /// Checks that need a group (required_capabilities, duplicate keys in the tree, the group's
    /// suite) belong to the group engine. Throws `MLSError.invalidKeyPackage` naming the rule,
    /// or `MLSError.keyPackageLifetime`.
    public func validate(at time: UInt64, requireAcceptableRange: Bool = true) throws -> VerifiedKeyPackage {
        guard cipherSuite == .mls128DHKEMX25519AES128GCMSHA256Ed25519, let suite = try? CipherSuiteProvider(cipherSuite) else {
            throw MLSError.invalidKeyPackage("unsupported cipher suite \(cipherSuite)")
        }
        guard version == .mls10 else { throw MLSError.invalidKeyPackage("unsupported version \(version)") }

        guard case .keyPackage(let lifetime) = leafNode.source else {
            throw MLSError.invalidKeyPackage("leaf_node_source is not key_package")
        }
        do {
            try leafNode.verifySignature(suite: suite, position: nil)
        } catch {
            throw MLSError.invalidKeyPackage("leaf node signature does not verify")
        }
        let capabilities = leafNode.capabilities
        guard capabilities.cipherSuites.contains(cipherSuite) else {
            throw MLSError.invalidKeyPackage("leaf capabilities omit the package's cipher suite")
        }
        guard capabilities.versions.contains(version) else {
            throw MLSError.invalidKeyPackage("leaf capabilities omit the package's version")
        }
        guard capabilities.supportsCredential(leafNode.credential.credentialType) else {
            throw MLSError.invalidKeyPackage("leaf capabilities omit credential type \(leafNode.credential.credentialType)")
        }
        for ext in leafNode.extensions where !capabilities.supportsExtension(ext.extensionType) {
            throw MLSError.invalidKeyPackage("leaf extension \(ext.extensionType) not in its capabilities")
        }

        guard initKey.count == 32, leafNode.encryptionKey.count == 32 else {
            throw MLSError.invalidKeyPackage("init_key and encryption_key must be 32-byte X25519 keys")
        }
        guard initKey != leafNode.encryptionKey else {
            throw MLSError.invalidKeyPackage("init_key equals the leaf's encryption_key")
        }

        do {
            try verifySignature(suite: suite)
        } catch {
            throw MLSError.invalidKeyPackage("KeyPackage signature does not verify")
        }
        for ext in extensions where !capabilities.supportsExtension(ext.extensionType) {
            throw MLSError.invalidKeyPackage("KeyPackage extension \(ext.extensionType) not in the leaf's capabilities")
        }

        guard !requireAcceptableRange || lifetime.hasAcceptableRange, lifetime.contains(time) else {
            throw MLSError.keyPackageLifetime(notBefore: lifetime.notBefore, notAfter: lifetime.notAfter, time: time)
        }
        return VerifiedKeyPackage(keyPackage: self, reference: reference(suite: suite))
    }
}
