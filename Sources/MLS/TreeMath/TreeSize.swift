/// The shape of a left-balanced binary tree with a given number of leaves, and the node
/// relationships within it (RFC 9420 §4.1 and Appendix C).
///
/// MLS ratchet trees are always full (2^d leaves), where these functions coincide with the
/// RFC's; they are also correct for any other leaf count, where a node's parent or right child
/// in the unbounded tree may lie beyond the array and the walk continues past it.
public struct TreeSize: Hashable, Sendable, CustomStringConvertible {
    /// Number of leaves (≥ 1).
    public let leafCount: Int

    /// A tree of `leafCount` leaves; nil when `leafCount` is not positive or is too large for
    /// `uint32` leaf indices.
    public init?(leafCount: Int) {
        guard leafCount >= 1, leafCount <= Int(UInt32.max) + 1 else { return nil }
        self.leafCount = leafCount
    }

    /// For counts already known to be in range (internal callers only).
    init(validLeafCount: Int) { self.leafCount = validLeafCount }

    static let one = TreeSize(validLeafCount: 1)

    /// The smallest full tree (2^d leaves) holding `leafCount` leaves.
    public static func full(holding leafCount: Int) -> TreeSize? {
        guard leafCount >= 1, leafCount <= Int(UInt32.max) + 1 else { return nil }
        var n = 1
        while n < leafCount { n <<= 1 }
        return TreeSize(leafCount: n)
    }

    /// Number of nodes in the array representation (`2n - 1`).
    public var nodeCount: Int { 2 * (leafCount - 1) + 1 }

    public var isFull: Bool { leafCount & (leafCount - 1) == 0 }

    public var root: NodeIndex {
        let w = nodeCount
        return NodeIndex((1 << (Int.bitWidth - 1 - w.leadingZeroBitCount)) - 1)
    }

    public func contains(_ node: NodeIndex) -> Bool { node.value >= 0 && node.value < nodeCount }

    public func contains(_ leaf: LeafIndex) -> Bool { Int(leaf.value) < leafCount }

    /// The left child; nil for leaves and nodes outside the tree.
    public func left(of node: NodeIndex) -> NodeIndex? {
        guard contains(node) else { return nil }
        return node.leftChild
    }

    /// The right child; past the end of a non-full tree this descends to the left.
    public func right(of node: NodeIndex) -> NodeIndex? {
        guard contains(node), var r = node.rightChild else { return nil }
        while r.value >= nodeCount {
            guard let l = r.leftChild else { return nil }
            r = l
        }
        return r
    }

    /// The parent; nil for the root and nodes outside the tree.
    public func parent(of node: NodeIndex) -> NodeIndex? {
        guard contains(node), node != root else { return nil }
        var p = node.parentStep
        while p.value >= nodeCount { p = p.parentStep }
        return p
    }

    /// The other child of the node's parent; nil for the root and nodes outside the tree.
    public func sibling(of node: NodeIndex) -> NodeIndex? {
        guard let p = parent(of: node) else { return nil }
        return node < p ? right(of: p) : left(of: p)
    }

    /// The node's ancestors from its parent up to the root (empty for the root or a node
    /// outside the tree).
    public func directPath(of node: NodeIndex) -> [NodeIndex] {
        var path: [NodeIndex] = []
        var x = node
        while let p = parent(of: x) {
            path.append(p)
            x = p
        }
        return path
    }

    public func directPath(of leaf: LeafIndex) -> [NodeIndex] { directPath(of: leaf.nodeIndex) }

    /// The siblings of the node and of each node of its direct path below the root, leaf to root.
    public func copath(of node: NodeIndex) -> [NodeIndex] { pathWithCopath(of: node).map(\.copathChild) }

    public func copath(of leaf: LeafIndex) -> [NodeIndex] { copath(of: leaf.nodeIndex) }

    /// Each direct-path node paired with its child on the copath, leaf to root: the raw
    /// material of the filtered direct path (RFC 9420 §4.1.2).
    public func pathWithCopath(of node: NodeIndex) -> [(parent: NodeIndex, copathChild: NodeIndex)] {
        var steps: [(parent: NodeIndex, copathChild: NodeIndex)] = []
        var x = node
        while let p = parent(of: x), let s = (x < p ? right(of: p) : left(of: p)) {
            steps.append((p, s))
            x = p
        }
        return steps
    }

    public func pathWithCopath(of leaf: LeafIndex) -> [(parent: NodeIndex, copathChild: NodeIndex)] {
        pathWithCopath(of: leaf.nodeIndex)
    }

    /// The lowest common ancestor of two nodes of this tree; nil if either lies outside it.
    public func commonAncestor(_ a: NodeIndex, _ b: NodeIndex) -> NodeIndex? {
        guard contains(a), contains(b) else { return nil }
        return a.commonAncestor(with: b)
    }

    /// The leaves in the subtree headed by `node`, clipped to this tree.
    public func leaves(under node: NodeIndex) -> ClosedRange<Int>? {
        guard contains(node) else { return nil }
        let span = node.subtreeSpan
        let last = min(span.upperBound, nodeCount - 1)
        return (span.lowerBound / 2)...(last / 2)
    }

    public var description: String { "tree of \(leafCount) leaves" }
}
