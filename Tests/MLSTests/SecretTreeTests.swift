import XCTest
@testable import MLS
import TestSupport

/// Secret tree and hash ratchet behaviour beyond the vectors: out-of-order delivery within the
/// tolerance, replay and distance limits, all-or-nothing failures, deletion and state encoding.
final class SecretTreeTests: XCTestCase {
    private let cs = CipherSuiteProvider.mls128DHKEMX25519AES128GCMSHA256Ed25519

    private func makeTree(leaves: Int = 8, seed: UInt64 = 30, configuration: SenderRatchetConfiguration = .default) throws -> SecretTree {
        var rng = SplitMix64(seed: seed)
        return try SecretTree(cs, encryptionSecret: rng.randomSecret(32), leafCount: leaves, configuration: configuration)
    }

    func testSenderAndReceiverAgree() throws {
        var sender = try makeTree()
        var receiver = try makeTree()
        for _ in 0..<5 {
            let sent = try sender.nextSenderKey(leaf: LeafIndex(3), type: .application)
            let received = try receiver.receiverKey(leaf: LeafIndex(3), type: .application, generation: sent.generation)
            XCTAssertEqual(sent, received)
        }
        XCTAssertEqual(sender.nextGeneration(leaf: LeafIndex(3), type: .application), 5)
        XCTAssertEqual(sender.nextGeneration(leaf: LeafIndex(3), type: .handshake), 0)
        // Handshake and application ratchets of a leaf, and different leaves, never share keys.
        let handshake = try sender.nextSenderKey(leaf: LeafIndex(3), type: .handshake)
        let otherLeaf = try sender.nextSenderKey(leaf: LeafIndex(4), type: .handshake)
        XCTAssertNotEqual(handshake.key, otherLeaf.key)
        var fresh = try makeTree()
        XCTAssertNotEqual(handshake.key, try fresh.receiverKey(leaf: LeafIndex(3), type: .application, generation: 0).key)
    }

    func testOutOfOrderWithinToleranceAndReplayRejected() throws {
        var sender = try makeTree()
        var receiver = try makeTree()
        var sent: [RatchetKeyMaterial] = []
        for _ in 0...150 { sent.append(try sender.nextSenderKey(leaf: LeafIndex(1), type: .application)) }
        // Newest first, then every older one back to the tolerance (100 behind the newest).
        XCTAssertEqual(try receiver.receiverKey(leaf: LeafIndex(1), type: .application, generation: 150), sent[150])
        for generation in stride(from: 149, through: 50, by: -1) {
            XCTAssertEqual(try receiver.receiverKey(leaf: LeafIndex(1), type: .application, generation: UInt32(generation)), sent[generation])
        }
        XCTAssertThrowsError(try receiver.receiverKey(leaf: LeafIndex(1), type: .application, generation: 49)) {
            XCTAssertEqual($0 as? MLSCryptoError, .generationTooFarInPast(requested: 49, current: 150))
        }
        for replay: UInt32 in [150, 120, 50] {
            XCTAssertThrowsError(try receiver.receiverKey(leaf: LeafIndex(1), type: .application, generation: replay)) {
                XCTAssertEqual($0 as? MLSCryptoError, .generationAlreadyConsumed(replay))
            }
        }
    }

    func testForwardDistanceLimit() throws {
        var receiver = try makeTree()
        XCTAssertThrowsError(try receiver.receiverKey(leaf: LeafIndex(0), type: .handshake, generation: 1001)) {
            XCTAssertEqual($0 as? MLSCryptoError, .generationTooFarInFuture(requested: 1001, current: 0))
        }
        let far = try receiver.receiverKey(leaf: LeafIndex(0), type: .handshake, generation: 1000)
        var sender = try makeTree()
        var last: RatchetKeyMaterial?
        for _ in 0...1000 { last = try sender.nextSenderKey(leaf: LeafIndex(0), type: .handshake) }
        XCTAssertEqual(far, last)
    }

