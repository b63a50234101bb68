import Foundation
import TestSupport
import XCTest
@testable import MLS

/// Tree validation rejects every kind of tampering with a valid tree: the trees come from the
/// mlswg tree-validation vectors, each then broken in one way.
final class TreeValidationTests: XCTestCase {
    private struct Case {
        let tree: UnverifiedRatchetTree
        let groupID: [UInt8]
    }

    private func vectorCases() throws -> [Case] {
        let data = try Fixtures.data("mls/tree-validation.json")
        let array = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        return try array.map { object in
            let tree = try UnverifiedRatchetTree(tlsSerialized: try hex(XCTUnwrap(object["tree"] as? String)))
            return Case(tree: tree, groupID: try hex(XCTUnwrap(object["group_id"] as? String)))
        }
    }

    /// A case with unmerged leaves and blanks: get_tree(7) plus an add (vector 11).
    private func treeWithUnmergedLeaves() throws -> (RatchetTree, [UInt8]) {
        for c in try vectorCases() {
            let tree = try RatchetTree(verifying: c.tree, groupID: c.groupID, suite: .mls128DHKEMX25519AES128GCMSHA256Ed25519)
            if tree.parents.contains(where: { !($0?.unmergedLeaves.isEmpty ?? true) }) { return (tree, c.groupID) }
        }
        // The vendored vectors have one (vector 11); without it these tests would check nothing.
        XCTFail("no vector tree with unmerged leaves: the fixture is not the one these tests were written for")
        throw MLSError.invalidRatchetTree("no vector tree with unmerged leaves")
    }

    private func reverify(_ tree: RatchetTree, _ groupID: [UInt8]) throws {
        let bytes = tree.tlsSerialized
        _ = try RatchetTree(verifying: try UnverifiedRatchetTree(tlsSerialized: bytes), groupID: groupID,
                            suite: .mls128DHKEMX25519AES128GCMSHA256Ed25519)
    }

    func testEveryVectorTreeVerifies() throws {
        let cases = try vectorCases()
        XCTAssertEqual(cases.count, 14)
        for c in cases {
            XCTAssertNoThrow(try RatchetTree(verifying: c.tree, groupID: c.groupID, suite: .mls128DHKEMX25519AES128GCMSHA256Ed25519))
        }
    }

    func testTamperedLeafSignatureIsRejected() throws {
        let (tree, groupID) = try treeWithUnmergedLeaves()
        let member = try XCTUnwrap(tree.members.last)
        var broken = tree
        broken.leaves[Int(member.index.value)]?.signature[0] ^= 1
        broken.recomputeAllCaches()
        // The leaf is also hashed into parent hashes, which may fail first; either way, rejected.
        XCTAssertThrowsError(try reverify(broken, groupID))
        let leaf = try XCTUnwrap(broken.leaf(at: member.index))
        XCTAssertThrowsError(try tree.validateLeafNode(leaf, at: member.index, groupID: groupID,
                                                       suite: .mls128DHKEMX25519AES128GCMSHA256Ed25519)) {
            XCTAssertEqual($0 as? MLSError, .invalidLeafSignature(leaf: member.index.value))
        }
    }

    func testOtherGroupIDFailsCommitLeafSignatures() throws {
        let (tree, groupID) = try treeWithUnmergedLeaves()
        XCTAssertThrowsError(try reverify(tree, groupID + [0]))
    }

    func testLeafWithUnlistedExtensionIsRejected() throws {
        let (tree, groupID) = try treeWithUnmergedLeaves()
        let member = try XCTUnwrap(tree.members.first)
        var leaf = member.leaf
        try leaf.extensions.insert(.unknown(ExtensionType(0xF2EE), [1]))
        XCTAssertThrowsError(try tree.validateLeafNode(leaf, at: member.index, groupID: groupID,
                                                       suite: .mls128DHKEMX25519AES128GCMSHA256Ed25519))
    }

    func testChangedParentKeyBreaksParentHash() throws {
        let (tree, groupID) = try treeWithUnmergedLeaves()
        for i in tree.parents.indices where tree.parents[i] != nil {
            var broken = tree
            broken.parents[i]?.encryptionKey[0] ^= 1
            broken.recomputeAllCaches()
            XCTAssertThrowsError(try reverify(broken, groupID), "parent node \(2 * i + 1)")
        }
    }

