/// Index types of the array representation of a ratchet tree (RFC 9420 §4.1, Appendix C).
///
/// Leaves and nodes are numbered differently — leaf `i` is node `2i` — and mixing the two is a
/// classic source of bugs, so each has its own type and conversions are explicit.

/// A leaf's position among the leaves of the tree (RFC 9420 "leaf index"; `uint32` on the wire).
public struct LeafIndex: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let value: UInt32

    public init(_ value: UInt32) { self.value = value }

    /// The node index of this leaf in the array representation (`2 * value`; never overflows,
    /// since node indices are `Int`).
    public var nodeIndex: NodeIndex { NodeIndex(Int(value) * 2) }

    public static func < (lhs: LeafIndex, rhs: LeafIndex) -> Bool { lhs.value < rhs.value }

    public var description: String { "leaf \(value)" }
}

extension LeafIndex: TLSCodable {
    public func encode(to writer: inout TLSWriter) { writer.writeUInt32(value) }
    public init(from reader: inout TLSReader) throws { self.init(try reader.readUInt32()) }
}

/// A node's position in the array representation: leaves at even, parents at odd indices.
public struct NodeIndex: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let value: Int

    public init(_ value: Int) { self.value = value }

    public var isLeaf: Bool { value & 1 == 0 }

    /// The leaf this node holds, or nil for a parent node.
    public var leafIndex: LeafIndex? {
        guard isLeaf, value >= 0, value / 2 <= Int(UInt32.max) else { return nil }
        return LeafIndex(UInt32(value / 2))
    }

    /// Height above the leaves: the number of trailing one bits (RFC 9420 Appendix C `level`).
    public var level: Int { (~value).trailingZeroBitCount }

    /// Left child in the unbounded complete tree; nil for a leaf. Within a tree of a given
    /// size use `TreeSize.left(of:)`.
    public var leftChild: NodeIndex? {
        let k = level
        guard k > 0 else { return nil }
        return NodeIndex(value ^ (1 << (k - 1)))
    }

    /// Right child in the unbounded complete tree; nil for a leaf (see `TreeSize.right(of:)`).
    public var rightChild: NodeIndex? {
        let k = level
        guard k > 0 else { return nil }
        return NodeIndex(value ^ (3 << (k - 1)))
    }

    /// Parent in the unbounded complete tree (RFC 9420 Appendix C `parent` without the bound).
    var parentStep: NodeIndex {
        let k = level
        let b = (value >> (k + 1)) & 1
        return NodeIndex((value | (1 << k)) ^ (b << (k + 1)))
    }

    /// Node indices of any tree with `uint32` leaf indices lie below this bound; values outside
    /// `0..<bound` (e.g. from hostile input) belong to no tree and relate to nothing.
    static let bound = 1 << 34

    var isInAnyTree: Bool { value >= 0 && value < Self.bound }

    /// The lowest and highest node index of the subtree headed by this node (just the node
    /// itself for an index outside any tree).
    public var subtreeSpan: ClosedRange<Int> {
        guard isInAnyTree else { return value...value }
        let half = (1 << level) - 1
        return (value - half)...(value + half)
    }

    /// Whether `other` lies in the subtree headed by this node (a node is in its own subtree).
    public func subtreeContains(_ other: NodeIndex) -> Bool {
        isInAnyTree && other.isInAnyTree && subtreeSpan.contains(other.value)
    }

    /// Whether the leaf lies in the subtree headed by this node.
    public func subtreeContains(_ leaf: LeafIndex) -> Bool { subtreeContains(leaf.nodeIndex) }

    /// The lowest node whose subtree holds both nodes (RFC 9420 Appendix C
    /// `common_ancestor_direct`); a node is its own ancestor here. Nil when either index lies
    /// outside any tree.
    public func commonAncestor(with other: NodeIndex) -> NodeIndex? {
        guard isInAnyTree, other.isInAnyTree else { return nil }
        let lx = level + 1, ly = other.level + 1
        if lx <= ly, value >> ly == other.value >> ly { return other }
        if ly <= lx, value >> lx == other.value >> lx { return self }
        var xn = value, yn = other.value, k = 0
        while xn != yn {
            xn >>= 1
            yn >>= 1
            k += 1
        }
        return NodeIndex((xn << k) + (1 << (k - 1)) - 1)
    }

    public static func < (lhs: NodeIndex, rhs: NodeIndex) -> Bool { lhs.value < rhs.value }

    public var description: String { "node \(value)" }
}
