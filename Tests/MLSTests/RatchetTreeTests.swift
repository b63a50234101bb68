import XCTest
@testable import MLS
import TestSupport

/// Structural behaviour of the ratchet tree: placement, unmerged leaves, truncation,
/// resolution, filtered direct paths, encoding and cache consistency. Leaves here are
/// unsigned stand-ins: these operations never look at signatures.
final class RatchetTreeTests: XCTestCase {
    static func leaf(_ n: Int) -> LeafNode {
        LeafNode(
            encryptionKey: [0xE0, UInt8(n & 0xff), UInt8(n >> 8)], signatureKey: [0x51, UInt8(n & 0xff), UInt8(n >> 8)],
            credential: .basic(identity: Array("member \(n)".utf8)), capabilities: Capabilities(),
            source: .keyPackage(Lifetime(notBefore: 0, notAfter: 1)), signature: [UInt8(n & 0xff)])
    }

    static func parent(_ n: Int, unmerged: [UInt32] = []) -> ParentNode {
        ParentNode(encryptionKey: [0xB0, UInt8(n & 0xff)], parentHash: [], unmergedLeaves: unmerged.map(LeafIndex.init))
    }

    /// A tree from leaves/parents by node index (nil = blank), for tests of fixed shapes.
    static func tree(leaves: [LeafNode?], parents: [Int: ParentNode]) -> RatchetTree {
        var p = [ParentNode?](repeating: nil, count: leaves.count - 1)
        for (node, value) in parents { p[node >> 1] = value }
        return RatchetTree(uncheckedLeaves: leaves, parents: p)
    }

    func testAddFillsLeftmostBlankThenExtends() throws {
        var tree = RatchetTree(creator: Self.leaf(0))
        XCTAssertEqual(tree.leafCount, 1)
        XCTAssertEqual(tree.add(Self.leaf(1)), LeafIndex(1))
        XCTAssertEqual(tree.leafCount, 2)
        XCTAssertEqual(tree.add(Self.leaf(2)), LeafIndex(2))
        XCTAssertEqual(tree.leafCount, 4)
        XCTAssertEqual(tree.add(Self.leaf(3)), LeafIndex(3))
        try tree.remove(LeafIndex(1))
        XCTAssertEqual(tree.leafCount, 4)
        XCTAssertEqual(tree.leftmostBlankLeaf, LeafIndex(1))
        XCTAssertEqual(tree.add(Self.leaf(4)), LeafIndex(1))
        XCTAssertEqual(tree.memberCount, 4)
    }

    func testAddRecordsUnmergedLeafAtNonBlankAncestorsInOrder() {
        // Leaves 0,1,2 present, 3 blank; node 1 and root 3 non-blank, node 5 blank.
        var tree = Self.tree(
            leaves: [Self.leaf(0), Self.leaf(1), Self.leaf(2), nil],
            parents: [1: Self.parent(1), 3: Self.parent(3, unmerged: [2])])
        XCTAssertEqual(tree.add(Self.leaf(3)), LeafIndex(3))
        XCTAssertEqual(tree.parent(at: NodeIndex(3))?.unmergedLeaves, [LeafIndex(2), LeafIndex(3)])
        XCTAssertEqual(tree.parent(at: NodeIndex(1))?.unmergedLeaves, [])
        XCTAssertNil(tree.parent(at: NodeIndex(5)))
    }

    func testRemoveBlanksPathAndTruncates() throws {
        var tree = RatchetTree(creator: Self.leaf(0))
        for n in 1...4 { tree.add(Self.leaf(n)) }
        XCTAssertEqual(tree.leafCount, 8)
        try tree.remove(LeafIndex(4))
        XCTAssertEqual(tree.leafCount, 4, "the right half held only leaf 4")
        try tree.remove(LeafIndex(3))
        try tree.remove(LeafIndex(2))
        XCTAssertEqual(tree.leafCount, 2)
        try tree.remove(LeafIndex(1))
        XCTAssertEqual(tree.leafCount, 1)
        XCTAssertThrowsError(try tree.remove(LeafIndex(1))) { XCTAssertEqual($0 as? MLSError, .leafIndexOutOfRange(1)) }
    }

    func testRemoveOfBlankLeafIsTypedError() {
        var tree = Self.tree(leaves: [Self.leaf(0), nil, Self.leaf(2), nil], parents: [:])
        XCTAssertThrowsError(try tree.remove(LeafIndex(1))) { XCTAssertEqual($0 as? MLSError, .blankLeaf(1)) }
    }

    func testUpdateReplacesLeafAndBlanksDirectPath() throws {
        var tree = Self.tree(
            leaves: [Self.leaf(0), Self.leaf(1), Self.leaf(2), Self.leaf(3)],
            parents: [1: Self.parent(1), 3: Self.parent(3), 5: Self.parent(5)])
        try tree.update(LeafIndex(2), with: Self.leaf(9))
        XCTAssertEqual(tree.leaf(at: LeafIndex(2)), Self.leaf(9))
        XCTAssertNil(tree.parent(at: NodeIndex(5)))
        XCTAssertNil(tree.parent(at: NodeIndex(3)))
        XCTAssertNotNil(tree.parent(at: NodeIndex(1)))
    }

