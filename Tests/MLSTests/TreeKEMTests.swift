import XCTest
@testable import MLS
import TestSupport

/// TreeKEM between in-process members: commits with paths after adds, removes and updates;
/// joiners through Welcome path secrets; and rejection of tampered UpdatePaths.
final class TreeKEMTests: XCTestCase {
    let suite = CipherSuiteProvider.mls128DHKEMX25519AES128GCMSHA256Ed25519
    let groupID: [UInt8] = Array("treekem test group".utf8)

    /// A client's long-term material and the leaf it would be added with.
    struct Client {
        let signer: SignaturePrivateKey
        let leafKey: HPKEKeyPair
        let leaf: LeafNode
    }

    func makeClient(_ n: Int, rng: inout SplitMix64) throws -> Client {
        let signer = try SignaturePrivateKey.generate(using: &rng)
        let leafKey = try suite.hpke.generateKeyPair(using: &rng)
        var leaf = LeafNode(
            encryptionKey: leafKey.publicKey.bytes, signatureKey: signer.publicKey.bytes,
            credential: .basic(identity: Array("client \(n)".utf8)), capabilities: Capabilities(),
            source: .keyPackage(Lifetime(notBefore: 0, notAfter: .max)))
        try leaf.sign(with: signer, suite: suite, position: nil)
        return Client(signer: signer, leafKey: leafKey, leaf: leaf)
    }

    func context(_ tree: RatchetTree, epoch: UInt64) -> GroupContext {
        GroupContext(groupID: groupID, epoch: epoch, treeHash: tree.treeHash, confirmedTranscriptHash: [UInt8](repeating: 7, count: 32))
    }

    /// The in-process group: the shared public tree and each member's private keys and signer.
    struct Group {
        var tree: RatchetTree
        var keys: [LeafIndex: TreeKEMPrivateKeys]
        var signers: [LeafIndex: SignaturePrivateKey]
        var epoch: UInt64 = 0
    }

    /// Commits with a path from `committer` after adding `joiners`; every member (joiners via
    /// the Welcome path secret) must end with the same tree and commit secret.
    func commit(_ group: inout Group, by committer: LeafIndex, adding joiners: [Client],
                rng: inout SplitMix64, file: StaticString = #filePath, line: UInt = #line) throws {
        var senderTree = group.tree
        var added: [LeafIndex: Client] = [:]
        for joiner in joiners { added[senderTree.add(joiner.leaf)] = joiner }
        let newMembers = Set(added.keys)
        let receiverBase = senderTree  // the tree with the proposals applied, as receivers build it

        let prepared = try senderTree.applyOwnUpdatePath(
            from: committer, groupID: groupID, signer: try XCTUnwrap(group.signers[committer]), suite: suite, using: &rng)
        let ctx = context(senderTree, epoch: group.epoch + 1)
        let path = try prepared.encrypt(in: senderTree, groupContext: ctx, excluding: newMembers, suite: suite, using: &rng)

        var receiverTree = receiverBase
        try receiverTree.mergeUpdatePath(path, from: committer, groupID: groupID, excluding: newMembers, suite: suite)
        XCTAssertEqual(receiverTree, senderTree, file: file, line: line)
        XCTAssertEqual(receiverTree.treeHash, senderTree.treeHash, file: file, line: line)
        XCTAssertEqual(receiverTree.tlsSerialized, senderTree.tlsSerialized, file: file, line: line)

        for (leaf, var keys) in group.keys where leaf != committer {
            let result = try keys.processUpdatePath(path, from: committer, tree: receiverTree, groupContext: ctx,
                                                    excluding: newMembers, suite: suite)
            XCTAssertEqual(result.commitSecret, prepared.commitSecret, "member \(leaf)", file: file, line: line)
            try keys.verify(against: receiverTree)
            group.keys[leaf] = keys
        }
        group.keys[committer] = prepared.privateKeys
        for (leaf, client) in added {
            let secret = try XCTUnwrap(prepared.pathSecret(forJoiner: leaf), file: file, line: line)
            let keys = try TreeKEMPrivateKeys(joining: receiverTree, ownLeaf: leaf, leafPrivateKey: client.leafKey.privateKey,
                                              pathSecret: secret, committer: committer, suite: suite)
            try keys.verify(against: receiverTree)
            XCTAssertEqual(receiverTree.index(of: client.leaf), leaf, file: file, line: line)
            group.keys[leaf] = keys
            group.signers[leaf] = client.signer
        }
        group.tree = receiverTree
        group.epoch += 1
        // Every member's private view is consistent with the tree invariant.
        for (leaf, keys) in group.keys {
            for node in keys.nodes { XCTAssertTrue(node.subtreeContains(leaf), file: file, line: line) }
        }
        // The full tree is still valid for a joiner (checked every few epochs: it is O(N log N)).
        if group.epoch % 4 == 1 {
            _ = try RatchetTree(verifying: try UnverifiedRatchetTree(tlsSerialized: group.tree.tlsSerialized), groupID: groupID, suite: suite)
        }
    }

