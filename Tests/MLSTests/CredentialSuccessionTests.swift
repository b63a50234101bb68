@testable import MLS
import TestSupport
import XCTest

/// RFC 9420 §5.3.1: a member's new leaf (in an UpdatePath or an Update proposal) must carry a
/// valid successor of its credential, and Burrow accepts only the same credential. Without
/// this, a member could self-update into another member's identity (in Marmot: an admin's).
final class CredentialSuccessionTests: XCTestCase {
    private let now = GroupTestSupport.now

    /// A self-update from `group`'s member whose new leaf claims `credential`, signed and
    /// confirmed correctly in every other respect.
    private func selfUpdate(_ group: MLSGroup, claiming credential: Credential,
                            using rng: inout some RandomNumberGenerator) throws -> MLSMessage {
        guard var template = group.member(at: group.ownLeafIndex)?.leafNode else { throw MLSError.blankLeaf(0) }
        template.credential = credential
        var state = group.state
        let parameters = CommitParameters(forcePath: true, newSigner: try SignaturePrivateKey.generate(using: &rng), leafTemplate: template)
        return try state.createCommit(parameters, configuration: group.configuration,
                                      psks: PSKSources(external: [:], resumption: [:]), using: &rng).message
    }

    func testSelfUpdateIntoAnotherIdentityIsRefused() throws {
        var rng = SplitMix64(seed: 511)
        var groups = try GroupTestSupport.makeGroup(members: 3, using: &rng)
        // Member 2 ("Mallory") self-updates claiming member 0's ("Alice's") identity.
        let forged = try selfUpdate(groups[2], claiming: .basic(identity: GroupTestSupport.identity(0)), using: &rng)
        for receiver in [0, 1] {
            let before = groups[receiver].serialized()
            XCTAssertThrowsError(try groups[receiver].process(forged, at: now)) { error in
                XCTAssertEqual(error as? MLSError, .credentialChanged(leaf: 2))
            }
            XCTAssertEqual(groups[receiver].serialized(), before, "a refused commit changed the state")
        }
        // A fresh identity is refused as well: a credential never changes.
        let renamed = try selfUpdate(groups[2], claiming: .basic(identity: GroupTestSupport.identity(9)), using: &rng)
        XCTAssertThrowsError(try groups[1].process(renamed, at: now)) { XCTAssertEqual($0 as? MLSError, .credentialChanged(leaf: 2)) }

        // The genuine self-update (same credential, new signature key) still goes through.
        let genuine = try groups[2].selfUpdate(newSigner: try SignaturePrivateKey.generate(using: &rng), using: &rng)
        try groups[2].mergePendingCommit()
        for receiver in [0, 1] {
            guard case .commit(let summary) = try groups[receiver].process(genuine.commit, at: now) else { return XCTFail("not a commit") }
            XCTAssertTrue(summary.hasPath)
            XCTAssertEqual(groups[receiver].member(at: LeafIndex(2))?.identity, GroupTestSupport.identity(2))
        }
    }

    func testUpdateProposalWithAnotherCredentialIsRefused() throws {
        var rng = SplitMix64(seed: 512)
        var groups = try GroupTestSupport.makeGroup(members: 3, using: &rng)
        let mallory = groups[2]
        let signer = try SignaturePrivateKey.generate(using: &rng)
        guard let current = mallory.member(at: mallory.ownLeafIndex)?.leafNode else { return XCTFail("no leaf") }
        var leaf = LeafNode(encryptionKey: try mallory.cipherSuite.hpke.generateKeyPair(using: &rng).publicKey.bytes,
                            signatureKey: signer.publicKey.bytes, credential: .basic(identity: GroupTestSupport.identity(0)),
                            capabilities: current.capabilities, source: .update)
        try leaf.sign(with: signer, suite: mallory.cipherSuite, position: TreePosition(groupID: mallory.groupID, leafIndex: 2))
        let secrets = mallory.state.messageSecrets
        let content = try secrets.sign(.proposal(.update(UpdateProposal(leafNode: leaf))), from: mallory.ownLeafIndex,
                                       wireFormat: .publicMessage, signer: mallory.signer)
        let message = MLSMessage(body: .publicMessage(try secrets.protectPublic(content)))
        let before = groups[0].serialized()
        XCTAssertThrowsError(try groups[0].process(message, at: now)) { XCTAssertEqual($0 as? MLSError, .credentialChanged(leaf: 2)) }
        XCTAssertEqual(groups[0].serialized(), before)
        XCTAssertTrue(groups[0].pendingProposals.isEmpty)
    }
}
