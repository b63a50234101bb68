/// `KeyPackage` (RFC 9420 §10) as carried on the wire: what a client publishes so others can
/// add it to a group.
///
/// A decoded KeyPackage is unverified: its leaf and package signatures, suite and lifetime are
/// checked by validation before it may be added. Marmot publishes the raw TLS encoding of this
/// struct (not wrapped in MLSMessage) in kind-30443 events.
public struct KeyPackage: Hashable, Sendable, TLSCodable {
    public var version: ProtocolVersion
    /// The suite as carried; validation requires 0x0001.
    public var cipherSuite: CipherSuite
    /// `HPKEPublicKey init_key`: Welcome secrets for this member are encrypted to it.
    public var initKey: [UInt8]
    public var leafNode: LeafNode
    public var extensions: Extensions
    public var signature: [UInt8]

    public init(
        version: ProtocolVersion = .mls10, cipherSuite: CipherSuite = .mls128DHKEMX25519AES128GCMSHA256Ed25519, initKey: [UInt8], leafNode: LeafNode,
        extensions: Extensions = Extensions(), signature: [UInt8] = []
    ) {
        self.version = version
        self.cipherSuite = cipherSuite
        self.initKey = initKey
        self.leafNode = leafNode
        self.extensions = extensions
        self.signature = signature
    }

    /// The label SignWithLabel/VerifyWithLabel use for KeyPackages.
    public static let signatureLabel = "KeyPackageTBS"
    /// The RefHash label of a `KeyPackageRef` (RFC 9420 §5.2).
    public static let referenceLabel = "MLS 1.0 KeyPackage Reference"

    /// The `KeyPackageTBS` bytes: everything but the signature.
    public var toBeSigned: [UInt8] {
        var w = TLSWriter(capacity: 320)
        encodeContent(to: &w)
        return w.bytes
    }

    private func encodeContent(to w: inout TLSWriter) {
        version.encode(to: &w)
        cipherSuite.encode(to: &w)
        w.writeOpaque(initKey)
        leafNode.encode(to: &w)
        extensions.encode(to: &w)
    }

    public func encode(to writer: inout TLSWriter) {
        encodeContent(to: &writer)
        writer.writeOpaque(signature)
    }

    public init(from reader: inout TLSReader) throws {
        version = try ProtocolVersion(from: &reader)
        cipherSuite = try CipherSuite(from: &reader)
        initKey = try reader.readOpaque()
        leafNode = try LeafNode(from: &reader)
        extensions = try Extensions(from: &reader)
        try extensions.validate(for: .keyPackage)
        signature = try reader.readOpaque()
    }
}
