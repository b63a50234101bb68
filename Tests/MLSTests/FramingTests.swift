import XCTest
@testable import MLS
import TestSupport

/// Framing round trips (RFC 9420 §6): what one member protects, another unprotects to the same
/// AuthenticatedContent, over the wire encoding, with the right ratchets and generation windows.
final class FramingTests: XCTestCase {
    private var rng = SplitMix64(seed: 0x5EED)

    /// Protect from `sender`, go through MLSMessage bytes, unprotect at `receiver`.
    private func deliver(_ message: ProtectedMessage, to receiver: inout MessageSecrets, fixture: FramingFixture,
                         isPastEpoch: Bool = false) throws -> VerifiedAuthenticatedContent {
        let received = try ProtectedMessage(tlsSerialized: message.mlsMessage.tlsSerialized)
        return try receiver.unprotect(received, isPastEpoch: isPastEpoch, signatureKey: fixture.lookup)
    }

    func testPrivateApplicationMessageRoundTrip() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        let content = try fixture.content(.application(Array("hello".utf8)), from: 0, wireFormat: .privateMessage)
        let message = try alice.protectPrivate(content, using: &rng)
        XCTAssertEqual(message.contentType, .application)
        XCTAssertEqual(message.authenticatedData, [])
        XCTAssertEqual(alice.secretTree.nextGeneration(leaf: LeafIndex(0), type: .application), 1)
        XCTAssertEqual(alice.secretTree.nextGeneration(leaf: LeafIndex(0), type: .handshake), 0)

