/// The secret tree of one epoch (RFC 9420 §9): from `encryption_secret` at the root, a secret
/// per node down to each leaf, where a handshake and an application hash ratchet start.
///
/// ```
/// tree_node_[root]_secret = encryption_secret
/// left child:  ExpandWithLabel(tree_node_[N]_secret, "tree", "left",  KDF.Nh)
/// right child: ExpandWithLabel(tree_node_[N]_secret, "tree", "right", KDF.Nh)
/// handshake_ratchet_secret_[N]_[0]   = ExpandWithLabel(tree_node_[N]_secret, "handshake", "", KDF.Nh)
/// application_ratchet_secret_[N]_[0] = ExpandWithLabel(tree_node_[N]_secret, "application", "", KDF.Nh)
/// ```
/// Secrets are derived lazily and deleted as RFC 9420 §9.2 asks: a node's secret once its
/// children's exist, a leaf's once its ratchets exist, a generation's key once handed out.
///
/// A value type: every lookup that hands out a key mutates it, and a lookup that throws leaves
/// it unchanged. To keep a failed decryption (bad AEAD tag) from consuming a key, look the key
/// up on a copy and keep the copy only when the open succeeds.
public struct SecretTree: Sendable, Equatable {
    public let cipherSuite: CipherSuiteProvider
    public let treeSize: TreeSize
    public let configuration: SenderRatchetConfiguration
    /// Node secrets not yet consumed, by node index.
    private(set) var nodeSecrets: [Int: Secret]
    /// The ratchets of leaves whose secret has been consumed.
    private(set) var ratchets: [RatchetID: HashRatchet]

    struct RatchetID: Hashable, Sendable {
        let leaf: UInt32
        let type: RatchetType
    }

    /// A tree for `leafCount` leaves (the ratchet tree's leaf count) rooted at `encryptionSecret`.
    public init(_ cs: CipherSuiteProvider, encryptionSecret: Secret, leafCount: Int,
                configuration: SenderRatchetConfiguration = .default) throws {
        guard let size = TreeSize(leafCount: leafCount) else {
            throw MLSCryptoError.invalidLength(field: "secret tree leaf count", expected: 1, actual: leafCount)
        }
        cipherSuite = cs
        treeSize = size
        self.configuration = configuration
        nodeSecrets = [size.root.value: encryptionSecret]
        ratchets = [:]
    }

    /// A tree shaped like the ratchet tree of `treeSize`.
    public init(_ cs: CipherSuiteProvider, encryptionSecret: Secret, treeSize: TreeSize,
                configuration: SenderRatchetConfiguration = .default) {
        self.init(cs, treeSize: treeSize, configuration: configuration,
                  nodeSecrets: [treeSize.root.value: encryptionSecret], ratchets: [:])
    }

    init(_ cs: CipherSuiteProvider, treeSize: TreeSize, configuration: SenderRatchetConfiguration,
         nodeSecrets: [Int: Secret], ratchets: [RatchetID: HashRatchet]) {
        cipherSuite = cs
        self.treeSize = treeSize
        self.configuration = configuration
        self.nodeSecrets = nodeSecrets
        self.ratchets = ratchets
    }

    /// The key and nonce for this member's next message of `type` from its own `leaf`.
    public mutating func nextSenderKey(leaf: LeafIndex, type: RatchetType) throws -> RatchetKeyMaterial {
        var updated = self  // all or nothing: a throw leaves the tree as it was
        var ratchet = try updated.takeRatchet(leaf: leaf, type: type)
        let material = try ratchet.next(cipherSuite)
        updated.ratchets[RatchetID(leaf: leaf.value, type: type)] = ratchet
        self = updated
        return material
    }

    /// The key and nonce of `generation` of `leaf`'s `type` ratchet, for decrypting a message.
    /// Throws for generations already used, too old for the out-of-order window, or too far ahead.
    public mutating func receiverKey(leaf: LeafIndex, type: RatchetType, generation: UInt32) throws -> RatchetKeyMaterial {
        var updated = self  // all or nothing: a throw leaves the tree as it was
        var ratchet = try updated.takeRatchet(leaf: leaf, type: type)
        let material = try ratchet.key(cipherSuite, generation: generation, configuration: configuration)
        updated.ratchets[RatchetID(leaf: leaf.value, type: type)] = ratchet
        self = updated
        return material
    }

