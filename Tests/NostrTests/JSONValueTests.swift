import XCTest
@testable import Nostr

final class JSONValueTests: XCTestCase {
    func testParsesTypesExactly() throws {
        let value = try JSONValue.parse(#" {"a":[1,-2,1.5,true,false,null,"x\u00e9\ud83d\ude00\n"],"b":{}} "#)
        XCTAssertEqual(value["a"], .array([.integer(1), .integer(-2), .double(1.5), .bool(true), .bool(false), .null,
                                           .string("xé😀\n")]))
        XCTAssertEqual(value["b"], .object([]))
        XCTAssertEqual(try JSONValue.parse("9223372036854775807"), .integer(.max))
        XCTAssertEqual(try JSONValue.parse("1e3"), .double(1000))
    }

    func testRejectsMalformedInput() {
        let bad = ["", "{", "[1,]", "{\"a\":1,}", "{\"a\":1,\"a\":2}", "01", "1.", "-", "tru", "\"\u{01}\"",
                   "\"\\ud800\"", "\"\\udc00x\"", "\"\\x\"", "[1] 2", "{a:1}", "\"abc", "1e999",
                   String(repeating: "[", count: 100) + String(repeating: "]", count: 100)]
        for text in bad {
            XCTAssertThrowsError(try JSONValue.parse(text), text) { error in
                guard case .malformedJSON? = error as? NostrError else { return XCTFail("\(error)") }
            }
        }
        XCTAssertThrowsError(try JSONValue.parse([0x22, 0xff, 0x22]))  // invalid UTF-8
    }

    func testNIP01Escaping() {
        var out: [UInt8] = []
        JSONWriter.writeString("a\"b\\c\nd\re\tf\u{08}g\u{0C}h\u{01}i\u{1f}/é😀\u{7f}", to: &out)
        XCTAssertEqual(String(decoding: out, as: UTF8.self),
                       "\"a\\\"b\\\\c\\nd\\re\\tf\\bg\\fh\\u0001i\\u001f/é😀\u{7f}\"")
    }

    func testSerializationRoundTrips() throws {
        let text = #"{"k":[1,"two",{"x":null}],"e":"\"/"}"#
        XCTAssertEqual(try JSONValue.parse(text).jsonString, text)
    }
}