    /// RFC 9420 §4.1.1's example: X[B] at node 3's left child... encoded over 8 leaves.
    func testResolutionMatchesRFCExample() {
        // Leaves A B _ D E F _ H; X = node 1 with unmerged B; Y = node 9; others blank.
        let tree = Self.tree(
            leaves: [Self.leaf(0), Self.leaf(1), nil, Self.leaf(3), Self.leaf(4), Self.leaf(5), nil, Self.leaf(7)],
            parents: [1: Self.parent(1, unmerged: [1]), 9: Self.parent(9)])
        XCTAssertEqual(tree.resolution(of: NodeIndex(1)), [NodeIndex(1), NodeIndex(2)])
        XCTAssertEqual(tree.resolution(of: NodeIndex(4)), [])
        XCTAssertEqual(tree.resolution(of: NodeIndex(12)), [])
        XCTAssertEqual(tree.resolution(of: NodeIndex(7)), [NodeIndex(1), NodeIndex(2), NodeIndex(6), NodeIndex(9), NodeIndex(14)])
        XCTAssertEqual(tree.resolution(of: NodeIndex(7), excluding: [LeafIndex(1), LeafIndex(7)]),
                       [NodeIndex(1), NodeIndex(6), NodeIndex(9)])
    }

    /// RFC 9420 §4.1.2's table of filtered direct paths.
    func testFilteredDirectPathMatchesRFCExample() {
        // A B _ _ E F G _; T = 1, X = 9, Y = 11, W = 7 non-blank; U = 3, V = 5, Z = 13 blank.
        let tree = Self.tree(
            leaves: [Self.leaf(0), Self.leaf(1), nil, nil, Self.leaf(4), Self.leaf(5), Self.leaf(6), nil],
            parents: [1: Self.parent(1), 9: Self.parent(9), 11: Self.parent(11), 7: Self.parent(7)])
        func fdp(_ leaf: UInt32) -> [Int] { tree.filteredDirectPath(of: LeafIndex(leaf)).map(\.node.value) }
        XCTAssertEqual(fdp(0), [1, 7])
        XCTAssertEqual(fdp(1), [1, 7])
        XCTAssertEqual(fdp(4), [9, 11, 7])
        XCTAssertEqual(fdp(5), [9, 11, 7])
        XCTAssertEqual(fdp(6), [11, 7])
    }

    func testEncodingOmitsTrailingBlanksAndDecodesBack() throws {
        var tree = RatchetTree(creator: Self.leaf(0))
        for n in 1...4 { tree.add(Self.leaf(n)) }
        let bytes = tree.tlsSerialized
        let decoded = try UnverifiedRatchetTree(tlsSerialized: bytes)
        XCTAssertEqual(decoded.nodes.count, 9, "five leaves: nodes 0…8, trailing blanks dropped")
        let back = decoded.padded()
        XCTAssertEqual(back, tree)
        XCTAssertEqual(back.treeHash, tree.treeHash)
        XCTAssertEqual(back.tlsSerialized, bytes)
    }

    func testDecodingRejectsMalformedTrees() throws {
        let leaf = RatchetTreeNode.leaf(Self.leaf(0))
        let parent = RatchetTreeNode.parent(Self.parent(1))
        XCTAssertThrowsError(try UnverifiedRatchetTree(nodes: []))
        XCTAssertThrowsError(try UnverifiedRatchetTree(nodes: [leaf, nil]), "trailing blank")
        XCTAssertThrowsError(try UnverifiedRatchetTree(nodes: [leaf, leaf]), "leaf at a parent position")
        XCTAssertThrowsError(try UnverifiedRatchetTree(nodes: [parent]), "parent at a leaf position")
        var w = TLSWriter()
        w.writeVector { $0.writeUInt8(1); $0.writeUInt8(3) }  // present, node type 3
        XCTAssertThrowsError(try UnverifiedRatchetTree(tlsSerialized: w.bytes))
        // Truncated input is a typed error, never a trap.
        let good = try UnverifiedRatchetTree(nodes: [leaf]).tlsSerialized
        for cut in 0..<good.count {
            XCTAssertThrowsError(try UnverifiedRatchetTree(tlsSerialized: Array(good[0..<cut])))
        }
    }

    /// After random adds, updates and removes the cached hashes and counts equal a fresh
    /// computation: the O(log N) refreshes miss nothing.
    func testIncrementalCachesMatchFullRecomputation() throws {
        var rng = SplitMix64(seed: 7)
        var tree = RatchetTree(creator: Self.leaf(0))
        var next = 1
        for step in 0..<300 {
            let members = tree.members.map(\.index)
            switch rng.next() % 4 {
            case 0, 1:
                tree.add(Self.leaf(next))
                next += 1
            case 2 where members.count > 1:
                let victim = members[Int(rng.next() % UInt64(members.count))]
                try tree.remove(victim)
            default:
                let target = members[Int(rng.next() % UInt64(members.count))]
                try tree.update(target, with: Self.leaf(next))
                next += 1
            }
            var fresh = tree
            fresh.recomputeAllCaches()
            XCTAssertEqual(fresh.hashes, tree.hashes, "step \(step)")
            XCTAssertEqual(fresh.nonBlankCounts, tree.nonBlankCounts, "step \(step)")
            XCTAssertEqual(fresh.encryptionKeyCounts, tree.encryptionKeyCounts, "step \(step)")
            let rightHalf = tree.leaves[(tree.leafCount / 2)...]
            XCTAssertTrue(tree.leafCount == 1 || rightHalf.contains { $0 != nil }, "step \(step): not truncated")
        }
    }
}