    /// The generation `leaf`'s `type` ratchet would hand out next (0 if not yet started).
    public func nextGeneration(leaf: LeafIndex, type: RatchetType) -> UInt32 {
        ratchets[RatchetID(leaf: leaf.value, type: type)]?.nextGeneration ?? 0
    }

    /// The ratchet of (leaf, type), deriving the leaf's secret and both its ratchets if needed.
    private mutating func takeRatchet(leaf: LeafIndex, type: RatchetType) throws -> HashRatchet {
        guard treeSize.contains(leaf) else {
            throw MLSCryptoError.leafOutOfRange(leaf: leaf.value, leafCount: UInt32(truncatingIfNeeded: treeSize.leafCount))
        }
        if let ratchet = ratchets[RatchetID(leaf: leaf.value, type: type)] { return ratchet }
        let leafSecret = try deriveNodeSecret(leaf.nodeIndex)
        nodeSecrets[leaf.nodeIndex.value] = nil
        for ratchetType in RatchetType.allCases {
            let root = try cipherSuite.expandWithLabel(leafSecret, label: ratchetType.label, context: [], length: cipherSuite.kdfNh)
            ratchets[RatchetID(leaf: leaf.value, type: ratchetType)] = HashRatchet(secret: root)
        }
        guard let ratchet = ratchets[RatchetID(leaf: leaf.value, type: type)] else {
            throw MLSCryptoError.secretUnavailable("ratchet of \(leaf)")
        }
        return ratchet
    }

    /// The secret of `target`, derived down from its lowest ancestor that still has one; every
    /// consumed ancestor is deleted and the off-path children are kept.
    private mutating func deriveNodeSecret(_ target: NodeIndex) throws -> Secret {
        let path = [target] + treeSize.directPath(of: target)  // target up to the root
        guard let start = path.firstIndex(where: { nodeSecrets[$0.value] != nil }),
              var secret = nodeSecrets[path[start].value] else {
            throw MLSCryptoError.secretUnavailable("secret of \(target) was already consumed")
        }
        var index = start
        while index > 0 {
            let node = path[index]
            let next = path[index - 1]
            guard let left = treeSize.left(of: node), let right = treeSize.right(of: node) else {
                throw MLSCryptoError.secretUnavailable("children of \(node)")
            }
            let leftSecret = try cipherSuite.expandWithLabel(secret, label: "tree", context: Array("left".utf8), length: cipherSuite.kdfNh)
            let rightSecret = try cipherSuite.expandWithLabel(secret, label: "tree", context: Array("right".utf8), length: cipherSuite.kdfNh)
            nodeSecrets[node.value] = nil
            if next == left {
                nodeSecrets[right.value] = rightSecret
                secret = leftSecret
            } else {
                nodeSecrets[left.value] = leftSecret
                secret = rightSecret
            }
            index -= 1
        }
        return secret
    }
}

extension SecretTree: CustomStringConvertible, CustomReflectable {
    public var description: String { "SecretTree(\(treeSize), redacted)" }
    public var customMirror: Mirror { Mirror(self, children: ["treeSize": treeSize]) }
}

