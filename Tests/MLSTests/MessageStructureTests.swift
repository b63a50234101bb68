import Foundation
import TestSupport
import XCTest
@testable import MLS

/// Structure-level round trips over the mlswg `messages.json` fields, and the framing rules the
/// structures themselves enforce (content-type dependent fields, padding, unknown tags).
final class MessageStructureTests: XCTestCase {
    private static let vectors: [[String: String]] = {
        guard let data = try? Fixtures.data("mls/messages.json"),
              let parsed = try? JSONSerialization.jsonObject(with: data) as? [[String: String]] else { return [] }
        return parsed
    }()

    private func roundTrip<T: TLSCodable>(_ type: T.Type, _ field: String, dropHeader: Int = 0, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(Self.vectors.count, 300, file: file, line: line)
        for (i, v) in Self.vectors.enumerated() {
            let all = hex(v[field]!)
            let bytes = Array(all.dropFirst(dropHeader))
            let value: T
            do { value = try T(tlsSerialized: bytes) } catch {
                return XCTFail("\(field)[\(i)]: \(error)", file: file, line: line)
            }
            XCTAssertEqual(value.tlsSerialized, bytes, "\(field)[\(i)]", file: file, line: line)
        }
    }

    func testProposalBodiesRoundTrip() throws {
        try roundTrip(AddProposal.self, "add_proposal")
        try roundTrip(UpdateProposal.self, "update_proposal")
        try roundTrip(RemoveProposal.self, "remove_proposal")
        try roundTrip(PreSharedKeyProposal.self, "pre_shared_key_proposal")
        try roundTrip(ReInitProposal.self, "re_init_proposal")
        try roundTrip(ExternalInitProposal.self, "external_init_proposal")
        try roundTrip(GroupContextExtensionsProposal.self, "group_context_extensions_proposal")
    }

    func testCommitAndGroupSecretsRoundTrip() throws {
        try roundTrip(Commit.self, "commit")
        try roundTrip(GroupSecrets.self, "group_secrets")
    }

    /// The MLSMessage header is version (2 bytes) and wire_format (2 bytes).
    func testFramedBodiesRoundTrip() throws {
        try roundTrip(Welcome.self, "mls_welcome", dropHeader: 4)
        try roundTrip(KeyPackage.self, "mls_key_package", dropHeader: 4)
        try roundTrip(PublicMessage.self, "public_message_application", dropHeader: 4)
        try roundTrip(PublicMessage.self, "public_message_proposal", dropHeader: 4)
        try roundTrip(PublicMessage.self, "public_message_commit", dropHeader: 4)
        try roundTrip(PrivateMessage.self, "private_message", dropHeader: 4)
    }

    func testSelfRemoveHasEmptyBody() throws {
        XCTAssertEqual(Proposal.selfRemove.tlsSerialized, [0x00, 0x0a])
        XCTAssertEqual(try Proposal(tlsSerialized: [0x00, 0x0a]), .selfRemove)
        // A custom type carries an opaque payload, as OpenMLS 0.8.1 reads it.
        let custom = Proposal.custom(ProposalType(0xF000), payload: [1, 2])
        XCTAssertEqual(custom.tlsSerialized, [0xf0, 0x00, 0x02, 1, 2])
        XCTAssertEqual(try Proposal(tlsSerialized: custom.tlsSerialized), custom)
        XCTAssertEqual(try Proposal(tlsSerialized: [0x2a, 0x2a, 0x00]), .custom(ProposalType(0x2a2a), payload: []))
    }

    func testUnknownTagsRejected() {
        XCTAssertThrowsError(try ContentType(tlsSerialized: [4]))
        XCTAssertThrowsError(try ContentType(tlsSerialized: [0]))
        XCTAssertThrowsError(try Sender(tlsSerialized: [5]))
        XCTAssertThrowsError(try LeafNodeSource(tlsSerialized: [4]))
        XCTAssertThrowsError(try ProposalOrRef(tlsSerialized: [3, 0]))
        XCTAssertThrowsError(try PreSharedKeyID(tlsSerialized: [3, 0, 0]))
        XCTAssertThrowsError(try PreSharedKeyID(tlsSerialized: [2, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]))
        XCTAssertThrowsError(try Commit(tlsSerialized: [0, 2]))  // optional presence byte 2
    }