    func testFailedLookupLeavesTreeUnchanged() throws {
        var tree = try makeTree()
        _ = try tree.receiverKey(leaf: LeafIndex(2), type: .application, generation: 3)
        let before = tree
        XCTAssertThrowsError(try tree.receiverKey(leaf: LeafIndex(2), type: .application, generation: 5000))
        XCTAssertThrowsError(try tree.receiverKey(leaf: LeafIndex(2), type: .application, generation: 3))
        XCTAssertThrowsError(try tree.receiverKey(leaf: LeafIndex(5), type: .application, generation: 2000))
        XCTAssertThrowsError(try tree.receiverKey(leaf: LeafIndex(8), type: .application, generation: 0)) {
            XCTAssertEqual($0 as? MLSCryptoError, .leafOutOfRange(leaf: 8, leafCount: 8))
        }
        XCTAssertEqual(tree, before)
    }

    func testSecretsAreDeletedAsTheyAreUsed() throws {
        var tree = try makeTree(leaves: 4)
        XCTAssertEqual(tree.nodeSecrets.count, 1)
        _ = try tree.receiverKey(leaf: LeafIndex(0), type: .application, generation: 0)
        // Root (3) and node 1 consumed; node 5 and leaf 2 kept; leaf 0 replaced by its ratchets.
        XCTAssertEqual(Set(tree.nodeSecrets.keys), [2, 5])
        for leaf: UInt32 in 1...3 { _ = try tree.receiverKey(leaf: LeafIndex(leaf), type: .handshake, generation: 0) }
        XCTAssertTrue(tree.nodeSecrets.isEmpty)
        XCTAssertEqual(tree.ratchets.count, 8)
    }

    func testStateRoundTripKeepsWorking() throws {
        var original = try makeTree(leaves: 5)
        _ = try original.receiverKey(leaf: LeafIndex(1), type: .application, generation: 10)
        _ = try original.nextSenderKey(leaf: LeafIndex(4), type: .handshake)
        var restored = try SecretTree(tlsSerialized: original.tlsSerialized)
        XCTAssertEqual(restored, original)
        // The skipped key of generation 7 survives the round trip and is still single-use.
        XCTAssertEqual(try restored.receiverKey(leaf: LeafIndex(1), type: .application, generation: 7),
                       try original.receiverKey(leaf: LeafIndex(1), type: .application, generation: 7))
        XCTAssertThrowsError(try restored.receiverKey(leaf: LeafIndex(1), type: .application, generation: 7))
        XCTAssertEqual(try restored.receiverKey(leaf: LeafIndex(3), type: .application, generation: 0),
                       try original.receiverKey(leaf: LeafIndex(3), type: .application, generation: 0))
        XCTAssertThrowsError(try SecretTree(tlsSerialized: Array(original.tlsSerialized.dropLast())))
        XCTAssertFalse("\(original)".contains("Secret("))
    }

    func testReuseGuardAndSenderDataKey() throws {
        var tree = try makeTree()
        let material = try tree.nextSenderKey(leaf: LeafIndex(0), type: .application)
        let guarded = try material.nonce(reuseGuard: [1, 2, 3, 4]).unsafeBytes
        let plain = material.nonce.unsafeBytes
        XCTAssertEqual(Array(guarded[4...]), Array(plain[4...]))
        XCTAssertEqual(zip(guarded.prefix(4), plain.prefix(4)).map { $0 ^ $1 }, [1, 2, 3, 4])
        XCTAssertThrowsError(try material.nonce(reuseGuard: [1, 2, 3]))

        let secret = Secret([UInt8](repeating: 5, count: 32))
        let long = [UInt8](repeating: 1, count: 80)
        // Only the first KDF.Nh bytes of the ciphertext are sampled; shorter ciphertexts are used whole.
        XCTAssertEqual(try SenderDataKey(cs, senderDataSecret: secret, ciphertext: long),
                       try SenderDataKey(cs, senderDataSecret: secret, ciphertext: Array(long.prefix(32)) + [9, 9]))
        XCTAssertNotEqual(try SenderDataKey(cs, senderDataSecret: secret, ciphertext: [1, 2]),
                          try SenderDataKey(cs, senderDataSecret: secret, ciphertext: [1, 2, 3]))
    }
}
