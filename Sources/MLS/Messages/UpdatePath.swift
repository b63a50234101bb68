/// `UpdatePathNode` (RFC 9420 §7.6): a new public key on the committer's direct path and the
/// path secret encrypted to each node of its copath resolution.
public struct UpdatePathNode: Hashable, Sendable, TLSCodable {
    public var encryptionKey: [UInt8]
    public var encryptedPathSecret: [HPKECiphertext]

    public init(encryptionKey: [UInt8], encryptedPathSecret: [HPKECiphertext]) {
        self.encryptionKey = encryptionKey
        self.encryptedPathSecret = encryptedPathSecret
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeOpaque(encryptionKey)
        writer.writeVector(encryptedPathSecret)
    }

    public init(from reader: inout TLSReader) throws {
        encryptionKey = try reader.readOpaque()
        encryptedPathSecret = try reader.readVector()
    }
}

/// `UpdatePath` (RFC 9420 §7.6): the committer's new leaf and one node per filtered direct-path
/// entry.
public struct UpdatePath: Hashable, Sendable, TLSCodable {
    public var leafNode: LeafNode
    public var nodes: [UpdatePathNode]

    public init(leafNode: LeafNode, nodes: [UpdatePathNode]) {
        self.leafNode = leafNode
        self.nodes = nodes
    }

    public func encode(to writer: inout TLSWriter) {
        leafNode.encode(to: &writer)
        writer.writeVector(nodes)
    }

    public init(from reader: inout TLSReader) throws {
        leafNode = try LeafNode(from: &reader)
        nodes = try reader.readVector()
    }
}
