import XCTest
@testable import MLS

final class TreeMathTests: XCTestCase {
    /// RFC 9420 Appendix C's eight-leaf example: node 7 is the root, 3 and 11 its children.
    func testEightLeafTreeShape() throws {
        let size = try XCTUnwrap(TreeSize(leafCount: 8))
        XCTAssertEqual(size.nodeCount, 15)
        XCTAssertEqual(size.root, NodeIndex(7))
        XCTAssertEqual(size.left(of: NodeIndex(7)), NodeIndex(3))
        XCTAssertEqual(size.right(of: NodeIndex(7)), NodeIndex(11))
        XCTAssertNil(size.left(of: NodeIndex(4)))
        XCTAssertEqual(NodeIndex(11).level, 2)
        XCTAssertEqual(size.directPath(of: LeafIndex(2)), [NodeIndex(5), NodeIndex(3), NodeIndex(7)])
        XCTAssertEqual(size.copath(of: LeafIndex(2)), [NodeIndex(6), NodeIndex(1), NodeIndex(11)])
        XCTAssertEqual(size.commonAncestor(NodeIndex(2), NodeIndex(12)), NodeIndex(7))
        XCTAssertEqual(size.commonAncestor(NodeIndex(8), NodeIndex(10)), NodeIndex(9))
        XCTAssertEqual(size.commonAncestor(NodeIndex(3), NodeIndex(4)), NodeIndex(3))
        XCTAssertEqual(size.leaves(under: NodeIndex(11)), 4...7)
        XCTAssertNil(size.parent(of: NodeIndex(7)))
        XCTAssertNil(size.parent(of: NodeIndex(15)), "a node outside the tree has no parent")
    }

    func testSingleLeafTree() throws {
        let size = try XCTUnwrap(TreeSize(leafCount: 1))
        XCTAssertEqual(size.root, NodeIndex(0))
        XCTAssertEqual(size.directPath(of: LeafIndex(0)), [])
        XCTAssertEqual(size.copath(of: LeafIndex(0)), [])
        XCTAssertNil(size.sibling(of: NodeIndex(0)))
    }

    func testInvalidSizesAreRejected() {
        XCTAssertNil(TreeSize(leafCount: 0))
        XCTAssertNil(TreeSize(leafCount: -3))
        XCTAssertEqual(TreeSize.full(holding: 5)?.leafCount, 8)
        XCTAssertEqual(TreeSize.full(holding: 8)?.leafCount, 8)
        XCTAssertEqual(TreeSize.full(holding: 1)?.leafCount, 1)
    }

    /// Indices from hostile input (negative, huge) relate to nothing and never trap.
    func testOutOfRangeNodeIndicesAreInert() throws {
        let size = try XCTUnwrap(TreeSize(leafCount: 8))
        for bad in [NodeIndex(-1), NodeIndex(-2), NodeIndex(Int.max), NodeIndex(Int.min), NodeIndex(1 << 40)] {
            XCTAssertFalse(size.contains(bad))
            XCTAssertNil(size.parent(of: bad))
            XCTAssertNil(size.sibling(of: bad))
            XCTAssertNil(size.left(of: bad))
            XCTAssertNil(size.right(of: bad))
            XCTAssertEqual(size.directPath(of: bad), [])
            XCTAssertNil(bad.commonAncestor(with: NodeIndex(3)))
            XCTAssertFalse(bad.subtreeContains(NodeIndex(3)))
            XCTAssertFalse(NodeIndex(7).subtreeContains(bad))
            _ = bad.subtreeSpan
            _ = bad.level
            _ = bad.leftChild
            _ = bad.rightChild
        }
    }

    func testLeafIndexConversionNeverOverflows() {
        let leaf = LeafIndex(UInt32.max)
        XCTAssertEqual(leaf.nodeIndex.value, Int(UInt32.max) * 2)
        XCTAssertEqual(leaf.nodeIndex.leafIndex, leaf)
        XCTAssertNil(NodeIndex(5).leafIndex)
        XCTAssertFalse(TreeSize(leafCount: 4)!.contains(leaf))
    }

    /// For every leaf count up to 100 (full or not), the relations are mutually consistent and
    /// agree with the semantic definitions: each non-root node is a child of its parent, every
    /// direct path ends at the root, and the bitwise common ancestor is the lowest shared node
    /// of the two direct paths.
    func testRelationsAreConsistentForArbitrarySizes() throws {
        for n in 1...100 {
            let size = try XCTUnwrap(TreeSize(leafCount: n))
            let root = size.root
            XCTAssertTrue(size.contains(root))
            for x in 0..<size.nodeCount {
                let node = NodeIndex(x)
                if node == root {
                    XCTAssertNil(size.parent(of: node))
                    continue
                }
                let p = try XCTUnwrap(size.parent(of: node), "n=\(n) x=\(x)")
                XCTAssertTrue(size.left(of: p) == node || size.right(of: p) == node, "n=\(n) x=\(x)")
                let s = try XCTUnwrap(size.sibling(of: node))
                XCTAssertEqual(size.parent(of: s), p)
                XCTAssertNotEqual(s, node)
                XCTAssertEqual(size.directPath(of: node).last, root)
                XCTAssertEqual(size.copath(of: node).count, size.directPath(of: node).count)
                XCTAssertTrue(p.subtreeContains(node))
            }
            // Every leaf is under the root; leaves(under:) covers exactly the descendants.
            XCTAssertEqual(size.leaves(under: root), 0...(n - 1))
            for a in stride(from: 0, to: size.nodeCount, by: max(1, size.nodeCount / 13)) {
                for b in stride(from: 0, to: size.nodeCount, by: max(1, size.nodeCount / 11)) {
                    let na = NodeIndex(a), nb = NodeIndex(b)
                    let pa = [na] + size.directPath(of: na)
                    let pb = Set([nb] + size.directPath(of: nb))
                    let semantic = pa.first { pb.contains($0) }
                    XCTAssertEqual(size.commonAncestor(na, nb), semantic, "n=\(n) a=\(a) b=\(b)")
                }
            }
        }
    }
}
