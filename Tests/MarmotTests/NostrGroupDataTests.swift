import MLS
import Marmot
import XCTest
import TestSupport
import Nostr

/// The 0xF2EE codec against bytes laid out by hand from MDK's `TlsNostrGroupDataExtension`
/// (tls_codec derive: u16, [u8;32], then MLS varint-prefixed vectors), and hostile input.
final class NostrGroupDataTests: XCTestCase {
    let groupID = [UInt8](repeating: 0x11, count: 32)
    let adminA = [UInt8](repeating: 0xAA, count: 32)
    let adminB = [UInt8](repeating: 0x01, count: 32)

    /// version 2, name "Family", empty description, admins given as [A, B] (written sorted B, A:
    /// 64 bytes → two-byte varint 40 40), relays b then a (written a, b: 2 × (1 + 15) = 32 → 0x20),
    /// four empty image fields.
    var expectedV2: [UInt8] {
        var b: [UInt8] = [0x00, 0x02] + groupID
        b += [0x06] + Array("Family".utf8)
        b += [0x00]
        b += [0x40, 0x40] + adminB + adminA
        b += [0x20, 0x0F] + Array("wss://a.example".utf8) + [0x0F] + Array("wss://b.example".utf8)
        b += [0x00, 0x00, 0x00, 0x00]
        return b
    }

    func makeV2() throws -> NostrGroupData {
        NostrGroupData(nostrGroupID: groupID, name: "Family", admins: [adminA, adminB, adminA],
                       relays: [try RelayURL("wss://b.example"), try RelayURL("wss://a.example/"), try RelayURL("wss://a.example")])
    }

    func testWritesVersion2AsMDK() throws {
        let data = try makeV2()
        XCTAssertEqual(data.version, 2)
        XCTAssertEqual(data.admins, [adminB, adminA])
        // The first of two equal relays is kept ("wss://a.example/"), printed as it was given.
        XCTAssertEqual(data.relays.map(\.string), ["wss://a.example/", "wss://b.example"])
        var relaysAsMDK = data
        relaysAsMDK.relays = [try RelayURL("wss://b.example"), try RelayURL("wss://a.example")]
        XCTAssertEqual(try relaysAsMDK.extensionData(), expectedV2)
        XCTAssertEqual(data.nostrGroupIDHex, String(repeating: "11", count: 32))
        XCTAssertEqual(try relaysAsMDK.groupContextExtension(), .unknown(ExtensionType(0xF2EE), expectedV2))
    }

    func testReadsVersion2AndRoundTrips() throws {
        let data = try NostrGroupData(extensionData: expectedV2)
        XCTAssertEqual(data.version, 2)
        XCTAssertEqual(data.nostrGroupID, groupID)
        XCTAssertEqual(data.name, "Family")
        XCTAssertEqual(data.description, "")
        XCTAssertEqual(data.admins, [adminB, adminA])
        XCTAssertEqual(data.relays.map(\.string), ["wss://a.example", "wss://b.example"])
        XCTAssertNil(data.imageHash)
        XCTAssertNil(data.imageKey)
        XCTAssertNil(data.disappearingMessageSecs)
        XCTAssertEqual(try data.extensionData(), expectedV2)
        XCTAssertTrue(data.isAdmin(adminA))
        XCTAssertFalse(data.isAdmin(groupID))

        let extensions = try Extensions([.requiredCapabilities(RequiredCapabilities()), .unknown(ExtensionType(0xF2EE), expectedV2)])
        XCTAssertEqual(try NostrGroupData(extensions: extensions), data)
        XCTAssertNil(try NostrGroupData(extensions: Extensions()))
    }

    func testImageFieldsAndUnicodeRoundTrip() throws {
        var data = NostrGroupData(
            nostrGroupID: groupID, name: "Família 🏡", description: String(repeating: "d", count: 100),
            admins: [adminA], relays: [try RelayURL("wss://relay.example.com")],
            imageHash: [UInt8](repeating: 0x22, count: 32), imageKey: Secret([UInt8](repeating: 0x33, count: 32)),
            imageNonce: Secret([UInt8](repeating: 0x44, count: 12)), imageUploadKey: Secret([UInt8](repeating: 0x55, count: 32)))
        let bytes = try data.extensionData()
        // description of 100 bytes takes a two-byte varint (0x40 0x64).
        XCTAssertNotNil(bytes.firstRange(of: [0x40, 0x64] + [UInt8](repeating: 0x64, count: 100)))
        XCTAssertEqual(Array(bytes.suffix(12 + 1 + 32 + 1)), [0x0C] + [UInt8](repeating: 0x44, count: 12) + [0x20] + [UInt8](repeating: 0x55, count: 32))
        let decoded = try NostrGroupData(extensionData: bytes)
        XCTAssertEqual(decoded, data)
        XCTAssertEqual(decoded.imageKey, Secret([UInt8](repeating: 0x33, count: 32)))
        data.version = 1
        XCTAssertEqual(try NostrGroupData(extensionData: data.extensionData()).version, 1)
    }

