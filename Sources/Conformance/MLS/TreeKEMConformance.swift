import Foundation
import MLS

/// mlswg `treekem.json`: every receiving member processes each given UpdatePath (decrypting the
/// expected path secret and commit secret, reaching the expected tree hash), and an UpdatePath
/// we generate from each sender is processed by every other member to the same commit secret.
enum TreeKEMConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        ConformanceReport.forEachSuiteCase(cases, file: "treekem") { v, _, _ in try check(v) }
    }

    private struct Member {
        let keys: TreeKEMPrivateKeys
        let signer: SignaturePrivateKey
    }

    static func check(_ v: VectorCase) throws {
        let suite = try CipherSuiteProvider(CipherSuite(try v.uint16("cipher_suite")))
        let groupID = try v.bytes("group_id")
        let epoch = try v.uint64("epoch")
        let confirmedTranscriptHash = try v.bytes("confirmed_transcript_hash")
        let tree = try RatchetTree(
            verifying: try UnverifiedRatchetTree(tlsSerialized: try v.bytes("ratchet_tree")), groupID: groupID, suite: suite)

        // Private state of each member, checked against the tree.
        var members: [LeafIndex: Member] = [:]
        for entry in try v.objects("leaves_private") {
            let leaf = LeafIndex(try entry.uint32("index"))
            var keys = TreeKEMPrivateKeys(ownLeaf: leaf, leafPrivateKey: try HPKEPrivateKey(Secret(try entry.bytes("encryption_priv"))))
            for secret in try entry.objects("path_secrets") {
                let node = NodeIndex(try secret.int("node"))
                try keys.insertPathSecret(Secret(try secret.bytes("path_secret")), at: node, tree: tree, suite: suite)
            }
            try keys.verify(against: tree)
            let signer = try SignaturePrivateKey(seed: Secret(try entry.bytes("signature_priv")))
            guard tree.leaf(at: leaf)?.signatureKey == signer.publicKey.bytes else {
                throw ConformanceCaseError.mismatch("signature_priv of \(leaf) does not match its leaf")
            }
            members[leaf] = Member(keys: keys, signer: signer)
        }

        func context(_ treeHash: [UInt8]) -> GroupContext {
            GroupContext(cipherSuite: suite.suite, groupID: groupID, epoch: epoch, treeHash: treeHash,
                         confirmedTranscriptHash: confirmedTranscriptHash)
        }

        for (n, entry) in try v.objects("update_paths").enumerated() {
            let sender = LeafIndex(try entry.uint32("sender"))
            let updatePath = try UpdatePath(tlsSerialized: try entry.bytes("update_path"))

            // The given path: merge (parent-hash and signature checks), tree hash, decryption.
            var merged = tree
            try merged.mergeUpdatePath(updatePath, from: sender, groupID: groupID, excluding: [], suite: suite)
            guard merged.treeHash == (try entry.bytes("tree_hash_after")) else {
                throw ConformanceCaseError.mismatch("update_paths[\(n)].tree_hash_after")
            }
            let expectedSecrets = try entry.array("path_secrets")
            let commitSecret = try entry.bytes("commit_secret")
            for (leaf, member) in members where leaf != sender {
                var keys = member.keys
                let result = try keys.processUpdatePath(
                    updatePath, from: sender, tree: merged, groupContext: context(merged.treeHash), excluding: [], suite: suite)
                guard Int(leaf.value) < expectedSecrets.count, let hex = expectedSecrets[Int(leaf.value)] as? String else {
                    throw ConformanceCaseError.malformed("update_paths[\(n)].path_secrets has no entry for \(leaf)")
                }
                guard result.pathSecret.constantTimeEquals(try VectorFile.hex(hex, field: "path_secrets")) else {
                    throw ConformanceCaseError.mismatch("update_paths[\(n)]: path secret decrypted by \(leaf)")
                }
                guard result.commitSecret.constantTimeEquals(commitSecret) else {
                    throw ConformanceCaseError.mismatch("update_paths[\(n)]: commit secret at \(leaf)")
                }
                try keys.verify(against: merged)
            }

            // Our own path from the same sender, processed by every other member.
            guard let senderState = members[sender] else {
                throw ConformanceCaseError.malformed("no leaves_private entry for sender \(sender)")
            }
            var ours = tree
            var rng = SystemRandomNumberGenerator()
            let prepared = try ours.applyOwnUpdatePath(from: sender, groupID: groupID, signer: senderState.signer, suite: suite, using: &rng)
            let ourContext = context(ours.treeHash)
            let ourPath = try prepared.encrypt(in: ours, groupContext: ourContext, excluding: [], suite: suite, using: &rng)
            try prepared.privateKeys.verify(against: ours)
            var received = tree
            try received.mergeUpdatePath(ourPath, from: sender, groupID: groupID, excluding: [], suite: suite)
            guard received == ours, received.treeHash == ours.treeHash else {
                throw ConformanceCaseError.mismatch("update_paths[\(n)]: tree after merging our own path")
            }
            for (leaf, member) in members where leaf != sender {
                var keys = member.keys
                let result = try keys.processUpdatePath(
                    ourPath, from: sender, tree: received, groupContext: ourContext, excluding: [], suite: suite)
                guard result.commitSecret == prepared.commitSecret else {
                    throw ConformanceCaseError.mismatch("update_paths[\(n)]: commit secret of our path at \(leaf)")
                }
            }
        }
    }
}
