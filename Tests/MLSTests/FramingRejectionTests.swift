import XCTest
@testable import MLS
import TestSupport

/// Hostile framed messages: each tampering, truncation or rule violation is refused with its own
/// typed error, and the receiver's secrets are exactly as before, so the genuine message still
/// decrypts afterwards.
final class FramingRejectionTests: XCTestCase {
    private var rng = SplitMix64(seed: 0xBAD)

    /// Asserts `message` is refused with `expected`, that `receiver` is unchanged, and returns.
    private func assertRejected(_ message: ProtectedMessage, _ expected: MLSError, receiver: inout MessageSecrets,
                                fixture: FramingFixture, file: StaticString = #filePath, line: UInt = #line) {
        let before = receiver
        XCTAssertThrowsMLSError(expected, try receiver.unprotect(message, signatureKey: fixture.lookup), file: file, line: line)
        XCTAssertEqual(receiver, before, "state changed by a rejected message", file: file, line: line)
    }

    private func privateApplication(_ fixture: FramingFixture, sender: inout MessageSecrets,
                                    signer: SignaturePrivateKey? = nil) throws -> PrivateMessage {
        try sender.protectPrivate(fixture.content(.application(Array("pay 10 to bob".utf8)), from: 0,
                                                  wireFormat: .privateMessage, signer: signer), using: &rng)
    }

    func testTamperedPrivateMessageLeavesStateUnchanged() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        let genuine = try privateApplication(fixture, sender: &alice)

        var flipped = genuine
        flipped.ciphertext[0] ^= 1  // inside the sample: the sender-data key changes too
        assertRejected(.privateMessage(flipped), .senderDataDecryptionFailed, receiver: &bob, fixture: fixture)
        var tag = genuine
        tag.ciphertext[tag.ciphertext.count - 1] ^= 0x80  // past the sample: only the content fails
        assertRejected(.privateMessage(tag), .contentDecryptionFailed, receiver: &bob, fixture: fixture)
        var senderData = genuine
        senderData.encryptedSenderData[3] ^= 4
        assertRejected(.privateMessage(senderData), .senderDataDecryptionFailed, receiver: &bob, fixture: fixture)
        var aad = genuine
        aad.authenticatedData = [0]  // bound by the content AAD only
        assertRejected(.privateMessage(aad), .contentDecryptionFailed, receiver: &bob, fixture: fixture)
        var contentType = genuine
        contentType.contentType = .proposal  // bound by both AADs
        assertRejected(.privateMessage(contentType), .senderDataDecryptionFailed, receiver: &bob, fixture: fixture)
        var short = genuine
        short.ciphertext = Array(genuine.ciphertext.prefix(10))
        assertRejected(.privateMessage(short), .senderDataDecryptionFailed, receiver: &bob, fixture: fixture)
        var empty = genuine
        empty.encryptedSenderData = []
        assertRejected(.privateMessage(empty), .senderDataDecryptionFailed, receiver: &bob, fixture: fixture)

