import Foundation
import TestSupport
import XCTest
@testable import MLS

/// Hostile bytes: every decoder returns a typed error, never traps, for truncated, extended,
/// bit-flipped, non-minimal and oversized input.
final class HostileMessageTests: XCTestCase {
    private func samples(count: Int) throws -> [[UInt8]] {
        let data = try Fixtures.data("mls/messages.json")
        let vectors = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [[String: String]])
        let fields = ["mls_welcome", "mls_group_info", "mls_key_package", "public_message_application",
                      "public_message_proposal", "public_message_commit", "private_message"]
        return vectors.prefix(count).flatMap { v in fields.map { hex(v[$0]!) } }
    }

    /// Every proper prefix of a valid MLSMessage is rejected with a TLSDecodingError.
    func testEveryTruncationIsATypedError() throws {
        for bytes in try samples(count: 10) {
            for cut in 0..<bytes.count {
                XCTAssertThrowsError(try MLSMessage(tlsSerialized: Array(bytes[..<cut]))) { error in
                    XCTAssertTrue(error is TLSDecodingError, "cut \(cut): \(error)")
                }
            }
            XCTAssertThrowsError(try MLSMessage(tlsSerialized: bytes + [0])) {
                XCTAssertEqual($0 as? TLSDecodingError, .trailingBytes(1))
            }
        }
    }

    /// Flipping any single byte either still decodes (then it re-encodes to exactly the flipped
    /// bytes: no silent normalisation) or fails with a TLSDecodingError.
    func testByteFlipsNeverTrapOrNormalise() throws {
        var rng = SplitMix64(seed: 0x6d6c_736d_7367)
        for bytes in try samples(count: 20) {
            for _ in 0..<64 {
                var mutated = bytes
                let i = Int(rng.next() % UInt64(bytes.count))
                mutated[i] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
                do {
                    let message = try MLSMessage(tlsSerialized: mutated)
                    XCTAssertEqual(message.tlsSerialized, mutated)
                } catch {
                    XCTAssertTrue(error is TLSDecodingError, "\(error)")
                }
            }
        }
    }

    func testNonMinimalLengthInsideAStructureIsRejected() throws {
        // A Welcome whose encrypted_group_info length 1 is written as the two-byte 0x40 0x01.
        let minimal: [UInt8] = [0x00, 0x01, 0x00, 0x03, 0x00, 0x01, 0x00, 0x01, 0xaa]
        XCTAssertNoThrow(try MLSMessage(tlsSerialized: minimal))
        let padded: [UInt8] = [0x00, 0x01, 0x00, 0x03, 0x00, 0x01, 0x00, 0x40, 0x01, 0xaa]
        XCTAssertThrowsError(try MLSMessage(tlsSerialized: padded)) {
            XCTAssertEqual($0 as? TLSDecodingError, .nonMinimalVarint)
        }
    }

    func testOversizedLengthsAreRejectedWithoutAllocation() {
        // A PrivateMessage claiming a 1 GiB group_id in a 12-byte message.
        let huge: [UInt8] = [0x00, 0x01, 0x00, 0x02, 0xbf, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00]
        XCTAssertThrowsError(try MLSMessage(tlsSerialized: huge)) {
            XCTAssertEqual($0 as? TLSDecodingError, .lengthTooLarge((1 << 30) - 1))
        }
        // A vector of proposals longer than the commit.
        XCTAssertThrowsError(try Commit(tlsSerialized: [0x10, 0x01, 0x00]))
        // An element overrunning its vector: one Remove (2 + 4 bytes) inside a 5-byte vector.
        XCTAssertThrowsError(try Commit(tlsSerialized: [0x05, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00]))
        XCTAssertEqual(try Commit(tlsSerialized: [0x07, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00]).proposals, [.proposal(.remove(RemoveProposal(removed: 1)))])
    }

    func testPublicMessageWithUnknownSenderOrContentTypeIsRejected() throws {
        let content = FramedContent(groupID: [1], epoch: 1, sender: .member(leafIndex: 0), body: .application([2]))
        let message = MLSMessage(body: .publicMessage(PublicMessage(content: content, auth: FramedContentAuthData(signature: [3]), membershipTag: [4])))
        let bytes = message.tlsSerialized
        XCTAssertEqual(try MLSMessage(tlsSerialized: bytes), message)
        // Layout: header(4) group_id(2) epoch(8) sender_type at 14.
        var badSender = bytes
        badSender[14] = 0
        XCTAssertThrowsError(try MLSMessage(tlsSerialized: badSender)) {
            XCTAssertEqual($0 as? TLSDecodingError, .invalidValue(field: "sender_type", value: 0))
        }
        // sender(5) authenticated_data(1) → content_type at 20.
        var badType = bytes
        badType[20] = 9
        XCTAssertThrowsError(try MLSMessage(tlsSerialized: badType)) {
            XCTAssertEqual($0 as? TLSDecodingError, .invalidValue(field: "content_type", value: 9))
        }
    }
}
