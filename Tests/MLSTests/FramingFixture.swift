import XCTest
@testable import MLS
import TestSupport

/// A three-member group frozen at one epoch, for framing tests: everyone derives the same
/// `MessageSecrets` from one epoch secret, and each leaf has its own signature key.
struct FramingFixture {
    let cs = CipherSuiteProvider.mls128DHKEMX25519AES128GCMSHA256Ed25519
    let context: GroupContext
    let epochSecrets: EpochSecrets
    let signers: [SignaturePrivateKey]
    let leafCount = 3

    init(epoch: UInt64 = 7, seed: UInt64 = 0xF4A3) throws {
        var rng = SplitMix64(seed: seed)
        context = GroupContext(groupID: rng.randomBytes(16), epoch: epoch, treeHash: rng.randomBytes(32),
                               confirmedTranscriptHash: rng.randomBytes(32))
        epochSecrets = EpochSecrets(cs, epochSecret: rng.randomSecret(32))
        signers = try (0..<3).map { _ in try SignaturePrivateKey.generate(using: &rng) }
    }

    /// A member's view of the epoch (each member holds its own copy).
    func secrets() throws -> MessageSecrets {
        try MessageSecrets(groupContext: context, epochSecrets: epochSecrets, leafCount: leafCount)
    }

    /// The ratchet tree's answer: members' keys by leaf; anything else is not in this group.
    func lookup(_ sender: Sender) throws -> SignaturePublicKey {
        guard case .member(let leaf) = sender, Int(leaf) < signers.count else { throw MLSError.leafIndexOutOfRange(0) }
        return signers[Int(leaf)].publicKey
    }

    /// Signs `body` from `leaf` for `wireFormat`; a commit gets a confirmation tag.
    func content(_ body: FramedContentBody, from leaf: UInt32, wireFormat: WireFormat,
                 authenticatedData: [UInt8] = [], signer: SignaturePrivateKey? = nil) throws -> AuthenticatedContent {
        var content = try secrets().sign(body, from: LeafIndex(leaf), wireFormat: wireFormat,
                                         authenticatedData: authenticatedData, signer: signer ?? signers[Int(leaf)])
        if body.contentType == .commit {
            content.auth.confirmationTag = cs.mac(key: epochSecrets.confirmationKey, data: context.confirmedTranscriptHash)
        }
        return content
    }

    /// `count` application messages from `leaf`, generations 0..<count, encrypted by `sender`.
    func applicationMessages(_ count: Int, from leaf: UInt32, sender: inout MessageSecrets) throws -> [PrivateMessage] {
        var rng = SplitMix64(seed: UInt64(count))
        return try (0..<count).map { i in
            try sender.protectPrivate(content(.application(Array("message \(i)".utf8)), from: leaf, wireFormat: .privateMessage),
                                      using: &rng)
        }
    }

    /// Encrypts an arbitrary PrivateMessageContent plaintext exactly as `protectPrivate` would,
    /// for tests that need a plaintext our own encoder never produces.
    func encryptRaw(plaintext: [UInt8], senderData: [UInt8]? = nil, contentType: ContentType, from leaf: UInt32,
                    sender: inout MessageSecrets) throws -> PrivateMessage {
        let type: RatchetType = contentType == .application ? .application : .handshake
        let material = try sender.secretTree.nextSenderKey(leaf: LeafIndex(leaf), type: type)
        let reuseGuard: [UInt8] = [1, 2, 3, 4]
        var message = PrivateMessage(groupID: context.groupID, epoch: context.epoch, contentType: contentType,
                                     authenticatedData: [], encryptedSenderData: [], ciphertext: [])
        message.ciphertext = try cs.aeadSeal(key: material.key, nonce: material.nonce(reuseGuard: reuseGuard),
                                             aad: message.contentAAD, plaintext: plaintext)
        let key = try SenderDataKey(cs, senderDataSecret: epochSecrets.senderDataSecret, ciphertext: message.ciphertext)
        let senderDataBytes = senderData
            ?? SenderData(leafIndex: leaf, generation: material.generation, reuseGuard: reuseGuard).tlsSerialized
        message.encryptedSenderData = try cs.aeadSeal(key: key.key, nonce: key.nonce, aad: message.senderDataAAD,
                                                      plaintext: senderDataBytes)
        return message
    }
}

/// Asserts that `body` throws exactly `expected` (an `MLSError`).
func XCTAssertThrowsMLSError<T>(_ expected: MLSError, _ body: @autoclosure () throws -> T,
                                file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
        XCTAssertEqual(error as? MLSError, expected, "\(error)", file: file, line: line)
    }
}
