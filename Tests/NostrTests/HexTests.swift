import XCTest
@testable import Nostr

final class HexTests: XCTestCase {
    func testRoundTripAndErrors() throws {
        XCTAssertEqual(Hex.encode([0x00, 0xab, 0xff]), "00abff")
        XCTAssertEqual(try Hex.decode("00ABff"), [0x00, 0xab, 0xff])
        XCTAssertThrowsError(try Hex.decode("abc")) { XCTAssertEqual($0 as? HexError, .oddLength) }
        XCTAssertThrowsError(try Hex.decode("zz")) { XCTAssertEqual($0 as? HexError, .invalidCharacter) }
        XCTAssertThrowsError(try Hex.decode("abcd", length: 32)) {
            XCTAssertEqual($0 as? HexError, .wrongLength(expected: 32, actual: 2))
        }
    }
}
