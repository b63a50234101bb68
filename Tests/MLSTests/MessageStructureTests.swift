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

    private func hex(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.count / 2)
        var it = s.utf8.makeIterator()
        func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : (c | 0x20) - 87 }
        while let a = it.next(), let b = it.next() { out.append(nibble(a) << 4 | nibble(b)) }
        return out
    }

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
        let secrets = GroupSecrets(joinerSecret: [0x42, 0x42], pathSecret: [0x43])
        XCTAssertFalse(String(describing: secrets).contains("66"))
        XCTAssertFalse(String(reflecting: secrets).contains("66"))
        XCTAssertTrue(String(describing: secrets).contains("redacted"))
        let decoded = try GroupSecrets(tlsSerialized: secrets.tlsSerialized)
        XCTAssertEqual(decoded.tlsSerialized, secrets.tlsSerialized)
    }
}
