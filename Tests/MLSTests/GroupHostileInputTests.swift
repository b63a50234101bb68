@testable import MLS
import XCTest
import TestSupport

/// Hostile input to the group engine: messages from the wrong epoch or group, forged
/// signatures, tampered ciphertexts and commits crafted by an insider that break a rule of
/// RFC 9420 §12. Each must fail with a typed error and leave the receiver's serialized state
/// byte for byte unchanged; the receiver then still follows the genuine commit.
final class GroupHostileInputTests: XCTestCase {
    private let now = GroupTestSupport.now

    private static var publicHandshakes: GroupConfiguration {
        var configuration = GroupConfiguration()
        configuration.handshakeWireFormat = .publicMessage
        return configuration
    }

    /// `message` must fail at `receiver` with `expected` (any error when nil) and change nothing.
    private func assertRejected(_ message: MLSMessage, by receiver: inout MLSGroup, _ expected: MLSError?,
                                authorize: ((CommitSummary) throws -> Void)? = nil,
                                file: StaticString = #filePath, line: UInt = #line) {
        let before = receiver.serialized()
        XCTAssertThrowsError(try receiver.process(message, at: now, authorize: authorize), file: file, line: line) { error in
            if let expected { XCTAssertEqual(error as? MLSError, expected, file: file, line: line) }
        }
        XCTAssertEqual(receiver.serialized(), before, "state changed after a rejected message", file: file, line: line)
    }

    /// A PublicMessage commit from `group`'s member, signed by `signer` (default: its own key)
    /// with a valid membership tag: only the inner checks can reject it.
    private func insiderCommit(_ group: MLSGroup, _ commit: Commit, signer: SignaturePrivateKey? = nil,
                               confirmationTag: [UInt8] = [UInt8](repeating: 7, count: 32)) throws -> MLSMessage {
        var content = try group.state.messageSecrets.sign(.commit(commit), from: group.ownLeafIndex, wireFormat: .publicMessage,
                                                          signer: signer ?? group.signer)
        content.auth.confirmationTag = confirmationTag
        return MLSMessage(body: .publicMessage(try group.state.messageSecrets.protectPublic(content)))
    }

