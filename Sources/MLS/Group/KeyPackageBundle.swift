/// A KeyPackage we created, with the private keys that go with it (OpenMLS `KeyPackageBundle`):
/// the init key a Welcome's secrets are encrypted to, the leaf's encryption key, and the
/// signature key of the leaf.
///
/// Marmot publishes `keyPackage` (kind 30443) and keeps the bundle until a Welcome arrives;
/// a `last_resort` package may serve several Welcomes, so joining does not consume it.
public struct KeyPackageBundle: Sendable, CustomStringConvertible {
    public let keyPackage: KeyPackage
    /// `KeyPackageRef`: how Welcomes address this package (Marmot's `i` tag).
    public let reference: [UInt8]
    public let initPrivateKey: HPKEPrivateKey
    public let encryptionPrivateKey: HPKEPrivateKey
    public let signer: SignaturePrivateKey

    public var description: String { "KeyPackageBundle(\(reference.count)-byte ref, private keys redacted)" }

    /// Creates and signs a KeyPackage (RFC 9420 §10) with fresh init and encryption keys.
    ///
    /// - `capabilities` must list every non-default extension type used in `extensions` and
    ///   `leafExtensions` (e.g. `last_resort`) and the credential type; Marmot adds 0xF2EE, the
    ///   SelfRemove proposal type and GREASE values.
    /// - `extensions` are the KeyPackage's own (Marmot: `[.lastResort]`).
    ///
    /// The result is checked with `KeyPackage.validate`, so a package a peer would reject is
    /// never produced.
    public static func create(
        credential: Credential, signer: SignaturePrivateKey, capabilities: Capabilities = Capabilities(),
        lifetime: Lifetime, extensions: Extensions = Extensions(), leafExtensions: Extensions = Extensions(),
        cipherSuite: CipherSuite = .mls128DHKEMX25519AES128GCMSHA256Ed25519,
        using rng: inout some RandomNumberGenerator
    ) throws -> KeyPackageBundle {
        let suite: CipherSuiteProvider
        do { suite = try CipherSuiteProvider(cipherSuite) } catch {
            throw MLSError.invalidGroupParameters("unsupported cipher suite \(cipherSuite)")
        }
        do {
            try extensions.validate(for: .keyPackage)
            try leafExtensions.validate(for: .leafNode)
        } catch {
            throw MLSError.invalidGroupParameters("an extension is not allowed in a KeyPackage or leaf node")
        }
        let initPair = try suite.hpke.generateKeyPair(using: &rng)
        let encryptionPair = try suite.hpke.generateKeyPair(using: &rng)
        var leaf = LeafNode(
            encryptionKey: encryptionPair.publicKey.bytes, signatureKey: signer.publicKey.bytes, credential: credential,
            capabilities: capabilities, source: .keyPackage(lifetime), extensions: leafExtensions)
        try leaf.sign(with: signer, suite: suite, position: nil)
        var keyPackage = KeyPackage(cipherSuite: cipherSuite, initKey: initPair.publicKey.bytes, leafNode: leaf, extensions: extensions)
        try keyPackage.sign(with: signer, suite: suite)
        // Validate inside the package's own window: everything but the caller's clock.
        let verified = try keyPackage.validate(at: lifetime.notBefore / 2 + lifetime.notAfter / 2 + (lifetime.notBefore & lifetime.notAfter & 1))
        return KeyPackageBundle(keyPackage: keyPackage, reference: verified.reference, initPrivateKey: initPair.privateKey,
                                encryptionPrivateKey: encryptionPair.privateKey, signer: signer)
    }

    init(keyPackage: KeyPackage, reference: [UInt8], initPrivateKey: HPKEPrivateKey, encryptionPrivateKey: HPKEPrivateKey,
         signer: SignaturePrivateKey) {
        self.keyPackage = keyPackage
        self.reference = reference
        self.initPrivateKey = initPrivateKey
        self.encryptionPrivateKey = encryptionPrivateKey
        self.signer = signer
    }

    /// A bundle restored from its parts (e.g. the mlswg passive-client vectors): the private
    /// keys must match the package's init, encryption and signature keys.
    public init(keyPackage: KeyPackage, initPrivateKey: HPKEPrivateKey, encryptionPrivateKey: HPKEPrivateKey,
                signer: SignaturePrivateKey) throws {
        let suite: CipherSuiteProvider
        do { suite = try CipherSuiteProvider(keyPackage.cipherSuite) } catch {
            throw MLSError.invalidKeyPackage("unsupported cipher suite \(keyPackage.cipherSuite)")
        }
        guard try initPrivateKey.publicKey().bytes == keyPackage.initKey else {
            throw MLSError.invalidGroupParameters("init private key does not match the KeyPackage")
        }
        guard try encryptionPrivateKey.publicKey().bytes == keyPackage.leafNode.encryptionKey else {
            throw MLSError.invalidGroupParameters("encryption private key does not match the leaf node")
        }
        guard signer.publicKey.bytes == keyPackage.leafNode.signatureKey else {
            throw MLSError.invalidGroupParameters("signature private key does not match the leaf node")
        }
        self.init(keyPackage: keyPackage, reference: keyPackage.reference(suite: suite), initPrivateKey: initPrivateKey,
                  encryptionPrivateKey: encryptionPrivateKey, signer: signer)
    }
}

extension Lifetime {
    /// OpenMLS's default KeyPackage window from `now` (Unix seconds): valid from one hour ago
    /// (clock skew) for 84 days, exactly `Lifetime.maximumRange` long.
    public static func standard(from now: UInt64) -> Lifetime {
        let margin: UInt64 = 3_600
        let notBefore = now >= margin ? now - margin : 0
        return Lifetime(notBefore: notBefore, notAfter: notBefore + Lifetime.maximumRange)
    }
}

extension KeyPackageBundle: TLSCodable {
    /// For the encrypted store only: writes the private keys in the clear.
    public func encode(to writer: inout TLSWriter) {
        keyPackage.encode(to: &writer)
        initPrivateKey.secret.withUnsafeBytes { writer.writeOpaque($0) }
        encryptionPrivateKey.secret.withUnsafeBytes { writer.writeOpaque($0) }
        signer.seed.withUnsafeBytes { writer.writeOpaque($0) }
    }

    public init(from reader: inout TLSReader) throws {
        let keyPackage = try KeyPackage(from: &reader)
        let initKey = try HPKEPrivateKey(GroupStateCodec.readSecret(&reader))
        let encryptionKey = try HPKEPrivateKey(GroupStateCodec.readSecret(&reader))
        let signer = try SignaturePrivateKey(seed: GroupStateCodec.readSecret(&reader))
        try self.init(keyPackage: keyPackage, initPrivateKey: initKey, encryptionPrivateKey: encryptionKey, signer: signer)
    }
}
