/// `optional<Node> ratchet_tree<V>` as received (RFC 9420 §12.4.3.3): from a GroupInfo's
/// `ratchet_tree` extension or any other untrusted source. Nothing here is checked beyond the
/// encoding; `RatchetTree(verifying:…)` turns it into a tree the group may use.
public struct UnverifiedRatchetTree: Hashable, Sendable, TLSCodable {
    /// The nodes in array order, without trailing blanks (the last one is non-blank).
    public let nodes: [RatchetTreeNode?]

    /// Wraps nodes as a sender would list them; fails like decoding does.
    public init(nodes: [RatchetTreeNode?]) throws {
        try Self.checkShape(nodes)
        self.nodes = nodes
    }

    /// Largest tree accepted: 2^20 leaves, far beyond any family group, bounds the work
    /// a hostile tree can cause.
    public static let maximumLeafCount = 1 << 20

    public func encode(to writer: inout TLSWriter) {
        writer.writeVector { w in
            for node in nodes { w.writeOptional(node) }
        }
    }

    public init(from reader: inout TLSReader) throws {
        let nodes = try reader.readVector { r in try r.readOptional(RatchetTreeNode.self) }
        try Self.checkShape(nodes)
        self.nodes = nodes
    }

    /// The encoding rules: non-empty, no trailing blank, leaves at even and parents at odd
    /// positions, within the size bound.
    private static func checkShape(_ nodes: [RatchetTreeNode?]) throws {
        guard let last = nodes.last else { throw TLSDecodingError.malformed("empty ratchet_tree") }
        guard last != nil else { throw TLSDecodingError.malformed("ratchet_tree ends with a blank node") }
        guard nodes.count <= 2 * maximumLeafCount - 1 else { throw TLSDecodingError.lengthTooLarge(nodes.count) }
        for (x, node) in nodes.enumerated() {
            switch node {
            case .leaf? where x & 1 == 1:
                throw TLSDecodingError.malformed("leaf node at parent position \(x)")
            case .parent? where x & 1 == 0:
                throw TLSDecodingError.malformed("parent node at leaf position \(x)")
            default: break
            }
        }
    }

    /// The full tree these nodes describe, padded with blanks to 2^d leaves; no validation.
    func padded() -> RatchetTree {
        // n nodes need ⌈(n+1)/2⌉ leaves, rounded up to a power of two.
        let needed = (nodes.count + 2) / 2
        var leafCount = 1
        while leafCount < needed { leafCount <<= 1 }
        var leaves = [LeafNode?](repeating: nil, count: leafCount)
        var parents = [ParentNode?](repeating: nil, count: leafCount - 1)
        for (x, node) in nodes.enumerated() {
            switch node {
            case .leaf(let leaf)?: leaves[x >> 1] = leaf
            case .parent(let parent)?: parents[x >> 1] = parent
            case nil: break
            }
        }
        return RatchetTree(uncheckedLeaves: leaves, parents: parents)
    }
}
