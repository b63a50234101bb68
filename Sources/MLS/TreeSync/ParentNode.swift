/// `ParentNode` (RFC 9420 §7.1): an intermediate node of the ratchet tree.
///
/// `unmergedLeaves` lists leaves below this node that do not know its private key (they were
/// added after it was last set); the RFC requires increasing order, which tree validation checks.
public struct ParentNode: Hashable, Sendable, TLSCodable {
    /// `HPKEPublicKey encryption_key`.
    public var encryptionKey: [UInt8]
    /// `opaque parent_hash<V>`: the parent hash of the next node up its filtered direct path.
    public var parentHash: [UInt8]
    /// `uint32 unmerged_leaves<V>`.
    public var unmergedLeaves: [LeafIndex]

    public init(encryptionKey: [UInt8], parentHash: [UInt8] = [], unmergedLeaves: [LeafIndex] = []) {
        self.encryptionKey = encryptionKey
        self.parentHash = parentHash
        self.unmergedLeaves = unmergedLeaves
    }

    /// Adds `leaf` keeping the list sorted (no duplicate).
    mutating func addUnmerged(_ leaf: LeafIndex) {
        let i = unmergedLeaves.sortedInsertionIndex(of: leaf)
        if i < unmergedLeaves.count, unmergedLeaves[i] == leaf { return }
        unmergedLeaves.insert(leaf, at: i)
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeOpaque(encryptionKey)
        writer.writeOpaque(parentHash)
        writer.writeVector(unmergedLeaves)
    }

    public init(from reader: inout TLSReader) throws {
        encryptionKey = try reader.readOpaque()
        parentHash = try reader.readOpaque()
        unmergedLeaves = try reader.readVector(of: LeafIndex.self)
    }
}

/// `Node` (RFC 9420 §12.4.3.3): one entry of the `ratchet_tree` vector.
public enum RatchetTreeNode: Hashable, Sendable, TLSCodable {
    case leaf(LeafNode)
    case parent(ParentNode)

    /// `NodeType`: leaf 1, parent 2 (RFC 9420 §7.8).
    public var nodeType: UInt8 {
        switch self {
        case .leaf: return 1
        case .parent: return 2
        }
    }

    public var encryptionKey: [UInt8] {
        switch self {
        case .leaf(let leaf): return leaf.encryptionKey
        case .parent(let parent): return parent.encryptionKey
        }
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeUInt8(nodeType)
        switch self {
        case .leaf(let leaf): leaf.encode(to: &writer)
        case .parent(let parent): parent.encode(to: &writer)
        }
    }

    public init(from reader: inout TLSReader) throws {
        switch try reader.readUInt8() {
        case 1: self = .leaf(try LeafNode(from: &reader))
        case 2: self = .parent(try ParentNode(from: &reader))
        case let v: throw TLSDecodingError.invalidValue(field: "node_type", value: UInt64(v))
        }
    }
}

extension Array where Element == LeafIndex {
    /// The first position whose element is not below `leaf` (binary search; the list must be
    /// sorted).
    func sortedInsertionIndex(of leaf: LeafIndex) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if self[mid] < leaf { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Membership by binary search in a sorted list.
    func sortedContains(_ leaf: LeafIndex) -> Bool {
        let i = sortedInsertionIndex(of: leaf)
        return i < count && self[i] == leaf
    }
}