    func testPublicMessageMembershipTagFollowsSender() throws {
        let content = FramedContent(groupID: [1], epoch: 7, sender: .member(leafIndex: 3), body: .application([0xaa]))
        let member = PublicMessage(content: content, auth: FramedContentAuthData(signature: [5]), membershipTag: [9, 9])
        XCTAssertEqual(try PublicMessage(tlsSerialized: member.tlsSerialized), member)
        var external = content
        external.sender = .newMemberProposal
        let nonMember = PublicMessage(content: external, auth: FramedContentAuthData(signature: [5]))
        let decoded = try PublicMessage(tlsSerialized: nonMember.tlsSerialized)
        XCTAssertNil(decoded.membershipTag)
        // A member message without its tag is truncated.
        XCTAssertThrowsError(try PublicMessage(tlsSerialized: PublicMessage(content: content, auth: FramedContentAuthData(signature: [5])).tlsSerialized))
    }

    func testFramedContentTBSIncludesContextOnlyForMembers() {
        let context: [UInt8] = [0xc0, 0xc1]
        var content = FramedContent(groupID: [1], epoch: 2, sender: .member(leafIndex: 0), body: .proposal(.remove(RemoveProposal(removed: 1))))
        let tbs = content.toBeSigned(wireFormat: .publicMessage, serializedContext: context)
        XCTAssertEqual(Array(tbs.prefix(4)), [0, 1, 0, 1])
        XCTAssertEqual(tbs, [0, 1, 0, 1] + content.tlsSerialized + context)
        content.sender = .external(senderIndex: 0)
        XCTAssertEqual(content.toBeSigned(wireFormat: .publicMessage, serializedContext: context), [0, 1, 0, 1] + content.tlsSerialized)
        content.sender = .newMemberCommit
        XCTAssertEqual(content.toBeSigned(wireFormat: .privateMessage, serializedContext: context), [0, 1, 0, 2] + content.tlsSerialized + context)
    }

    func testPrivateMessageContentPadding() throws {
        let body = FramedContentBody.commit(Commit(proposals: [.reference([1, 2])]))
        let plain = PrivateMessageContent(body: body, auth: FramedContentAuthData(signature: [7], confirmationTag: [8]), paddingLength: 5)
        let bytes = plain.tlsSerialized
        XCTAssertEqual(Array(bytes.suffix(5)), [0, 0, 0, 0, 0])
        let decoded = try PrivateMessageContent(tlsSerialized: bytes, contentType: .commit)
        XCTAssertEqual(decoded, plain)
        var bad = bytes
        bad[bad.count - 2] = 1
        XCTAssertThrowsError(try PrivateMessageContent(tlsSerialized: bad, contentType: .commit))
        // Read as an application message the same bytes do not parse.
        XCTAssertThrowsError(try PrivateMessageContent(tlsSerialized: bytes, contentType: .application))
    }

    func testGroupSecretsDescriptionIsRedacted() throws {
        let secrets = GroupSecrets(joinerSecret: Secret([0x42, 0x42]), pathSecret: Secret([0x43]))
        for text in [String(describing: secrets), String(reflecting: secrets), { var s = ""; dump(secrets, to: &s); return s }()] {
            XCTAssertFalse(text.contains("66") || text.contains("67"), text)
            XCTAssertTrue(text.contains("redacted"), text)
        }
        let decoded = try GroupSecrets(tlsSerialized: secrets.tlsSerialized)
        XCTAssertEqual(decoded, secrets)
        XCTAssertEqual(decoded.tlsSerialized, [0x02, 0x42, 0x42, 0x01, 0x01, 0x43, 0x00])
        XCTAssertNil(try GroupSecrets(tlsSerialized: [0x01, 0x42, 0x00, 0x00]).pathSecret)
    }
}

