import XCTest
@testable import MLS

final class TLSCodecTests: XCTestCase {
    func testVarintRoundTripAtBoundaries() throws {
        for value in [0, 63, 64, 16383, 16384, (1 << 30) - 1] {
            var w = TLSWriter()
            w.writeVarint(value)
            var r = TLSReader(w.bytes)
            XCTAssertEqual(try r.readVarint(), value)
            XCTAssertTrue(r.isAtEnd)
        }
    }

    func testNonMinimalVarintRejected() {
        var r = TLSReader([0x40, 0x05])
        XCTAssertThrowsError(try r.readVarint()) { XCTAssertEqual($0 as? TLSDecodingError, .nonMinimalVarint) }
        var r4 = TLSReader([0x80, 0x00, 0x00, 0x05])
        XCTAssertThrowsError(try r4.readVarint()) { XCTAssertEqual($0 as? TLSDecodingError, .nonMinimalVarint) }
        var r3 = TLSReader([0xc0, 0, 0, 0, 0, 0, 0, 1])
        XCTAssertThrowsError(try r3.readVarint()) { XCTAssertEqual($0 as? TLSDecodingError, .invalidVarintPrefix) }
    }

    func testOpaqueLengthBeyondInputIsTypedError() {
        var r = TLSReader([0x05, 0x01, 0x02])
        XCTAssertThrowsError(try r.readOpaque()) { XCTAssertEqual($0 as? TLSDecodingError, .lengthTooLarge(5)) }
    }
}
