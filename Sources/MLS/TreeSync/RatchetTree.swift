/// The public state of a group's ratchet tree (RFC 9420 §7): leaf nodes, parent nodes, and the
/// tree hashes that summarize them.
///
/// A `RatchetTree` is always full (2^d leaves) and truncated (its right half holds a member, or
/// it has one leaf). Values of this type come from validation (`RatchetTree(verifying:…)`), from
/// group creation, or from applying operations to such a tree; untrusted bytes decode into
/// `UnverifiedRatchetTree` instead.
///
/// Every node's tree hash and the number of non-blank nodes in its subtree are cached and kept
/// current by each operation, which refreshes only the direct path it touched: a commit costs
/// O(log N) hashes, not a rehash of the whole tree.
public struct RatchetTree: Sendable {
    public internal(set) var size: TreeSize
    /// Leaf `i` of the tree; `leaves.count == size.leafCount`.
    var leaves: [LeafNode?]
    /// Parent node at node index `2i + 1`; `parents.count == size.leafCount - 1`.
    var parents: [ParentNode?]
    /// Tree hash of each node's subtree, by node index.
    var hashes: [[UInt8]]
    /// Number of non-blank nodes in each node's subtree, by node index: a zero prunes the
    /// subtree from resolutions without walking it.
    var nonBlankCounts: [Int]
    /// How many nodes hold each encryption key: O(1) freshness checks for UpdatePath keys.
    var encryptionKeyCounts: [[UInt8]: Int]

    /// A one-member tree holding `leaf` (group creation, RFC 9420 §11).
    public init(creator leaf: LeafNode) {
        self.init(uncheckedLeaves: [leaf], parents: [])
    }

    /// Builds a tree from node arrays whose sizes already match a full tree, computing caches.
    init(uncheckedLeaves leaves: [LeafNode?], parents: [ParentNode?]) {
        self.size = TreeSize(leafCount: max(1, leaves.count)) ?? TreeSize.one
        self.leaves = leaves
        self.parents = parents
        self.hashes = []
        self.nonBlankCounts = []
        self.encryptionKeyCounts = [:]
        recomputeAllCaches()
    }

    // MARK: Writing nodes (keeps the key index; caches are the caller's to refresh)

    mutating func setLeaf(_ leaf: LeafNode?, at i: Int) {
        countKey(leaves[i]?.encryptionKey, -1)
        leaves[i] = leaf
        countKey(leaf?.encryptionKey, +1)
    }

    mutating func setParent(_ parent: ParentNode?, at i: Int) {
        countKey(parents[i]?.encryptionKey, -1)
        parents[i] = parent
        countKey(parent?.encryptionKey, +1)
    }

    mutating func countKey(_ key: [UInt8]?, _ delta: Int) {
        guard let key else { return }
        let n = encryptionKeyCounts[key, default: 0] + delta
        encryptionKeyCounts[key] = n > 0 ? n : nil
    }

    // MARK: Reading

    public var leafCount: Int { size.leafCount }

    public func leaf(at index: LeafIndex) -> LeafNode? {
        guard size.contains(index) else { return nil }
        return leaves[Int(index.value)]
    }

    /// The parent node at `index`, or nil when blank, a leaf position or outside the tree.
    public func parent(at index: NodeIndex) -> ParentNode? {
        guard !index.isLeaf, size.contains(index) else { return nil }
        return parents[index.value >> 1]
    }

    public func node(at index: NodeIndex) -> RatchetTreeNode? {
        guard size.contains(index) else { return nil }
        if index.isLeaf { return leaves[index.value >> 1].map(RatchetTreeNode.leaf) }
        return parents[index.value >> 1].map(RatchetTreeNode.parent)
    }

    public func isBlank(_ index: NodeIndex) -> Bool { node(at: index) == nil }

    /// The HPKE public key held by a node, or nil when it is blank.
    public func encryptionKey(at index: NodeIndex) -> [UInt8]? {
        guard size.contains(index) else { return nil }
        if index.isLeaf { return leaves[index.value >> 1]?.encryptionKey }
        return parents[index.value >> 1]?.encryptionKey
    }

    /// The occupied leaves, left to right.
    public var members: [(index: LeafIndex, leaf: LeafNode)] {
        leaves.enumerated().compactMap { i, leaf in leaf.map { (LeafIndex(UInt32(i)), $0) } }
    }

