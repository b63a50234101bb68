/// A member's private view of the ratchet tree (RFC 9420 §4.2): the HPKE private key of its
/// own leaf and those of the parent nodes on its direct path that it learned from path secrets.
///
/// Keys are `HPKEPrivateKey`s (zeroed on release) and never appear in descriptions. The tree
/// invariant holds by construction: only nodes on the own leaf's direct path can hold a key,
/// and every key inserted is checked against the public key the tree holds for that node.
public struct TreeKEMPrivateKeys: Sendable, CustomStringConvertible {
    public let ownLeaf: LeafIndex
    private(set) var keys: [NodeIndex: HPKEPrivateKey]

    /// The private state of a member that knows only its leaf key (a joiner without path
    /// secret, or after an Update of its own leaf).
    public init(ownLeaf: LeafIndex, leafPrivateKey: HPKEPrivateKey) {
        self.ownLeaf = ownLeaf
        self.keys = [ownLeaf.nodeIndex: leafPrivateKey]
    }

    public func privateKey(at node: NodeIndex) -> HPKEPrivateKey? { keys[node] }

    /// The nodes this member holds private keys for, leaf first.
    public var nodes: [NodeIndex] { keys.keys.sorted { $0.level < $1.level } }

    public var description: String { "TreeKEMPrivateKeys(\(ownLeaf), \(keys.count) keys, redacted)" }

    /// Replaces the leaf's private key (after this member's own Update was applied).
    public mutating func setLeafPrivateKey(_ key: HPKEPrivateKey) { keys[ownLeaf.nodeIndex] = key }

    /// Stores the key pair derived from `pathSecret` for `node`, after checking that the node is
    /// on this member's direct path and that the tree holds the matching public key.
    public mutating func insertPathSecret(_ pathSecret: Secret, at node: NodeIndex, tree: RatchetTree,
                                          suite: CipherSuiteProvider) throws {
        guard !node.isLeaf, node.subtreeContains(ownLeaf), tree.size.contains(node) else {
            throw MLSError.privateStateMismatch(node: node.value)
        }
        let pair = try PathSecrets.nodeKeyPair(pathSecret, suite: suite)
        guard let key = tree.encryptionKey(at: node), key == pair.publicKey.bytes else {
            throw MLSError.privateStateMismatch(node: node.value)
        }
        keys[node] = pair.privateKey
    }

    mutating func setKey(_ key: HPKEPrivateKey, at node: NodeIndex) { keys[node] = key }

    mutating func removeKey(at node: NodeIndex) { keys[node] = nil }

    /// Drops every key whose node is gone, blank, or now holds another public key (after
    /// proposals blanked or replaced nodes, or the tree was truncated): outdated key material
    /// must not outlive its node (RFC 9420 §7.5).
    public mutating func prune(to tree: RatchetTree) {
        for (node, key) in keys {
            guard let pub = tree.encryptionKey(at: node), let mine = try? key.publicKey(), mine.bytes == pub else {
                keys[node] = nil
                continue
            }
        }
    }

    /// Checks that every key matches the tree: the node is non-blank and holds the public key
    /// of the private key (the mlswg treekem consistency check; also after restoring state).
    public func verify(against tree: RatchetTree) throws {
        for (node, key) in keys {
            guard let pub = tree.encryptionKey(at: node), (try? key.publicKey())?.bytes == pub else {
                throw MLSError.privateStateMismatch(node: node.value)
            }
        }
    }
}

extension TreeKEMPrivateKeys: TLSEncodable {
    /// `uint32 own_leaf; { uint32 node; opaque private_key<V>; } keys<V>` — for persisting group
    /// state only: this writes private keys out.
    public func encode(to writer: inout TLSWriter) {
        writer.writeUInt32(ownLeaf.value)
        writer.writeVector { w in
            for (node, key) in keys.sorted(by: { $0.key < $1.key }) {
                w.writeUInt32(UInt32(truncatingIfNeeded: node.value))
                key.secret.withUnsafeBytes { w.writeOpaque($0) }
            }
        }
    }
}

extension TreeKEMPrivateKeys: TLSDecodable {
    public init(from reader: inout TLSReader) throws {
        ownLeaf = LeafIndex(try reader.readUInt32())
        let entries = try reader.readVector { r -> (NodeIndex, HPKEPrivateKey) in
            let node = NodeIndex(Int(try r.readUInt32()))
            return (node, try HPKEPrivateKey(Secret(try r.readOpaque())))
        }
        var keys: [NodeIndex: HPKEPrivateKey] = [:]
        for (node, key) in entries {
            guard node.subtreeContains(ownLeaf), keys.updateValue(key, forKey: node) == nil else {
                throw TLSDecodingError.malformed("private key for node \(node.value) off the own direct path or repeated")
            }
        }
        self.keys = keys
    }
}

/// The path-secret derivations of RFC 9420 §7.4.
enum PathSecrets {
    /// `path_secret[n] = DeriveSecret(path_secret[n-1], "path")`; also the commit secret.
    static func next(_ pathSecret: Secret, suite: CipherSuiteProvider) -> Secret {
        suite.deriveSecret(pathSecret, label: "path")
    }

    /// `node_priv, node_pub = DeriveKeyPair(DeriveSecret(path_secret, "node"))`.
    static func nodeKeyPair(_ pathSecret: Secret, suite: CipherSuiteProvider) throws -> HPKEKeyPair {
        try suite.deriveKeyPair(suite.deriveSecret(pathSecret, label: "node"))
    }

    static let encryptionLabel = "UpdatePathNode"
}