extension SecretTree: TLSCodable {
    /// Group-state serialization (for the encrypted store, never the wire). The output holds
    /// the remaining node secrets, ratchet secrets and unused skipped keys in the clear.
    public func encode(to writer: inout TLSWriter) {
        writer.writeUInt16(cipherSuite.suite.rawValue)
        writer.writeUInt32(UInt32(truncatingIfNeeded: treeSize.leafCount - 1))
        writer.writeUInt32(configuration.outOfOrderTolerance)
        writer.writeUInt32(configuration.maximumForwardDistance)
        writer.writeVector { w in
            for (node, secret) in nodeSecrets.sorted(by: { $0.key < $1.key }) {
                w.writeUInt32(UInt32(truncatingIfNeeded: node))
                secret.withUnsafeBytes { w.writeOpaque($0) }
            }
        }
        writer.writeVector { w in
            for (id, ratchet) in ratchets.sorted(by: { ($0.key.leaf, $0.key.type.rawValue) < ($1.key.leaf, $1.key.type.rawValue) }) {
                w.writeUInt32(id.leaf)
                w.writeUInt8(id.type.rawValue)
                w.writeUInt32(ratchet.nextGeneration)
                if let secret = ratchet.secret {
                    w.writeUInt8(1)
                    secret.withUnsafeBytes { w.writeOpaque($0) }
                } else {
                    w.writeUInt8(0)
                }
                w.writeVector { s in
                    for (generation, material) in ratchet.skipped.sorted(by: { $0.key < $1.key }) {
                        s.writeUInt32(generation)
                        material.key.withUnsafeBytes { s.writeOpaque($0) }
                        material.nonce.withUnsafeBytes { s.writeOpaque($0) }
                    }
                }
            }
        }
    }

    public init(from reader: inout TLSReader) throws {
        let cs = try CipherSuiteProvider(CipherSuite(rawValue: try reader.readUInt16()))
        let leafCountMinusOne = try reader.readUInt32()
        guard let size = TreeSize(leafCount: Int(leafCountMinusOne) + 1) else {
            throw TLSDecodingError.malformed("secret tree leaf count")
        }
        let configuration = SenderRatchetConfiguration(outOfOrderTolerance: try reader.readUInt32(),
                                                       maximumForwardDistance: try reader.readUInt32())
        func readSecret(_ r: inout TLSReader, length: Int, _ field: String) throws -> Secret {
            var bytes = try r.readOpaque()
            defer { Secret.wipe(&bytes) }
            guard bytes.count == length else { throw TLSDecodingError.malformed("\(field) of \(bytes.count) bytes") }
            return Secret(bytes)
        }
        var nodeSecrets: [Int: Secret] = [:]
        for (node, secret) in try reader.readVector({ r in (Int(try r.readUInt32()), try readSecret(&r, length: cs.kdfNh, "node secret")) }) {
            guard size.contains(NodeIndex(node)), nodeSecrets.updateValue(secret, forKey: node) == nil else {
                throw TLSDecodingError.malformed("secret tree node \(node)")
            }
        }
        var ratchets: [RatchetID: HashRatchet] = [:]
        let entries = try reader.readVector { r -> (RatchetID, HashRatchet) in
            let leaf = try r.readUInt32()
            let rawType = try r.readUInt8()
            guard let type = RatchetType(rawValue: rawType) else {
                throw TLSDecodingError.invalidValue(field: "ratchet type", value: UInt64(rawType))
            }
            let next = try r.readUInt32()
            let secret = try r.readOptional { try readSecret(&$0, length: cs.kdfNh, "ratchet secret") }
            var skipped: [UInt32: RatchetKeyMaterial] = [:]
            for material in try r.readVector({ s in
                RatchetKeyMaterial(generation: try s.readUInt32(), key: try readSecret(&s, length: cs.aeadNk, "ratchet key"),
                                   nonce: try readSecret(&s, length: cs.aeadNn, "ratchet nonce"))
            }) {
                guard material.generation < next, skipped.updateValue(material, forKey: material.generation) == nil else {
                    throw TLSDecodingError.malformed("skipped generation \(material.generation)")
                }
            }
            return (RatchetID(leaf: leaf, type: type), HashRatchet(nextGeneration: next, secret: secret, skipped: skipped))
        }
        for (id, ratchet) in entries {
            guard size.contains(LeafIndex(id.leaf)), ratchets.updateValue(ratchet, forKey: id) == nil else {
                throw TLSDecodingError.malformed("ratchet of leaf \(id.leaf)")
            }
        }
        self.init(cs, treeSize: size, configuration: configuration, nodeSecrets: nodeSecrets, ratchets: ratchets)
    }
}