    public var memberCount: Int { leaves.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }

    /// The leaf holding exactly `leaf` (a joiner finds itself by its KeyPackage's leaf node,
    /// RFC 9420 §12.4.3.1); nil if none.
    public func index(of leaf: LeafNode) -> LeafIndex? {
        leaves.firstIndex { $0 == leaf }.map { LeafIndex(UInt32($0)) }
    }

    /// The leftmost blank leaf, where the next Add lands (RFC 9420 §12.1.1); nil if none.
    public var leftmostBlankLeaf: LeafIndex? {
        firstBlankLeaf(from: 0).map { LeafIndex(UInt32($0)) }
    }

    /// The first blank leaf slot at or after `start`. Matches on the optional's case, so the
    /// scan copies no leaf node (a copy retains each of its arrays).
    func firstBlankLeaf(from start: Int) -> Int? {
        var i = max(0, start)
        while i < leaves.count {
            if case .none = leaves[i] { return i }
            i += 1
        }
        return nil
    }

    /// The tree hash of the whole tree (RFC 9420 §7.8), as GroupContext carries it.
    public var treeHash: [UInt8] { hashes[size.root.value] }

    /// The tree hash of the subtree headed by `index`; nil outside the tree.
    public func treeHash(of index: NodeIndex) -> [UInt8]? {
        guard size.contains(index) else { return nil }
        return hashes[index.value]
    }

    // MARK: Resolution and paths

    /// The resolution of a node (RFC 9420 §4.1.1): the non-blank nodes covering its subtree, in
    /// depth-first left-first order, each non-blank node followed by its unmerged leaves.
    /// Leaves in `excluding` (e.g. members added by the commit being built) are left out.
    public func resolution(of index: NodeIndex, excluding: Set<LeafIndex> = []) -> [NodeIndex] {
        var out: [NodeIndex] = []
        appendResolution(of: index, excluding: excluding, to: &out)
        return out
    }

    private func appendResolution(of index: NodeIndex, excluding: Set<LeafIndex>, to out: inout [NodeIndex]) {
        guard size.contains(index), nonBlankCounts[index.value] > 0 else { return }
        if index.isLeaf {
            if let leafIndex = index.leafIndex, !excluding.contains(leafIndex) { out.append(index) }
            return
        }
        if let parent = parents[index.value >> 1] {
            out.append(index)
            for leaf in parent.unmergedLeaves where !excluding.contains(leaf) { out.append(leaf.nodeIndex) }
            return
        }
        if let l = size.left(of: index) { appendResolution(of: l, excluding: excluding, to: &out) }
        if let r = size.right(of: index) { appendResolution(of: r, excluding: excluding, to: &out) }
    }

    /// Whether a node's resolution is empty, in O(1).
    public func resolutionIsEmpty(_ index: NodeIndex) -> Bool {
        !size.contains(index) || nonBlankCounts[index.value] == 0
    }

    /// The filtered direct path of a leaf (RFC 9420 §4.1.2): its direct path without the nodes
    /// whose copath child has an empty resolution, each with that copath child, leaf to root.
    public func filteredDirectPath(of leaf: LeafIndex) -> [FilteredPathStep] {
        size.pathWithCopath(of: leaf).compactMap { step in
            resolutionIsEmpty(step.copathChild) ? nil : FilteredPathStep(node: step.parent, copathChild: step.copathChild)
        }
    }
}

/// One node of a filtered direct path together with its child on the copath.
public struct FilteredPathStep: Hashable, Sendable {
    public let node: NodeIndex
    public let copathChild: NodeIndex
}

extension RatchetTree: Equatable {
    /// Trees are equal when their nodes are; caches follow from the nodes.
    public static func == (lhs: RatchetTree, rhs: RatchetTree) -> Bool {
        lhs.size == rhs.size && lhs.leaves == rhs.leaves && lhs.parents == rhs.parents
    }
}

extension RatchetTree: TLSEncodable {
    /// `optional<Node> ratchet_tree<V>` without trailing blank nodes (RFC 9420 §12.4.3.3).
    public func encode(to writer: inout TLSWriter) {
        var last = size.nodeCount - 1
        while last > 0, isBlank(NodeIndex(last)) { last -= 1 }
        writer.writeVector { w in
            for x in 0...last { w.writeOptional(node(at: NodeIndex(x))) }
        }
    }
}