/// The MLSMessage envelope over the mlswg fields that are MLSMessages, and its rejections.
final class MLSMessageEnvelopeTests: XCTestCase {
    func testEnvelopesRoundTripWithExpectedWireFormats() throws {
        let data = try Fixtures.data("mls/messages.json")
        let vectors = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [[String: String]])
        let fields: [(String, WireFormat)] = [
            ("mls_welcome", .welcome), ("mls_group_info", .groupInfo), ("mls_key_package", .keyPackage),
            ("public_message_application", .publicMessage), ("public_message_proposal", .publicMessage),
            ("public_message_commit", .publicMessage), ("private_message", .privateMessage),
        ]
        for (i, v) in vectors.enumerated() {
            for (field, format) in fields {
                let bytes = hex(v[field]!)
                let message = try MLSMessage(tlsSerialized: bytes)
                XCTAssertEqual(message.wireFormat, format, "\(field)[\(i)]")
                XCTAssertEqual(message.tlsSerialized, bytes, "\(field)[\(i)]")
            }
            let message = try MLSMessage(tlsSerialized: hex(v["public_message_commit"]!))
            guard case .publicMessage(let pm) = message.body else { return XCTFail("not public") }
            XCTAssertEqual(pm.content.contentType, .commit)
            XCTAssertNotNil(pm.auth.confirmationTag)
            if case .groupInfo(let gi) = try MLSMessage(tlsSerialized: hex(v["mls_group_info"]!)).body {
                XCTAssertEqual(gi.toBeSigned + [UInt8](TLSWriter.opaqueHeader(gi.signature.count)) + gi.signature, gi.tlsSerialized)
            } else {
                XCTFail("not a GroupInfo")
            }
        }
    }

    func testMDKWelcomeRumorParses() throws {
        let rumor = try XCTUnwrap(JSONSerialization.jsonObject(with: Fixtures.data("marmot-samples/welcome_rumor.json")) as? [String: Any])
        let bytes = [UInt8](try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(rumor["content"] as? String))))
        let message = try MLSMessage(tlsSerialized: bytes)
        XCTAssertEqual(message.tlsSerialized, bytes)
        guard case .welcome(let welcome) = message.body else { return XCTFail("not a welcome") }
        XCTAssertEqual(welcome.cipherSuite, .mls128DHKEMX25519AES128GCMSHA256Ed25519)
        XCTAssertEqual(welcome.secrets.count, 1)
        XCTAssertEqual(welcome.secrets[0].newMember.count, 32)
    }

    func testEnvelopeRejections() throws {
        let welcome = MLSMessage(body: .welcome(Welcome(secrets: [], encryptedGroupInfo: [1])))
        let bytes = welcome.tlsSerialized
        XCTAssertEqual(Array(bytes.prefix(4)), [0, 1, 0, 3])
        XCTAssertEqual(try MLSMessage(tlsSerialized: bytes), welcome)
        for format: UInt8 in [0, 6, 0xff] {
            var bad = bytes
            bad[3] = format
            XCTAssertThrowsError(try MLSMessage(tlsSerialized: bad)) {
                XCTAssertEqual($0 as? TLSDecodingError, .invalidValue(field: "wire_format", value: UInt64(format)))
            }
        }
        var badVersion = bytes
        badVersion[1] = 2
        XCTAssertThrowsError(try MLSMessage(tlsSerialized: badVersion))
        XCTAssertThrowsError(try MLSMessage(tlsSerialized: bytes + [0]))
        XCTAssertThrowsError(try MLSMessage(tlsSerialized: Array(bytes.dropLast())))
    }
}

extension TLSWriter {
    /// The varint length prefix alone.
    static func opaqueHeader(_ count: Int) -> [UInt8] {
        var w = TLSWriter()
        w.writeVarint(count)
        return w.bytes
    }
}