        let verified = try deliver(.privateMessage(message), to: &bob, fixture: fixture)
        XCTAssertEqual(verified.authenticatedContent, content)
        XCTAssertEqual(verified.body, .application(Array("hello".utf8)))
        XCTAssertEqual(verified.sender, .member(leafIndex: 0))
        XCTAssertEqual(verified.wireFormat, .privateMessage)
        XCTAssertEqual(verified.generation, 0)
        XCTAssertEqual(bob.secretTree.nextGeneration(leaf: LeafIndex(0), type: .application), 1)
    }

    func testHandshakeMessagesUseTheHandshakeRatchet() throws {
        let fixture = try FramingFixture()
        var carol = try fixture.secrets()
        var alice = try fixture.secrets()
        let proposal = try fixture.content(.proposal(.remove(RemoveProposal(removed: 1))), from: 2, wireFormat: .privateMessage)
        let commit = try fixture.content(.commit(Commit(proposals: [.proposal(.remove(RemoveProposal(removed: 1)))])),
                                         from: 2, wireFormat: .privateMessage)
        let sentProposal = try carol.protectPrivate(proposal, using: &rng)
        let sentCommit = try carol.protectPrivate(commit, using: &rng)
        XCTAssertEqual(carol.secretTree.nextGeneration(leaf: LeafIndex(2), type: .handshake), 2)
        XCTAssertEqual(carol.secretTree.nextGeneration(leaf: LeafIndex(2), type: .application), 0)

        let first = try deliver(.privateMessage(sentProposal), to: &alice, fixture: fixture)
        let second = try deliver(.privateMessage(sentCommit), to: &alice, fixture: fixture)
        XCTAssertEqual(first.authenticatedContent, proposal)
        XCTAssertEqual(second.authenticatedContent, commit)
        XCTAssertEqual(second.generation, 1)
        XCTAssertEqual(second.confirmationTag, commit.auth.confirmationTag)
    }

    func testPublicMessagesCarryAMembershipTag() throws {
        let fixture = try FramingFixture()
        let bob = try fixture.secrets()
        var alice = try fixture.secrets()
        // Marmot sends SelfRemove proposals as PublicMessage.
        let selfRemove = try fixture.content(.proposal(.selfRemove), from: 1, wireFormat: .publicMessage)
        let commit = try fixture.content(.commit(Commit(proposals: [])), from: 1, wireFormat: .publicMessage)
        for content in [selfRemove, commit] {
            let message = try bob.protectPublic(content)
            XCTAssertEqual(message.membershipTag?.count, 32)
            let before = alice
            let verified = try deliver(.publicMessage(message), to: &alice, fixture: fixture)
            XCTAssertEqual(verified.authenticatedContent, content)
            XCTAssertNil(verified.generation)
            XCTAssertEqual(alice, before, "a PublicMessage uses no secret-tree key")
        }
    }

    func testAuthenticatedDataAndPaddingRoundTrip() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        let content = try fixture.content(.application([1, 2, 3]), from: 0, wireFormat: .privateMessage,
                                          authenticatedData: Array("aad".utf8))
        let padded = try alice.protectPrivate(content, padding: .toMultiple(of: 64), using: &rng)
        XCTAssertEqual(padded.authenticatedData, Array("aad".utf8))
        XCTAssertEqual((padded.ciphertext.count - fixture.cs.aeadTagLength) % 64, 0)
        let unpadded = try alice.protectPrivate(content, using: &rng)
        XCTAssertLessThan(unpadded.ciphertext.count, padded.ciphertext.count)
        XCTAssertEqual(try deliver(.privateMessage(padded), to: &bob, fixture: fixture).authenticatedContent, content)
        XCTAssertEqual(try deliver(.privateMessage(unpadded), to: &bob, fixture: fixture).authenticatedContent, content)
    }

    func testPaddingLengths() {
        XCTAssertEqual(MessagePadding.none.paddingLength(contentLength: 13), 0)
        XCTAssertEqual(MessagePadding.toMultiple(of: 16).paddingLength(contentLength: 13), 3)
        XCTAssertEqual(MessagePadding.toMultiple(of: 16).paddingLength(contentLength: 32), 0)
        XCTAssertEqual(MessagePadding.toMultiple(of: 1).paddingLength(contentLength: 13), 0)
        XCTAssertEqual(MessagePadding.toMultiple(of: -5).paddingLength(contentLength: 13), 0)
    }

    func testReuseGuardComesFromTheRandomSource() throws {
        let fixture = try FramingFixture()
        let content = try fixture.content(.application([9]), from: 0, wireFormat: .privateMessage)
        var first = try fixture.secrets()
        var second = try fixture.secrets()
        var rngA = SplitMix64(seed: 1)
        var rngB = SplitMix64(seed: 1)
        var rngC = SplitMix64(seed: 2)
        // Same key, same generation: only the reuse guard can make the ciphertexts differ.
        XCTAssertEqual(try first.protectPrivate(content, using: &rngA), try second.protectPrivate(content, using: &rngB))
        var third = try fixture.secrets()
        XCTAssertNotEqual(try first.protectPrivate(content, using: &rngA).ciphertext,
                          try third.protectPrivate(content, using: &rngC).ciphertext)
    }

    func testOutOfOrderWithinTolerance() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        let messages = try fixture.applicationMessages(101, from: 0, sender: &alice)
        // The newest first, then every older one down to 100 behind it.
        for message in messages.reversed() {
            let verified = try deliver(.privateMessage(message), to: &bob, fixture: fixture)
            XCTAssertEqual(verified.body, .application(Array("message \(verified.generation!)".utf8)))
        }
    }

    func testGenerationOlderThanToleranceRejected() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        let messages = try fixture.applicationMessages(102, from: 0, sender: &alice)
        _ = try deliver(.privateMessage(messages[101]), to: &bob, fixture: fixture)
        XCTAssertNoThrow(try deliver(.privateMessage(messages[1]), to: &bob, fixture: fixture))
        let before = bob
        XCTAssertThrowsMLSError(.generationTooOld(leaf: 0, generation: 0, newest: 101),
                                try deliver(.privateMessage(messages[0]), to: &bob, fixture: fixture))
        XCTAssertEqual(bob, before)
    }

    func testBeyondMaximumForwardDistanceRejected() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        let messages = try fixture.applicationMessages(1002, from: 1, sender: &alice)
        let before = bob
        XCTAssertThrowsMLSError(.generationTooFarAhead(leaf: 1, generation: 1001, next: 0),
                                try deliver(.privateMessage(messages[1001]), to: &bob, fixture: fixture))
        XCTAssertEqual(bob, before)
        // Exactly the maximum distance is still accepted, and then 1001 is one step ahead.
        XCTAssertEqual(try deliver(.privateMessage(messages[1000]), to: &bob, fixture: fixture).generation, 1000)
        XCTAssertEqual(try deliver(.privateMessage(messages[1001]), to: &bob, fixture: fixture).generation, 1001)
    }

    func testReplayedGenerationRejected() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        let messages = try fixture.applicationMessages(3, from: 0, sender: &alice)
        for message in [messages[2], messages[0]] { _ = try deliver(.privateMessage(message), to: &bob, fixture: fixture) }
        let before = bob
        for (message, generation) in [(messages[2], UInt32(2)), (messages[0], 0)] {
            XCTAssertThrowsMLSError(.generationReplayed(leaf: 0, generation: generation),
                                    try deliver(.privateMessage(message), to: &bob, fixture: fixture))
        }
        XCTAssertEqual(bob, before)
        XCTAssertEqual(try deliver(.privateMessage(messages[1]), to: &bob, fixture: fixture).generation, 1)
    }

    func testPastEpochAcceptsOnlyApplicationMessages() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        let application = try alice.protectPrivate(fixture.content(.application([7]), from: 0, wireFormat: .privateMessage), using: &rng)
        let proposal = try alice.protectPrivate(fixture.content(.proposal(.selfRemove), from: 0, wireFormat: .privateMessage), using: &rng)
        let publicProposal = try alice.protectPublic(fixture.content(.proposal(.selfRemove), from: 0, wireFormat: .publicMessage))
        XCTAssertEqual(try deliver(.privateMessage(application), to: &bob, fixture: fixture, isPastEpoch: true).body, .application([7]))
        let before = bob
        XCTAssertThrowsMLSError(.handshakeFromPastEpoch(epoch: 7),
                                try deliver(.privateMessage(proposal), to: &bob, fixture: fixture, isPastEpoch: true))
        XCTAssertThrowsMLSError(.handshakeFromPastEpoch(epoch: 7),
                                try deliver(.publicMessage(publicProposal), to: &bob, fixture: fixture, isPastEpoch: true))
        XCTAssertEqual(bob, before)
    }

    func testMessageSecretsSurviveSerialization() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        let messages = try fixture.applicationMessages(5, from: 0, sender: &alice)
        _ = try deliver(.privateMessage(messages[3]), to: &bob, fixture: fixture)
        var restored = try MessageSecrets(tlsSerialized: bob.tlsSerialized)
        XCTAssertEqual(restored, bob)
        // The restored state remembers the skipped and consumed generations.
        XCTAssertEqual(try deliver(.privateMessage(messages[1]), to: &restored, fixture: fixture).generation, 1)
        XCTAssertThrowsMLSError(.generationReplayed(leaf: 0, generation: 3),
                                try deliver(.privateMessage(messages[3]), to: &restored, fixture: fixture))
        // And the sender side continues from where it was.
        var restoredAlice = try MessageSecrets(tlsSerialized: alice.tlsSerialized)
        let next = try restoredAlice.protectPrivate(fixture.content(.application([]), from: 0, wireFormat: .privateMessage), using: &rng)
        XCTAssertEqual(try deliver(.privateMessage(next), to: &bob, fixture: fixture).generation, 5)
        XCTAssertThrowsError(try MessageSecrets(tlsSerialized: Array(bob.tlsSerialized.dropLast())))
    }

    func testSecretsNeverPrinted() throws {
        let secrets = try FramingFixture().secrets()
        XCTAssertEqual("\(secrets)", "MessageSecrets(epoch 7, redacted)")
        var dumped = ""
        dump(secrets, to: &dumped)
        XCTAssertFalse(dumped.contains("Secret("), dumped)
    }

    func testExternalSenderProposalVerifiesWithoutMembershipTag() throws {
        let fixture = try FramingFixture()
        var rng = SplitMix64(seed: 77)
        let external = try SignaturePrivateKey.generate(using: &rng)
        let framed = FramedContent(groupID: fixture.context.groupID, epoch: fixture.context.epoch,
                                   sender: .external(senderIndex: 0), body: .proposal(.remove(RemoveProposal(removed: 2))))
        let content = try AuthenticatedContent.sign(framed, wireFormat: .publicMessage, signer: external,
                                                    serializedContext: fixture.context.tlsSerialized, suite: fixture.cs)
        let message = try fixture.secrets().protectPublic(content)
        XCTAssertNil(message.membershipTag)
        var bob = try fixture.secrets()
        let received = try ProtectedMessage(tlsSerialized: ProtectedMessage.publicMessage(message).mlsMessage.tlsSerialized)
        let verified = try bob.unprotect(received) { sender in
            guard case .external(0) = sender else { throw MLSError.senderNotAllowed("unknown external sender") }
            return external.publicKey
        }
        XCTAssertEqual(verified.sender, .external(senderIndex: 0))
        // Signed by someone else, or offered as if from a member, it fails.
        XCTAssertThrowsMLSError(.invalidMessageSignature, try bob.unprotect(received) { _ in fixture.signers[0].publicKey })
    }

    /// New members are verified with the key in their own content (the Add's KeyPackage, the
    /// commit path's leaf node); the tree lookup is never asked and a different key fails.
    func testNewMemberSendersUseTheKeyInTheirContent() throws {
        let fixture = try FramingFixture()
        var rng = SplitMix64(seed: 88)
        let joiner = try SignaturePrivateKey.generate(using: &rng)
        let leaf = LeafNode(encryptionKey: rng.randomBytes(32), signatureKey: joiner.publicKey.bytes,
                            credential: .basic(identity: rng.randomBytes(32)), capabilities: Capabilities(),
                            source: .commit(parentHash: []))
        let keyPackage = KeyPackage(initKey: rng.randomBytes(32), leafNode: leaf)
        let ctx = fixture.context
        let bodies: [(Sender, FramedContentBody)] = [
            (.newMemberProposal, .proposal(.add(AddProposal(keyPackage: keyPackage)))),
            (.newMemberCommit, .commit(Commit(proposals: [], path: UpdatePath(leafNode: leaf, nodes: [])))),
        ]
        for (sender, body) in bodies {
            let framed = FramedContent(groupID: ctx.groupID, epoch: ctx.epoch, sender: sender, body: body)
            var content = try AuthenticatedContent.sign(framed, wireFormat: .publicMessage, signer: joiner,
                                                        serializedContext: ctx.tlsSerialized, suite: fixture.cs)
            if body.contentType == .commit { content.auth.confirmationTag = Array(repeating: 7, count: 32) }
            let message = try fixture.secrets().protectPublic(content)
            XCTAssertNil(message.membershipTag)
            var bob = try fixture.secrets()
            let verified = try bob.unprotect(.publicMessage(message)) { _ in
                XCTFail("new-member senders are not looked up")
                throw MLSError.senderNotAllowed("lookup")
            }
            XCTAssertEqual(verified.authenticatedContent, content)
            let forged = try AuthenticatedContent.sign(framed, wireFormat: .publicMessage, signer: fixture.signers[0],
                                                       serializedContext: ctx.tlsSerialized, suite: fixture.cs)
            var forgedMessage = PublicMessage(content: forged.content, auth: forged.auth)
            forgedMessage.auth.confirmationTag = content.auth.confirmationTag
            XCTAssertThrowsMLSError(.invalidMessageSignature, try bob.unprotect(.publicMessage(forgedMessage)) { _ in joiner.publicKey })
        }
    }
}