    func testChangedParentHashFieldIsRejected() throws {
        let (tree, groupID) = try treeWithUnmergedLeaves()
        let i = try XCTUnwrap(tree.parents.indices.first { tree.parents[$0].map { !$0.parentHash.isEmpty } ?? false })
        var broken = tree
        broken.parents[i]?.parentHash[0] ^= 1
        broken.recomputeAllCaches()
        XCTAssertThrowsError(try reverify(broken, groupID))
    }

    func testUnmergedLeafTamperingIsRejected() throws {
        let (tree, groupID) = try treeWithUnmergedLeaves()
        let i = try XCTUnwrap(tree.parents.indices.first { !(tree.parents[$0]?.unmergedLeaves.isEmpty ?? true) })
        // Dropping an unmerged leaf changes the original sibling tree hash: parent hash fails.
        var dropped = tree
        dropped.parents[i]?.unmergedLeaves.removeAll()
        dropped.recomputeAllCaches()
        XCTAssertThrowsError(try reverify(dropped, groupID))
        // A duplicate entry breaks the strictly-increasing rule.
        var duplicated = tree
        if let first = duplicated.parents[i]?.unmergedLeaves.first { duplicated.parents[i]?.unmergedLeaves.insert(first, at: 0) }
        duplicated.recomputeAllCaches()
        XCTAssertThrowsError(try duplicated.verifyUnmergedLeaves())
        // A leaf outside the parent's subtree is rejected.
        var outside = tree
        let node = NodeIndex(2 * i + 1)
        if let foreign = (0..<tree.leafCount).map({ LeafIndex(UInt32($0)) }).first(where: { !node.subtreeContains($0) }) {
            outside.parents[i]?.unmergedLeaves = [foreign]
            XCTAssertThrowsError(try outside.verifyUnmergedLeaves())
        }
    }

    func testDuplicateEncryptionKeyIsRejected() throws {
        let (tree, _) = try treeWithUnmergedLeaves()
        var broken = tree
        let members = tree.members
        guard members.count >= 2 else { return XCTFail("the vector tree with unmerged leaves has fewer than two members") }
        broken.leaves[Int(members[1].index.value)]?.encryptionKey = members[0].leaf.encryptionKey
        XCTAssertThrowsError(try broken.verifyKeyUniqueness()) {
            XCTAssertEqual($0 as? MLSError, .duplicateEncryptionKey(node: Int(members[1].index.value) * 2))
        }
        var sameSignatureKey = tree
        sameSignatureKey.leaves[Int(members[1].index.value)]?.signatureKey = members[0].leaf.signatureKey
        XCTAssertThrowsError(try sameSignatureKey.verifyKeyUniqueness())
    }

    /// Every parent listing every leaf below it as unmerged is consistent bookkeeping but not
    /// parent-hash valid; validation must get through such a tree in O(N log² N), not O(N²).
    func testHostileUnmergedListsAreRejectedWithoutBlowup() throws {
        let leafCount = 2048
        let leaves = (0..<leafCount).map { Optional(RatchetTreeTests.leaf($0)) }
        var parents = [ParentNode?](repeating: nil, count: leafCount - 1)
        let size = try XCTUnwrap(TreeSize(leafCount: leafCount))
        for i in parents.indices {
            let node = NodeIndex(2 * i + 1)
            let below = try XCTUnwrap(size.leaves(under: node)).map { LeafIndex(UInt32($0)) }
            parents[i] = ParentNode(encryptionKey: [0xCC, UInt8(i & 0xff), UInt8(i >> 8)], unmergedLeaves: below)
        }
        let tree = RatchetTree(uncheckedLeaves: leaves, parents: parents)
        XCTAssertNoThrow(try tree.verifyUnmergedLeaves())
        XCTAssertThrowsError(try tree.verifyStructure())
    }

    func testOrphanParentNodeIsRejected() throws {
        // A parent node above blank leaves has no descendant to chain to.
        let leaf = RatchetTreeTests.leaf(0)
        let tree = try UnverifiedRatchetTree(nodes: [
            .leaf(leaf), nil, nil, .parent(ParentNode(encryptionKey: [9, 9])), nil, nil, .leaf(RatchetTreeTests.leaf(3)),
        ])
        XCTAssertThrowsError(try tree.padded().verifyParentHashes()) {
            XCTAssertEqual($0 as? MLSError, .invalidRatchetTree("parent 3 is not parent-hash valid"))
        }
    }
}