    func testSecretsStayOutOfDescriptions() throws {
        let data = NostrGroupData(nostrGroupID: groupID, name: "x", admins: [], relays: [],
                                  imageKey: Secret([UInt8](repeating: 0x5A, count: 32)))
        let text = String(describing: data) + String(reflecting: data)
        XCTAssertFalse(text.contains("90, 90"))  // 0x5A bytes
        XCTAssertFalse(text.lowercased().contains("5a5a"))
    }

    func testVersion3DisappearingMessages() throws {
        let data = NostrGroupData(nostrGroupID: groupID, name: "x", admins: [adminA], relays: [], disappearingMessageSecs: 86_400)
        XCTAssertEqual(data.version, 3)
        let bytes = try data.extensionData()
        XCTAssertEqual(Array(bytes.prefix(2)), [0x00, 0x03])
        XCTAssertEqual(Array(bytes.suffix(9)), [0x08, 0, 0, 0, 0, 0, 0x01, 0x51, 0x80])
        let decoded = try NostrGroupData(extensionData: bytes)
        XCTAssertEqual(decoded.disappearingMessageSecs, 86_400)
        XCTAssertEqual(decoded, data)

        // Version 3 with disappearing messages off carries an empty field.
        var off = data
        off.disappearingMessageSecs = nil
        let offBytes = try off.extensionData()
        XCTAssertEqual(offBytes.last, 0x00)
        XCTAssertNil(try NostrGroupData(extensionData: offBytes).disappearingMessageSecs)
        // Zero means off and is never written; MDK rejects it on read.
        XCTAssertEqual(NostrGroupData(nostrGroupID: groupID, name: "x", admins: [], relays: [], disappearingMessageSecs: 0).version, 2)
        XCTAssertThrowsMarmot(.exactly(.groupDataDisappearingZero),
                              try NostrGroupData(extensionData: Array(offBytes.dropLast()) + [0x08] + [UInt8](repeating: 0, count: 8)))
        XCTAssertThrowsMarmot(.exactly(.groupDataFieldLength(field: "disappearing_message_secs", expected: 8, actual: 4)),
                              try NostrGroupData(extensionData: Array(offBytes.dropLast()) + [0x04, 0, 0, 0, 1]))
        // A version-2 value cannot carry the field.
        var wrong = data
        wrong.version = 2
        XCTAssertThrowsMarmot(.matching("unencodable") { if case .groupDataUnencodable = $0 { return true } else { return false } },
                              try wrong.extensionData())
    }

    func testTrailingBytesOnlyAboveVersion3() throws {
        XCTAssertThrowsMarmot(.exactly(.groupDataTrailingBytes(version: 2, count: 1)), try NostrGroupData(extensionData: expectedV2 + [0]))
        var v1 = expectedV2
        v1[1] = 1
        XCTAssertEqual(try NostrGroupData(extensionData: v1).version, 1)
        XCTAssertThrowsMarmot(.exactly(.groupDataTrailingBytes(version: 1, count: 3)), try NostrGroupData(extensionData: v1 + [1, 2, 3]))

        var v3 = expectedV2 + [0x00]
        v3[1] = 3
        XCTAssertEqual(try NostrGroupData(extensionData: v3).version, 3)
        XCTAssertThrowsMarmot(.exactly(.groupDataTrailingBytes(version: 3, count: 2)), try NostrGroupData(extensionData: v3 + [0x01, 0x7F]))

        // Version 4 appends a field we do not know: tolerated, kept and written back.
        var v4 = v3 + [0x02, 0xBE, 0xEF]
        v4[1] = 4
        let future = try NostrGroupData(extensionData: v4)
        XCTAssertEqual(future.version, 4)
        XCTAssertEqual(future.unknownFields, [0x02, 0xBE, 0xEF])
        XCTAssertEqual(try future.extensionData(), v4)
        // A version-3-shaped body is still required above version 3.
        var short = expectedV2
        short[1] = 4
        XCTAssertThrowsMarmot(.matching("decoding") { if case .groupDataDecoding = $0 { return true } else { return false } },
                              try NostrGroupData(extensionData: short))
    }

    func testVersionZeroRejected() throws {
        var v0 = expectedV2
        v0[1] = 0
        XCTAssertThrowsMarmot(.exactly(.groupDataVersionZero), try NostrGroupData(extensionData: v0))
    }

    /// Every prefix of a valid body is rejected without trapping.
    func testEveryTruncationRejected() throws {
        let full = try NostrGroupData(nostrGroupID: groupID, name: "n", description: "d", admins: [adminA], relays: [try RelayURL("wss://r.example")],
                                      imageHash: [UInt8](repeating: 1, count: 32), disappearingMessageSecs: 60).extensionData()
        for cut in 0..<full.count {
            XCTAssertThrowsError(try NostrGroupData(extensionData: Array(full.prefix(cut))), "cut \(cut)") { error in
                guard case .groupDataDecoding? = error as? MarmotError else { return XCTFail("cut \(cut): \(error)") }
            }
        }
    }

