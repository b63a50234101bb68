import Crypto

/// Tree hashes (RFC 9420 §7.8) and the caches that keep them cheap.
///
/// `TreeHashInput` is `node_type` followed by either `LeafNodeHashInput { uint32 leaf_index;
/// optional<LeafNode> leaf_node; }` or `ParentNodeHashInput { optional<ParentNode> parent_node;
/// opaque left_hash<V>; opaque right_hash<V>; }`, hashed with the suite's hash (SHA-256 for
/// suite 0x0001, the only one Burrow runs).
enum TreeHashing {
    static func hash(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

    static func leafHash(index: Int, leaf: LeafNode?) -> [UInt8] {
        var w = TLSWriter(capacity: 512)
        w.writeUInt8(1)
        w.writeUInt32(UInt32(truncatingIfNeeded: index))
        w.writeOptional(leaf)
        return hash(w.bytes)
    }

    static func parentHash(parent: ParentNode?, left: [UInt8], right: [UInt8]) -> [UInt8] {
        var w = TLSWriter(capacity: 160)
        w.writeUInt8(2)
        w.writeOptional(parent)
        w.writeOpaque(left)
        w.writeOpaque(right)
        return hash(w.bytes)
    }
}

extension RatchetTree {
    /// Recomputes every cached hash and count, bottom-up (after decoding or extending).
    mutating func recomputeAllCaches() {
        let count = size.nodeCount
        hashes = Array(repeating: [], count: count)
        nonBlankCounts = Array(repeating: 0, count: count)
        encryptionKeyCounts = [:]
        for leaf in leaves { countKey(leaf?.encryptionKey, +1) }
        for parent in parents { countKey(parent?.encryptionKey, +1) }
        var level = 0
        while (1 << level) - 1 < count {
            var x = (1 << level) - 1
            while x < count {
                refreshCache(NodeIndex(x))
                x += 1 << (level + 1)
            }
            level += 1
        }
    }

    /// Recomputes the caches of `index` and of every ancestor (after changing that node).
    mutating func refreshCaches(from index: NodeIndex) {
        guard size.contains(index) else { return }
        refreshCache(index)
        for ancestor in size.directPath(of: index) { refreshCache(ancestor) }
    }

    /// Recomputes one node's caches from its content and its children's caches.
    mutating func refreshCache(_ index: NodeIndex) {
        let x = index.value
        if index.isLeaf {
            let leaf = leaves[x >> 1]
            hashes[x] = TreeHashing.leafHash(index: x >> 1, leaf: leaf)
            nonBlankCounts[x] = leaf == nil ? 0 : 1
            return
        }
        let parent = parents[x >> 1]
        let l = size.left(of: index)?.value, r = size.right(of: index)?.value
        let leftHash = l.map { hashes[$0] } ?? [], rightHash = r.map { hashes[$0] } ?? []
        hashes[x] = TreeHashing.parentHash(parent: parent, left: leftHash, right: rightHash)
        nonBlankCounts[x] = (parent == nil ? 0 : 1) + (l.map { nonBlankCounts[$0] } ?? 0) + (r.map { nonBlankCounts[$0] } ?? 0)
    }

    /// The tree hash of the subtree at `index` in the tree modified as RFC 9420 §7.9 describes
    /// for `original_sibling_tree_hash`: every leaf in `removed` blanked and dropped from the
    /// unmerged-leaves lists below. Subtrees holding none of `removed` reuse the cache.
    func treeHash(of index: NodeIndex, removingLeaves removed: [LeafIndex]) -> [UInt8] {
        guard size.contains(index) else { return [] }
        let relevant = removed.filter { index.subtreeContains($0) }
        if relevant.isEmpty { return hashes[index.value] }
        if index.isLeaf { return TreeHashing.leafHash(index: index.value >> 1, leaf: nil) }
        var parent = parents[index.value >> 1]
        parent?.unmergedLeaves.removeAll { relevant.contains($0) }
        let left = size.left(of: index).map { treeHash(of: $0, removingLeaves: relevant) } ?? []
        let right = size.right(of: index).map { treeHash(of: $0, removingLeaves: relevant) } ?? []
        return TreeHashing.parentHash(parent: parent, left: left, right: right)
    }
}
