import Foundation
import TestSupport
import XCTest
@testable import MLS

/// Key schedule pieces the published vectors do not cover on their own: transcript hashes over
/// a real AuthenticatedContent, tags, state serialization, PSK chaining and exporter bounds.
final class KeyScheduleTests: XCTestCase {
    private let cs = CipherSuiteProvider.mls128DHKEMX25519AES128GCMSHA256Ed25519

    /// A vector's hex field as bytes.
    private func bytes(_ field: Any?) throws -> [UInt8] { hex(try XCTUnwrap(field as? String)) }

    /// mlswg transcript-hashes.json through `TranscriptHash` and the confirmation-tag MAC.
    func testTranscriptHashesVector() throws {
        let cases = try XCTUnwrap(JSONSerialization.jsonObject(with: Fixtures.data("mls/transcript-hashes.json")) as? [[String: Any]])
        for vector in cases where vector["cipher_suite"] as? Int == 1 {
            let content = try AuthenticatedContent(tlsSerialized: bytes(vector["authenticated_content"]))
            let confirmed = TranscriptHash.confirmed(cs, interimTranscriptHash: try bytes(vector["interim_transcript_hash_before"]),
                                                     confirmedTranscriptHashInput: content.confirmedTranscriptHashInput)
            XCTAssertEqual(confirmed, try bytes(vector["confirmed_transcript_hash_after"]))
            let tag = try XCTUnwrap(content.auth.confirmationTag)
            XCTAssertTrue(cs.verifyMAC(key: Secret(try bytes(vector["confirmation_key"])), data: confirmed, mac: tag))
            XCTAssertEqual(TranscriptHash.interim(cs, confirmedTranscriptHash: confirmed, confirmationTag: tag),
                           try bytes(vector["interim_transcript_hash_after"]))
        }
    }

    private func sampleSecrets(seed: UInt64) -> EpochSecrets {
        var rng = SplitMix64(seed: seed)
        return EpochSecrets(cs, epochSecret: rng.randomSecret(32))
    }

    func testConfirmationAndMembershipTags() throws {
        let secrets = sampleSecrets(seed: 20)
        let hash = cs.hash([1, 2, 3])
        let tag = secrets.confirmationTag(confirmedTranscriptHash: hash)
        XCTAssertNoThrow(try secrets.verifyConfirmationTag(tag, confirmedTranscriptHash: hash))
        XCTAssertThrowsError(try secrets.verifyConfirmationTag(tag, confirmedTranscriptHash: cs.hash([1, 2, 4]))) {
            XCTAssertEqual($0 as? MLSCryptoError, .invalidMAC("confirmation_tag"))
        }
        let membership = secrets.membershipTag(authenticatedContentTBM: [7, 7])
        XCTAssertNotEqual(membership, tag)
        XCTAssertNoThrow(try secrets.verifyMembershipTag(membership, authenticatedContentTBM: [7, 7]))
        XCTAssertThrowsError(try secrets.verifyMembershipTag(Array(membership.dropLast()), authenticatedContentTBM: [7, 7])) {
            XCTAssertEqual($0 as? MLSCryptoError, .invalidMAC("membership_tag"))
        }
    }

    func testEpochSecretsStateRoundTrip() throws {
        let secrets = sampleSecrets(seed: 21)
        let encoded = secrets.tlsSerialized
        XCTAssertEqual(try EpochSecrets(tlsSerialized: encoded), secrets)
        XCTAssertThrowsError(try EpochSecrets(tlsSerialized: Array(encoded.dropLast())))
        var otherSuite = encoded
        otherSuite[1] = 2
        XCTAssertThrowsError(try EpochSecrets(tlsSerialized: otherSuite)) {
            XCTAssertEqual($0 as? MLSCryptoError, .unsupportedCipherSuite(2))
        }
        XCTAssertEqual("\(secrets)", "EpochSecrets(redacted)")
    }

    func testDistinctLabelsGiveDistinctSecrets() {
        let s = sampleSecrets(seed: 22)
        let all = [s.senderDataSecret, s.encryptionSecret, s.exporterSecret, s.externalSecret, s.confirmationKey,
                   s.membershipKey, s.resumptionPSK, s.epochAuthenticator, s.initSecret]
        XCTAssertEqual(Set(all.map(\.unsafeBytes)).count, all.count)
    }

    func testJoinerAndWelcomeFlowAgreesWithCommitter() throws {
        var rng = SplitMix64(seed: 23)
        let context = GroupContext(groupID: [1, 2, 3], epoch: 1, treeHash: cs.hash([1]), confirmedTranscriptHash: cs.hash([2]))
        let initSecret = KeySchedule.newGroupInitSecret(cs, using: &rng)
        let joiner = try KeySchedule.joinerSecret(cs, initSecret: initSecret, commitSecret: KeySchedule.zeroCommitSecret(cs), groupContext: context)
        let committer = try EpochSecrets(cs, joinerSecret: joiner, pskSecret: nil, groupContext: context)
        // A joiner gets the same joiner secret from GroupSecrets and an explicit all-zero psk_secret.
        let joined = try EpochSecrets(cs, joinerSecret: joiner, pskSecret: try KeySchedule.pskSecret(cs, psks: []), groupContext: context)
        XCTAssertEqual(committer, joined)
        var other = context
        other.epoch = 2
        XCTAssertNotEqual(try EpochSecrets(cs, joinerSecret: joiner, pskSecret: nil, groupContext: other).epochAuthenticator,
                          committer.epochAuthenticator)
        let (key, nonce) = try KeySchedule.welcomeKeyAndNonce(cs, welcomeSecret: KeySchedule.welcomeSecret(cs, joinerSecret: joiner, pskSecret: nil))
        XCTAssertEqual([key.count, nonce.count], [16, 12])
    }

    func testPSKOrderMattersAndCountIsBounded() throws {
        let a = PreSharedKeyInput(id: PreSharedKeyID(psk: .external(pskID: [1]), nonce: [0xaa]), psk: Secret([1, 1]))
        let b = PreSharedKeyInput(id: PreSharedKeyID(psk: .resumption(usage: .application, groupID: [9], epoch: 4), nonce: [0xbb]), psk: Secret([2, 2]))
        XCTAssertNotEqual(try KeySchedule.pskSecret(cs, psks: [a, b]), try KeySchedule.pskSecret(cs, psks: [b, a]))
        XCTAssertEqual(try KeySchedule.pskSecret(cs, psks: []), Secret.zero(count: 32))
    }

    func testExporterLengths() throws {
        let secrets = sampleSecrets(seed: 24)
        XCTAssertEqual(try secrets.exporter(label: "marmot", context: Array("group-event".utf8), length: 32).count, 32)
        XCTAssertNotEqual(try secrets.exporter(label: "marmot", context: [1], length: 32), try secrets.exporter(label: "marmot", context: [2], length: 32))
        XCTAssertThrowsError(try secrets.exporter(label: "x", context: [], length: 255 * 32 + 1))
    }
}