    func newGroup(rng: inout SplitMix64) throws -> Group {
        let creator = try makeClient(0, rng: &rng)
        return Group(tree: RatchetTree(creator: creator.leaf),
                     keys: [LeafIndex(0): TreeKEMPrivateKeys(ownLeaf: LeafIndex(0), leafPrivateKey: creator.leafKey.privateKey)],
                     signers: [LeafIndex(0): creator.signer])
    }

    func testCommitsWithAddsRemovesAndUpdatesKeepEveryoneInSync() throws {
        var rng = SplitMix64(seed: 42)
        var group = try newGroup(rng: &rng)
        var next = 1
        try commit(&group, by: LeafIndex(0), adding: (1...4).map { _ in defer { next += 1 }; return try makeClient(next, rng: &rng) }, rng: &rng)
        for step in 0..<40 {
            let members = group.tree.members.map(\.index)
            let committer = members[Int(rng.next() % UInt64(members.count))]
            switch rng.next() % 3 {
            case 0 where members.count > 2:
                // Remove someone else (no path needed by TreeKEM, but a commit with path follows).
                let victim = members.filter { $0 != committer }[Int(rng.next() % UInt64(members.count - 1))]
                try group.tree.remove(victim)
                group.keys[victim] = nil
                group.signers[victim] = nil
                try commit(&group, by: committer, adding: [], rng: &rng)
            case 1:
                let joiners = try (0..<Int(1 + rng.next() % 3)).map { _ -> Client in
                    defer { next += 1 }
                    return try makeClient(next, rng: &rng)
                }
                try commit(&group, by: committer, adding: joiners, rng: &rng)
            default:
                try commit(&group, by: committer, adding: [], rng: &rng)
            }
            XCTAssertEqual(Set(group.keys.keys), Set(group.tree.members.map(\.index)), "step \(step)")
        }
    }

    func testSingleMemberCommitHasEmptyPath() throws {
        var rng = SplitMix64(seed: 1)
        var group = try newGroup(rng: &rng)
        let prepared = try group.tree.applyOwnUpdatePath(from: LeafIndex(0), groupID: groupID, signer: try XCTUnwrap(group.signers[LeafIndex(0)]),
                                                         suite: suite, using: &rng)
        XCTAssertTrue(prepared.path.isEmpty)
        let path = try prepared.encrypt(in: group.tree, groupContext: context(group.tree, epoch: 1), excluding: [], suite: suite, using: &rng)
        XCTAssertTrue(path.nodes.isEmpty)
        guard case .commit(let parentHash) = path.leafNode.source else { return XCTFail("leaf source") }
        XCTAssertEqual(parentHash, [])
    }

    /// A three-member group and one UpdatePath from member 0 to play with.
    private func fixture() throws -> (Group, UpdatePath, RatchetTree, GroupContext, SplitMix64) {
        var rng = SplitMix64(seed: 9)
        var group = try newGroup(rng: &rng)
        try commit(&group, by: LeafIndex(0), adding: [try makeClient(1, rng: &rng), try makeClient(2, rng: &rng)], rng: &rng)
        var senderTree = group.tree
        let prepared = try senderTree.applyOwnUpdatePath(from: LeafIndex(0), groupID: groupID, signer: try XCTUnwrap(group.signers[LeafIndex(0)]),
                                                         suite: suite, using: &rng)
        let ctx = context(senderTree, epoch: 2)
        let path = try prepared.encrypt(in: senderTree, groupContext: ctx, excluding: [], suite: suite, using: &rng)
        return (group, path, senderTree, ctx, rng)
    }

