import Conformance
import TestSupport
import XCTest

/// The published BIP-340 and NIP-44 vectors through the same runners `burrow conformance` uses.
final class NostrConformanceTests: XCTestCase {
    func testBIP340AllVectors() throws {
        let csv = String(decoding: try Fixtures.data("bip340/test-vectors.csv"), as: UTF8.self)
        let report = BIP340Conformance.run(csv: csv)
        XCTAssertEqual(report.failures, [])
        XCTAssertEqual(report.passed, 19)
        XCTAssertEqual(report.failed, 0)
    }

    func testBIP340RunnerCountsBrokenRowsAsFailed() {
        let csv = """
        index,secret key,public key,aux_rand,message,signature,verification result,comment
        0,,F9308A019258C31049344F85F89D5229B531C845836F99B08601F113BCE036F9,,00,zz,TRUE,
        1,not enough columns
        2,,F9308A019258C31049344F85F89D5229B531C845836F99B08601F113BCE036F9,,00,\(String(repeating: "00", count: 64)),MAYBE,
        3,,F9308A019258C31049344F85F89D5229B531C845836F99B08601F113BCE036F9,,00,\(String(repeating: "00", count: 64)),TRUE,
        """
        let report = BIP340Conformance.run(csv: csv)
        XCTAssertEqual(report.passed, 0)
        XCTAssertEqual(report.failed, 4)
        // Row 3 is well-formed but its (zero) signature does not verify.
        XCTAssertTrue(report.failures.last?.contains("verification gave false") ?? false, "\(report.failures)")
    }

    func testNIP44AllCases() throws {
        let report = NIP44Conformance.run(json: [UInt8](try Fixtures.data("nip44/nip44.vectors.json")))
        XCTAssertEqual(report.failures, [])
        // 96 list entries in the eight groups plus the 32 derivations listed under
        // valid.get_message_keys.keys, each checked separately. (The "98" in the fixture provenance
        // counts the get_message_keys object as its 2 members, not its 32 key derivations.)
        XCTAssertEqual(report.passed, 128)
        XCTAssertEqual(report.failed, 0)
    }

    func testNIP44RunnerCountsBrokenCasesAsFailed() {
        XCTAssertEqual(NIP44Conformance.run(json: Array("not json".utf8)).failed, 1)
        let json = """
        {"v2":{"valid":{"get_conversation_key":[{"sec1":"zz","pub2":"00","conversation_key":"00"}],
        "get_message_keys":{"conversation_key":"00","keys":[]},"calc_padded_len":[[16,33]],
        "encrypt_decrypt":[],"encrypt_decrypt_long_msg":[]},
        "invalid":{"encrypt_msg_lengths":[5],"get_conversation_key":[],"decrypt":[{"note":"x"}]}}}
        """
        let report = NIP44Conformance.run(json: Array(json.utf8))
        // Bad hex, no message keys, wrong padded length, a valid length, an unparseable decrypt case.
        XCTAssertEqual(report.passed, 0)
        XCTAssertEqual(report.failed, 5, "\(report.failures)")
    }
}