    func testInsiderCommitsBreakingRulesLeaveStateUnchanged() throws {
        var rng = SplitMix64(seed: 101)
        var groups = try GroupTestSupport.makeGroup(members: 3, configuration: Self.publicHandshakes, using: &rng)
        let alice = groups[0]
        let remove = { (leaf: UInt32) in ProposalOrRef.proposal(.remove(RemoveProposal(removed: leaf))) }

        // Wrong signature: a key that is not the sender's.
        let forger = try SignaturePrivateKey.generate(using: &rng)
        assertRejected(try insiderCommit(alice, Commit(proposals: [remove(1)]), signer: forger), by: &groups[2], .invalidMessageSignature)
        // A Remove needs an UpdatePath.
        assertRejected(try insiderCommit(alice, Commit(proposals: [remove(1)])), by: &groups[2],
                       .invalidCommit("an UpdatePath is required by these proposals"))
        // A reference to a proposal never received.
        assertRejected(try insiderCommit(alice, Commit(proposals: [.reference([UInt8](repeating: 1, count: 32))])), by: &groups[2],
                       .unknownProposalReference)
        // The committer removing itself, a blank leaf, or one member twice.
        assertRejected(try insiderCommit(alice, Commit(proposals: [remove(0)])), by: &groups[2], .invalidProposal("a Remove of the committer"))
        assertRejected(try insiderCommit(alice, Commit(proposals: [remove(3)])), by: &groups[2], nil)
        assertRejected(try insiderCommit(alice, Commit(proposals: [remove(1), remove(1)])), by: &groups[2], nil)
        // An inline SelfRemove would remove the committer.
        assertRejected(try insiderCommit(alice, Commit(proposals: [.proposal(.selfRemove)])), by: &groups[2], nil)
        // Unsupported proposal types.
        let reInit = Proposal.reInit(ReInitProposal(groupID: [1], version: .mls10, cipherSuite: .mls128DHKEMX25519AES128GCMSHA256Ed25519,
                                                    extensions: Extensions()))
        assertRejected(try insiderCommit(alice, Commit(proposals: [.proposal(reInit)])), by: &groups[2], .unsupportedProposal(0x0005))
        // An Add whose KeyPackage signature was tampered with.
        var badPackage = try GroupTestSupport.keyPackage(9, using: &rng).keyPackage
        badPackage.signature[0] ^= 0x01
        assertRejected(try insiderCommit(alice, Commit(proposals: [.proposal(.add(AddProposal(keyPackage: badPackage)))])),
                       by: &groups[2], .invalidKeyPackage("KeyPackage signature does not verify"))
        // An Add of a KeyPackage whose lifetime is over at processing time.
        let expired = try GroupTestSupport.keyPackage(10, using: &rng).keyPackage
        var late = groups[2]
        let before = late.serialized()
        XCTAssertThrowsError(try late.process(try insiderCommit(alice, Commit(proposals: [.proposal(.add(AddProposal(keyPackage: expired)))])),
                                              at: now + 200 * 86_400)) { error in
            guard case .keyPackageLifetime = error as? MLSError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(late.serialized(), before)

        // The genuine commit still goes through afterwards.
        let genuine = try groups[0].removeMembers([LeafIndex(1)], using: &rng)
        try groups[0].mergePendingCommit()
        guard case .commit(let summary) = try groups[2].process(genuine.commit, at: now) else { return XCTFail("not a commit") }
        XCTAssertEqual(summary.removed.map(\.leafIndex), [LeafIndex(1)])
        XCTAssertEqual(groups[2].epochAuthenticator, groups[0].epochAuthenticator)
    }

    func testTamperedCommitContentIsRejected() throws {
        var rng = SplitMix64(seed: 102)
        var groups = try GroupTestSupport.makeGroup(members: 3, configuration: Self.publicHandshakes, using: &rng)
        var committer = groups[0]
        let output = try committer.selfUpdate(using: &rng)
        guard case .publicMessage(let genuine) = output.commit.body, case .commit(let commit) = genuine.content.body,
              let tag = genuine.auth.confirmationTag, let path = commit.path
        else { return XCTFail("expected a PublicMessage commit with a path") }

        // A flipped bit anywhere in the framed content breaks the membership tag.
        var flipped = genuine
        flipped.content.authenticatedData = [1]
        assertRejected(MLSMessage(body: .publicMessage(flipped)), by: &groups[1], .invalidMembershipTag)
        // Wrong epoch in the header: no secrets for it.
        var future = genuine
        future.content.epoch += 1
        assertRejected(MLSMessage(body: .publicMessage(future)), by: &groups[1], .epochUnavailable(epoch: 2, current: 1))
        // Another group's id.
        var foreign = genuine
        foreign.content.groupID = [0xAA]
        assertRejected(MLSMessage(body: .publicMessage(foreign)), by: &groups[1], .wrongGroupID)

        // Re-signed and re-tagged by the insider: a wrong confirmation tag.
        let original = groups[0]
        var wrongTag = tag
        wrongTag[0] ^= 0x01
        assertRejected(try insiderCommit(original, commit, confirmationTag: wrongTag), by: &groups[1], .invalidConfirmationTag)
        // A path node key swapped: the parent hash the leaf signed no longer matches.
        var badKey = commit
        badKey.path?.nodes[0].encryptionKey = try CipherSuiteProvider.mls128DHKEMX25519AES128GCMSHA256Ed25519.hpke
            .generateKeyPair(using: &rng).publicKey.bytes
        assertRejected(try insiderCommit(original, badKey, confirmationTag: tag), by: &groups[1], .parentHashMismatch)
        // A path leaf whose content no longer matches its signature.
        var badLeaf = commit
        badLeaf.path?.leafNode.extensions = try Extensions([.applicationID([1])])
        assertRejected(try insiderCommit(original, badLeaf, confirmationTag: tag), by: &groups[1], nil)
        // A ciphertext of the path tampered with: the path secret does not decrypt.
        var badCiphertext = commit
        badCiphertext.path?.nodes[path.nodes.count - 1].encryptedPathSecret[0].ciphertext[0] ^= 0x01
        assertRejected(try insiderCommit(original, badCiphertext, confirmationTag: tag), by: &groups[1], nil)
        // The application refusing a verified commit (Marmot's admin policy).
        assertRejected(output.commit, by: &groups[1], .commitRejected("refused"),
                       authorize: { _ in throw MLSError.commitRejected("refused") })

        // The genuine commit applies.
        try committer.mergePendingCommit()
        for i in [1, 2] { _ = try groups[i].process(output.commit, at: now) }
        XCTAssertEqual(groups[1].epochAuthenticator, committer.epochAuthenticator)
        XCTAssertEqual(groups[2].epochAuthenticator, committer.epochAuthenticator)
        // Replayed after it was applied: its epoch is past, where handshakes are refused.
        assertRejected(output.commit, by: &groups[1], .handshakeFromPastEpoch(epoch: 1))
    }

    func testTamperedPrivateMessagesAndReplaysAreRejected() throws {
        var rng = SplitMix64(seed: 103)
        var groups = try GroupTestSupport.makeGroup(members: 3, using: &rng)
        let application = try groups[0].encryptApplicationMessage(Array("hi".utf8), using: &rng)
        guard case .privateMessage(let genuine) = application.body else { return XCTFail("not a PrivateMessage") }

        var content = genuine
        content.ciphertext[content.ciphertext.count - 1] ^= 0x01
        assertRejected(MLSMessage(body: .privateMessage(content)), by: &groups[1], nil)
        var senderData = genuine
        senderData.encryptedSenderData[0] ^= 0x01
        assertRejected(MLSMessage(body: .privateMessage(senderData)), by: &groups[1], .senderDataDecryptionFailed)
        var header = genuine
        header.authenticatedData = [9]
        assertRejected(MLSMessage(body: .privateMessage(header)), by: &groups[1], .contentDecryptionFailed)

        // The genuine message decrypts once; its replay is refused and changes nothing.
        guard case .application(let app) = try groups[1].process(application, at: now) else { return XCTFail("not application") }
        XCTAssertEqual(app.data, Array("hi".utf8))
        assertRejected(application, by: &groups[1], .generationReplayed(leaf: 0, generation: 0))

        // A PrivateMessage commit with a flipped bit does not decrypt; the real one applies.
        var committer = groups[2]
        let output = try committer.selfUpdate(using: &rng)
        guard case .privateMessage(var tampered) = output.commit.body else { return XCTFail("commits are PrivateMessages by default") }
        tampered.ciphertext[0] ^= 0x80
        assertRejected(MLSMessage(body: .privateMessage(tampered)), by: &groups[1], nil)
        try committer.mergePendingCommit()
        _ = try groups[1].process(output.commit, at: now)
        XCTAssertEqual(groups[1].epochAuthenticator, committer.epochAuthenticator)
        // Our own message coming back cannot be processed as someone else's.
        var own = groups[1]
        let echo = try own.encryptApplicationMessage([1], using: &rng)
        XCTAssertThrowsError(try own.process(echo, at: now))
    }

    func testTamperedWelcomesAreRejected() throws {
        var rng = SplitMix64(seed: 104)
        var creator = try GroupTestSupport.createGroup(0, using: &rng)
        let bundle = try GroupTestSupport.keyPackage(1, using: &rng)
        let output = try creator.addMembers([try GroupTestSupport.verified(bundle)], using: &rng)
        guard let welcome = output.welcome else { return XCTFail("no Welcome") }

        var groupInfo = welcome
        groupInfo.encryptedGroupInfo[3] ^= 0x01
        XCTAssertThrowsError(try MLSGroup.join(welcome: groupInfo, keyPackage: bundle)) {
            XCTAssertEqual($0 as? MLSError, .welcomeDecryptionFailed)
        }
        var secrets = welcome
        secrets.secrets[0].encryptedGroupSecrets.ciphertext[0] ^= 0x01
        XCTAssertThrowsError(try MLSGroup.join(welcome: secrets, keyPackage: bundle)) {
            XCTAssertEqual($0 as? MLSError, .welcomeDecryptionFailed)
        }
        // A GroupInfo re-signed by someone else (here: re-encrypted by an insider who knows the
        // welcome secret) fails its signature check.
        let processed = try ProcessedWelcome(welcome: welcome, keyPackage: bundle)
        XCTAssertThrowsError(try processed.verifyGroupInfoSignature(signerKey: bundle.signer.publicKey.bytes)) {
            XCTAssertEqual($0 as? MLSError, .invalidGroupInfoSignature)
        }
        var forged = processed.unverifiedGroupInfo
        forged.groupContext.epoch += 1
        XCTAssertThrowsError(try ProcessedWelcome(welcome: rewrap(welcome, with: forged, processed: processed, to: bundle), keyPackage: bundle)
            .verifiedState(ratchetTree: nil, configuration: .default)) {
            XCTAssertEqual($0 as? MLSError, .invalidGroupInfoSignature)
        }
        XCTAssertNoThrow(try MLSGroup.join(welcome: welcome, keyPackage: bundle))
    }

    /// The Welcome with its GroupInfo replaced, sealed under the same welcome key, and the
    /// GroupSecrets re-encrypted for the new ciphertext (their HPKE context).
    private func rewrap(_ welcome: Welcome, with info: GroupInfo, processed: ProcessedWelcome,
                        to bundle: KeyPackageBundle) throws -> Welcome {
        let cs = processed.cipherSuite
        let welcomeSecret = KeySchedule.welcomeSecret(cs, joinerSecret: processed.groupSecrets.joinerSecret, pskSecret: processed.pskSecret)
        let (key, nonce) = try KeySchedule.welcomeKeyAndNonce(cs, welcomeSecret: welcomeSecret)
        var rewrapped = welcome
        rewrapped.encryptedGroupInfo = try cs.aeadSeal(key: key, nonce: nonce, aad: [], plaintext: info.tlsSerialized)
        var rng = SplitMix64(seed: 5)
        rewrapped.secrets = [EncryptedGroupSecrets(
            newMember: bundle.reference,
            encryptedGroupSecrets: try cs.encryptWithLabel(HPKEPublicKey(bundle.keyPackage.initKey), label: "Welcome",
                                                           context: rewrapped.encryptedGroupInfo,
                                                           plaintext: processed.groupSecrets.tlsSerialized, using: &rng))]
        return rewrapped
    }
}