    func testTamperedCiphertextFailsAndLeavesStateUnchanged() throws {
        let (group, path, merged, ctx, _) = try fixture()
        var tampered = path
        let last = tampered.nodes.count - 1
        tampered.nodes[last].encryptedPathSecret[0].ciphertext[0] ^= 1
        var keys = try XCTUnwrap(group.keys[LeafIndex(2)])
        let before = keys.nodes
        XCTAssertThrowsError(try keys.processUpdatePath(tampered, from: LeafIndex(0), tree: merged, groupContext: ctx,
                                                        excluding: [], suite: suite)) {
            XCTAssertEqual($0 as? MLSError, .pathSecretDecryptionFailed)
        }
        XCTAssertEqual(keys.nodes, before)
        // The wrong context (e.g. another epoch) fails the same way.
        var other = ctx
        other.epoch += 1
        XCTAssertThrowsError(try keys.processUpdatePath(path, from: LeafIndex(0), tree: merged, groupContext: other,
                                                        excluding: [], suite: suite))
    }

    func testMergeRejectsBadPathsAndLeavesTreeUnchanged() throws {
        let (group, path, _, _, _) = try fixture()
        let original = group.tree

        var wrongKey = path
        wrongKey.nodes[0].encryptionKey[0] ^= 1
        var tree = original
        XCTAssertThrowsError(try tree.mergeUpdatePath(wrongKey, from: LeafIndex(0), groupID: groupID, excluding: [], suite: suite)) {
            XCTAssertEqual($0 as? MLSError, .parentHashMismatch)
        }
        XCTAssertEqual(tree, original)
        XCTAssertEqual(tree.treeHash, original.treeHash)

        var shortPath = path
        shortPath.nodes.removeLast()
        XCTAssertThrowsError(try tree.mergeUpdatePath(shortPath, from: LeafIndex(0), groupID: groupID, excluding: [], suite: suite))

        var extraCiphertext = path
        extraCiphertext.nodes[0].encryptedPathSecret.append(extraCiphertext.nodes[0].encryptedPathSecret[0])
        XCTAssertThrowsError(try tree.mergeUpdatePath(extraCiphertext, from: LeafIndex(0), groupID: groupID, excluding: [], suite: suite))

        var resigned = path
        resigned.leafNode.signature[0] ^= 1
        XCTAssertThrowsError(try tree.mergeUpdatePath(resigned, from: LeafIndex(0), groupID: groupID, excluding: [], suite: suite)) {
            XCTAssertEqual($0 as? MLSError, .invalidLeafSignature(leaf: 0))
        }

        // Claimed by another sender, the signature (bound to leaf 0) fails.
        XCTAssertThrowsError(try tree.mergeUpdatePath(path, from: LeafIndex(1), groupID: groupID, excluding: [], suite: suite))
        // Reusing a key already in the tree is refused.
        var reused = path
        reused.nodes[0].encryptionKey = try XCTUnwrap(original.leaf(at: LeafIndex(1))?.encryptionKey)
        XCTAssertThrowsError(try tree.mergeUpdatePath(reused, from: LeafIndex(0), groupID: groupID, excluding: [], suite: suite))
        XCTAssertEqual(tree, original)
    }

    func testSenderCannotProcessItsOwnPathAndOutsidersGetNoSecret() throws {
        let (group, path, merged, ctx, _) = try fixture()
        var senderKeys = try XCTUnwrap(group.keys[LeafIndex(0)])
        XCTAssertThrowsError(try senderKeys.processUpdatePath(path, from: LeafIndex(0), tree: merged, groupContext: ctx,
                                                              excluding: [], suite: suite))
        // A member treated as newly added (excluded) finds no ciphertext for itself.
        var keys = try XCTUnwrap(group.keys[LeafIndex(2)])
        XCTAssertThrowsError(try keys.processUpdatePath(path, from: LeafIndex(0), tree: merged, groupContext: ctx,
                                                        excluding: [LeafIndex(2)], suite: suite))
    }

    func testPrivateKeysRoundTripAndRejectForeignNodes() throws {
        let (group, _, _, _, _) = try fixture()
        let keys = try XCTUnwrap(group.keys[LeafIndex(1)])
        let restored = try TreeKEMPrivateKeys(tlsSerialized: keys.tlsSerialized)
        XCTAssertEqual(restored.nodes, keys.nodes)
        for node in keys.nodes { XCTAssertEqual(restored.privateKey(at: node), keys.privateKey(at: node)) }
        try restored.verify(against: group.tree)
        XCTAssertFalse("\(keys)".contains(keys.tlsSerialized.map { String($0) }.joined()))

        // A key for a node off the member's direct path is refused on decode.
        var w = TLSWriter()
        w.writeUInt32(1)
        w.writeVector { v in
            v.writeUInt32(4)  // leaf 2's node, not on leaf 1's path
            v.writeOpaque([UInt8](repeating: 1, count: 32))
        }
        XCTAssertThrowsError(try TreeKEMPrivateKeys(tlsSerialized: w.bytes))
    }
}