        // Nothing was consumed: the genuine message still decrypts, once.
        XCTAssertEqual(try bob.unprotect(.privateMessage(genuine), signatureKey: fixture.lookup).generation, 0)
        assertRejected(.privateMessage(genuine), .generationReplayed(leaf: 0, generation: 0), receiver: &bob, fixture: fixture)
    }

    func testForgedSignatureDoesNotBurnTheGeneration() throws {
        let fixture = try FramingFixture()
        // A member (leaf 2) holds the group keys and encrypts as leaf 0 with its own signature key.
        var mallory = try fixture.secrets()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        let forged = try privateApplication(fixture, sender: &mallory, signer: fixture.signers[2])
        assertRejected(.privateMessage(forged), .invalidMessageSignature, receiver: &bob, fixture: fixture)
        let genuine = try privateApplication(fixture, sender: &alice)
        XCTAssertEqual(try bob.unprotect(.privateMessage(genuine), signatureKey: fixture.lookup).sender, .member(leafIndex: 0))
    }

    func testSenderLookupFailureLeavesStateUnchanged() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        let message = try privateApplication(fixture, sender: &alice)
        let before = bob
        XCTAssertThrowsMLSError(.blankLeaf(0), try bob.unprotect(.privateMessage(message)) { _ in throw MLSError.blankLeaf(0) })
        XCTAssertEqual(bob, before)
        XCTAssertThrowsMLSError(.invalidSenderSignatureKey,
                                try bob.unprotect(.privateMessage(message)) { _ in SignaturePublicKey([1, 2, 3]) })
        XCTAssertEqual(bob, before)
    }

    func testSenderDataNamingALeafOutsideTheTree() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        let plaintext = PrivateMessageContent(body: .application([1]), auth: FramedContentAuthData(signature: [])).tlsSerialized
        let forged = SenderData(leafIndex: 9, generation: 0, reuseGuard: [0, 0, 0, 0]).tlsSerialized
        let message = try fixture.encryptRaw(plaintext: plaintext, senderData: forged, contentType: .application, from: 0, sender: &alice)
        assertRejected(.privateMessage(message), .leafIndexOutOfRange(9), receiver: &bob, fixture: fixture)
        let truncated = try fixture.encryptRaw(plaintext: plaintext, senderData: [0, 0, 0, 0, 0], contentType: .application,
                                               from: 0, sender: &alice)
        assertRejected(.privateMessage(truncated), .malformedSenderData(.truncated(needed: 4, available: 1)),
                       receiver: &bob, fixture: fixture)
    }

    func testNonZeroPaddingRejected() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        let content = try fixture.content(.application([5, 5]), from: 0, wireFormat: .privateMessage)
        let encoded = PrivateMessageContent(body: content.content.body, auth: content.auth).tlsSerialized
        let bad = try fixture.encryptRaw(plaintext: encoded + [0, 0, 1, 0], contentType: .application, from: 0, sender: &alice)
        assertRejected(.privateMessage(bad), .malformedMessageContent(.malformed("non-zero padding in PrivateMessageContent")),
                       receiver: &bob, fixture: fixture)
        let good = try fixture.encryptRaw(plaintext: encoded + [0, 0, 0, 0], contentType: .application, from: 0, sender: &alice)
        XCTAssertEqual(try bob.unprotect(.privateMessage(good), signatureKey: fixture.lookup).authenticatedContent, content)
        let garbage = try fixture.encryptRaw(plaintext: [0x40], contentType: .application, from: 0, sender: &alice)
        assertRejected(.privateMessage(garbage), .malformedMessageContent(.truncated(needed: 1, available: 0)),
                       receiver: &bob, fixture: fixture)
    }

    func testTamperedPublicMessage() throws {
        let fixture = try FramingFixture()
        let bob = try fixture.secrets()
        var alice = try fixture.secrets()
        let content = try fixture.content(.proposal(.remove(RemoveProposal(removed: 2))), from: 1, wireFormat: .publicMessage)
        let genuine = try bob.protectPublic(content)

        var tag = genuine
        tag.membershipTag?[0] ^= 1
        assertRejected(.publicMessage(tag), .invalidMembershipTag, receiver: &alice, fixture: fixture)
        var noTag = genuine
        noTag.membershipTag = nil
        assertRejected(.publicMessage(noTag), .missingMembershipTag, receiver: &alice, fixture: fixture)
        var body = genuine
        body.content.body = .proposal(.remove(RemoveProposal(removed: 0)))
        assertRejected(.publicMessage(body), .invalidMembershipTag, receiver: &alice, fixture: fixture)
        var sender = genuine
        sender.content.sender = .member(leafIndex: 2)
        assertRejected(.publicMessage(sender), .invalidMembershipTag, receiver: &alice, fixture: fixture)

        // A valid membership tag over a bad signature: a member forging another member.
        var signature = genuine
        signature.auth.signature[10] ^= 1
        signature.membershipTag = fixture.cs.mac(key: fixture.epochSecrets.membershipKey,
                                                 data: signature.toBeMACed(serializedContext: fixture.context.tlsSerialized))
        assertRejected(.publicMessage(signature), .invalidMessageSignature, receiver: &alice, fixture: fixture)

        // Another epoch's membership key.
        let other = try FramingFixture(seed: 99)
        let foreign = MessageSecrets(cipherSuite: fixture.cs, groupContext: fixture.context,
                                         senderDataSecret: other.epochSecrets.senderDataSecret,
                                         membershipKey: other.epochSecrets.membershipKey, secretTree: bob.secretTree)
        assertRejected(.publicMessage(try foreign.protectPublic(content)), .invalidMembershipTag, receiver: &alice, fixture: fixture)
        XCTAssertNoThrow(try alice.unprotect(.publicMessage(genuine), signatureKey: fixture.lookup))
    }

    func testWrongEpochAndGroup() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        var message = try privateApplication(fixture, sender: &alice)
        message.epoch = 8
        assertRejected(.privateMessage(message), .wrongEpoch(expected: 7, actual: 8), receiver: &bob, fixture: fixture)
        message.epoch = 7
        message.groupID[0] ^= 1
        assertRejected(.privateMessage(message), .wrongGroupID, receiver: &bob, fixture: fixture)

        // A message of the next epoch offered to this epoch's secrets, and the reverse.
        let next = try FramingFixture(epoch: 8)
        var nextAlice = try next.secrets()
        let later = try nextAlice.protectPrivate(next.content(.application([1]), from: 0, wireFormat: .privateMessage), using: &rng)
        assertRejected(.privateMessage(later), .wrongEpoch(expected: 7, actual: 8), receiver: &bob, fixture: fixture)
        let publicLater = try nextAlice.protectPublic(next.content(.proposal(.selfRemove), from: 0, wireFormat: .publicMessage))
        assertRejected(.publicMessage(publicLater), .wrongEpoch(expected: 7, actual: 8), receiver: &bob, fixture: fixture)
        XCTAssertThrowsMLSError(.wrongEpoch(expected: 7, actual: 8), try alice.protectPublic(
            next.content(.proposal(.selfRemove), from: 0, wireFormat: .publicMessage)))
    }

    func testTruncatedInputNeverDecodes() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        let privateBytes = ProtectedMessage.privateMessage(try privateApplication(fixture, sender: &alice)).mlsMessage.tlsSerialized
        let publicBytes = ProtectedMessage.publicMessage(try alice.protectPublic(
            fixture.content(.commit(Commit(proposals: [])), from: 0, wireFormat: .publicMessage))).mlsMessage.tlsSerialized
        for bytes in [privateBytes, publicBytes] {
            XCTAssertNoThrow(try ProtectedMessage(tlsSerialized: bytes))
            for length in 0..<bytes.count {
                XCTAssertThrowsError(try ProtectedMessage(tlsSerialized: Array(bytes.prefix(length)))) { error in
                    XCTAssertTrue(error is TLSDecodingError, "prefix \(length): \(error)")
                }
            }
            XCTAssertThrowsError(try ProtectedMessage(tlsSerialized: bytes + [0])) {
                XCTAssertEqual($0 as? TLSDecodingError, .trailingBytes(1))
            }
        }
    }

    func testOnlyFramedMessagesAreAccepted() throws {
        let welcome = MLSMessage(body: .welcome(Welcome(cipherSuite: .mls128DHKEMX25519AES128GCMSHA256Ed25519, secrets: [],
                                                         encryptedGroupInfo: [])))
        XCTAssertThrowsMLSError(.notAFramedMessage(wireFormat: 3), try ProtectedMessage(welcome))
    }

    func testSenderAndContentRules() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        // Application data is never sent in the clear, in either direction.
        let application = try fixture.content(.application([1]), from: 0, wireFormat: .publicMessage)
        XCTAssertThrowsMLSError(.senderNotAllowed("application data must be sent as PrivateMessage"), try alice.protectPublic(application))
        var clear = PublicMessage(content: application.content, auth: application.auth)
        clear.membershipTag = fixture.cs.mac(key: fixture.epochSecrets.membershipKey,
                                             data: clear.toBeMACed(serializedContext: fixture.context.tlsSerialized))
        assertRejected(.publicMessage(clear), .senderNotAllowed("application data must be sent as PrivateMessage"),
                       receiver: &bob, fixture: fixture)

        // Content signed for one wire format cannot be sent in the other.
        let signedPrivate = try fixture.content(.proposal(.selfRemove), from: 0, wireFormat: .privateMessage)
        XCTAssertThrowsMLSError(.wireFormatMismatch(expected: 1, actual: 2), try alice.protectPublic(signedPrivate))
        let signedPublic = try fixture.content(.proposal(.selfRemove), from: 0, wireFormat: .publicMessage)
        XCTAssertThrowsMLSError(.wireFormatMismatch(expected: 2, actual: 1), try alice.protectPrivate(signedPublic, using: &rng))

        // A commit needs its confirmation tag.
        var commit = try fixture.content(.commit(Commit(proposals: [])), from: 0, wireFormat: .privateMessage)
        commit.auth.confirmationTag = nil
        let before = alice
        XCTAssertThrowsMLSError(.missingConfirmationTag, try alice.protectPrivate(commit, using: &rng))
        XCTAssertEqual(alice, before, "a refused protect takes no key")

        // Non-member senders: no PrivateMessage, external senders only proposals, new members
        // only their Add or commit.
        let ctx = fixture.context
        func framed(_ sender: Sender, _ body: FramedContentBody) -> FramedContent {
            FramedContent(groupID: ctx.groupID, epoch: ctx.epoch, sender: sender, body: body)
        }
        let cases: [(FramedContent, WireFormat, String)] = [
            (framed(.external(senderIndex: 0), .proposal(.selfRemove)), .privateMessage, "a PrivateMessage must come from a member"),
            (framed(.external(senderIndex: 0), .proposal(.selfRemove)), .publicMessage, "an external sender may not propose 10"),
            (framed(.external(senderIndex: 0), .commit(Commit(proposals: []))), .publicMessage,
             "an external sender may send only proposals"),
            (framed(.newMemberProposal, .proposal(.selfRemove)), .publicMessage,
             "a new_member_proposal sender may send only an Add proposal"),
            (framed(.newMemberCommit, .proposal(.selfRemove)), .publicMessage, "a new_member_commit sender may send only a commit"),
            (framed(.newMemberCommit, .commit(Commit(proposals: []))), .publicMessage,
             "a new_member_commit commit must carry an UpdatePath"),
        ]
        for (content, wireFormat, reason) in cases {
            var signed = try AuthenticatedContent.sign(content, wireFormat: wireFormat, signer: fixture.signers[0],
                                                       serializedContext: ctx.tlsSerialized, suite: fixture.cs)
            if content.contentType == .commit { signed.auth.confirmationTag = Array(repeating: 0, count: 32) }
            if wireFormat == .publicMessage {
                XCTAssertThrowsMLSError(.senderNotAllowed(reason), try alice.protectPublic(signed))
                let received = PublicMessage(content: signed.content, auth: signed.auth)
                assertRejected(.publicMessage(received), .senderNotAllowed(reason), receiver: &bob, fixture: fixture)
            } else {
                XCTAssertThrowsMLSError(.senderNotAllowed(reason), try alice.protectPrivate(signed, using: &rng))
            }
        }
    }

    func testDecryptedHandshakeFromAnotherSendersKeyFails() throws {
        let fixture = try FramingFixture()
        var alice = try fixture.secrets()
        var bob = try fixture.secrets()
        // Content signed by leaf 0 but encrypted in leaf 1's ratchet: the sender becomes leaf 1
        // and the signature no longer verifies.
        let content = try fixture.content(.proposal(.selfRemove), from: 0, wireFormat: .privateMessage)
        let plaintext = PrivateMessageContent(body: content.content.body, auth: content.auth).tlsSerialized
        let moved = try fixture.encryptRaw(plaintext: plaintext, contentType: .proposal, from: 1, sender: &alice)
        assertRejected(.privateMessage(moved), .invalidMessageSignature, receiver: &bob, fixture: fixture)
    }
}