    func testHostileFields() throws {
        let prefix: [UInt8] = [0x00, 0x02] + groupID
        let tail: [UInt8] = [0x00, 0x00, 0x00, 0x00]
        func body(name: [UInt8] = [0x00], admins: [UInt8] = [0x00], relays: [UInt8] = [0x00], images: [UInt8]? = nil) -> [UInt8] {
            prefix + name + [0x00] + admins + relays + (images ?? tail)
        }
        XCTAssertNoThrow(try NostrGroupData(extensionData: body()))
        // Admin vector whose length is not a multiple of 32.
        XCTAssertThrowsMarmot(.matching("decoding") { if case .groupDataDecoding = $0 { return true } else { return false } },
                              try NostrGroupData(extensionData: body(admins: [0x21] + [UInt8](repeating: 7, count: 33))))
        // Non-minimal varint (1 written in two bytes).
        XCTAssertThrowsMarmot(.exactly(.groupDataDecoding(.nonMinimalVarint)),
                              try NostrGroupData(extensionData: body(name: [0x40, 0x01, 0x41])))
        // Reserved varint prefix 0b11.
        XCTAssertThrowsMarmot(.exactly(.groupDataDecoding(.invalidVarintPrefix)), try NostrGroupData(extensionData: body(name: [0xC0])))
        // Length beyond the input.
        XCTAssertThrowsMarmot(.matching("decoding") { if case .groupDataDecoding = $0 { return true } else { return false } },
                              try NostrGroupData(extensionData: body(name: [0x80, 0x40, 0x00, 0x00])))
        // Invalid UTF-8 (lone continuation byte, overlong NUL).
        XCTAssertThrowsMarmot(.exactly(.groupDataInvalidUTF8(field: "name")), try NostrGroupData(extensionData: body(name: [0x01, 0x80])))
        XCTAssertThrowsMarmot(.exactly(.groupDataInvalidUTF8(field: "name")), try NostrGroupData(extensionData: body(name: [0x02, 0xC0, 0x80])))
        XCTAssertThrowsMarmot(.exactly(.groupDataInvalidUTF8(field: "relays")),
                              try NostrGroupData(extensionData: body(relays: [0x03, 0x02, 0xFF, 0xFE])))
        // A relay that is not a ws/wss URL.
        let https = Array("https://x.example".utf8)
        XCTAssertThrowsMarmot(.invalidRelayURL(),
                              try NostrGroupData(extensionData: body(relays: [UInt8(https.count + 1), UInt8(https.count)] + https)))
        // Fixed-size optional fields of the wrong size.
        XCTAssertThrowsMarmot(.exactly(.groupDataFieldLength(field: "image_hash", expected: 32, actual: 31)),
                              try NostrGroupData(extensionData: body(images: [0x1F] + [UInt8](repeating: 0, count: 31) + [0, 0, 0])))
        XCTAssertThrowsMarmot(.exactly(.groupDataFieldLength(field: "image_nonce", expected: 12, actual: 32)),
                              try NostrGroupData(extensionData: body(images: [0x00, 0x00, 0x20] + [UInt8](repeating: 0, count: 32) + [0])))
        XCTAssertThrowsMarmot(.exactly(.groupDataFieldLength(field: "image_upload_key", expected: 32, actual: 1)),
                              try NostrGroupData(extensionData: body(images: [0x00, 0x00, 0x00, 0x01, 0x09])))
        // Too short for a version.
        XCTAssertThrowsMarmot(.matching("decoding") { if case .groupDataDecoding = $0 { return true } else { return false } },
                              try NostrGroupData(extensionData: [0x00]))
    }

    /// Random corruption never traps; what decodes re-encodes to a body that decodes the same.
    func testRandomMutationsNeverTrap() throws {
        let valid = try NostrGroupData(nostrGroupID: groupID, name: "Family", description: "desc", admins: [adminA, adminB],
                                       relays: [try RelayURL("wss://a.example"), try RelayURL("ws://b.example:81")],
                                       disappearingMessageSecs: 3600).extensionData()
        var rng = SplitMix64(seed: 0xF2EE)
        for _ in 0..<3000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            if let decoded = try? NostrGroupData(extensionData: bytes) {
                XCTAssertEqual(try NostrGroupData(extensionData: decoded.extensionData()), decoded)
            }
        }
    }

    func testEncoderRejectsUnrepresentableValues() throws {
        var data = try makeV2()
        data.nostrGroupID = [1, 2, 3]
        XCTAssertThrowsError(try data.extensionData())
        data = try makeV2()
        data.admins = [[1, 2]]
        XCTAssertThrowsError(try data.extensionData())
        data = try makeV2()
        data.imageNonce = Secret([UInt8](repeating: 0, count: 32))
        XCTAssertThrowsError(try data.extensionData())
        data = try makeV2()
        data.unknownFields = [1]
        XCTAssertThrowsError(try data.extensionData())
    }

    func testRandomGroupIDFromRNG() {
        var rng = SplitMix64(seed: 7)
        let a = NostrGroupData(name: "a", admins: [], relays: [], using: &rng)
        let b = NostrGroupData(name: "a", admins: [], relays: [], using: &rng)
        XCTAssertEqual(a.nostrGroupID.count, 32)
        XCTAssertNotEqual(a.nostrGroupID, b.nostrGroupID)
    }
}
