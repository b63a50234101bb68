/// `LeafNodeSource` (RFC 9420 §7.2): how a leaf node entered the tree.
public enum LeafNodeSource: Hashable, Sendable, TLSCodable {
    case keyPackage(Lifetime)
    case update
    case commit(parentHash: [UInt8])

    /// The wire discriminant: key_package 1, update 2, commit 3.
    public var rawValue: UInt8 {
        switch self {
        case .keyPackage: return 1
        case .update: return 2
        case .commit: return 3
        }
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeUInt8(rawValue)
        switch self {
        case .keyPackage(let lifetime): lifetime.encode(to: &writer)
        case .update: break
        case .commit(let parentHash): writer.writeOpaque(parentHash)
        }
    }

    public init(from reader: inout TLSReader) throws {
        switch try reader.readUInt8() {
        case 1: self = .keyPackage(try Lifetime(from: &reader))
        case 2: self = .update
        case 3: self = .commit(parentHash: try reader.readOpaque())
        case let v: throw TLSDecodingError.invalidValue(field: "leaf_node_source", value: UInt64(v))
        }
    }
}

/// Where a leaf sits, signed into `LeafNodeTBS` for update and commit sources (RFC 9420 §7.2).
public struct TreePosition: Hashable, Sendable {
    public var groupID: [UInt8]
    public var leafIndex: UInt32

    public init(groupID: [UInt8], leafIndex: UInt32) {
        self.groupID = groupID
        self.leafIndex = leafIndex
    }
}

/// `LeafNode` (RFC 9420 §7.2) as carried on the wire. A decoded leaf is unauthenticated: its
/// signature is checked against `toBeSigned(position:)` by whoever accepts it into a tree.
public struct LeafNode: Hashable, Sendable, TLSCodable {
    /// `HPKEPublicKey encryption_key` (X25519 for suite 1).
    public var encryptionKey: [UInt8]
    /// `SignaturePublicKey signature_key` (Ed25519 for suite 1).
    public var signatureKey: [UInt8]
    public var credential: Credential
    public var capabilities: Capabilities
    public var source: LeafNodeSource
    public var extensions: Extensions
    public var signature: [UInt8]

    public init(
        encryptionKey: [UInt8], signatureKey: [UInt8], credential: Credential, capabilities: Capabilities,
        source: LeafNodeSource, extensions: Extensions = Extensions(), signature: [UInt8] = []
    ) {
        self.encryptionKey = encryptionKey
        self.signatureKey = signatureKey
        self.credential = credential
        self.capabilities = capabilities
        self.source = source
        self.extensions = extensions
        self.signature = signature
    }

    /// The label SignWithLabel/VerifyWithLabel use for leaf nodes.
    public static let signatureLabel = "LeafNodeTBS"

    /// The `LeafNodeTBS` bytes. For update and commit sources the group id and leaf index are
    /// part of the signed content: pass `position`; without it those fields are omitted and the
    /// signature will not verify. For key_package sources `position` is ignored.
    public func toBeSigned(position: TreePosition?) -> [UInt8] {
        var w = TLSWriter(capacity: 256)
        encodeContent(to: &w)
        switch source {
        case .keyPackage:
            break
        case .update, .commit:
            if let position {
                w.writeOpaque(position.groupID)
                w.writeUInt32(position.leafIndex)
            }
        }
        return w.bytes
    }

    private func encodeContent(to w: inout TLSWriter) {
        w.writeOpaque(encryptionKey)
        w.writeOpaque(signatureKey)
        credential.encode(to: &w)
        capabilities.encode(to: &w)
        source.encode(to: &w)
        extensions.encode(to: &w)
    }

    public func encode(to writer: inout TLSWriter) {
        encodeContent(to: &writer)
        writer.writeOpaque(signature)
    }

    public init(from reader: inout TLSReader) throws {
        encryptionKey = try reader.readOpaque()
        signatureKey = try reader.readOpaque()
        credential = try Credential(from: &reader)
        capabilities = try Capabilities(from: &reader)
        source = try LeafNodeSource(from: &reader)
        extensions = try Extensions(from: &reader)
        try extensions.validate(for: .leafNode)
        signature = try reader.readOpaque()
    }
}
