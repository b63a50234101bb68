import Nostr
import XCTest

/// Hex of either case to bytes, for test vectors and fixtures. Text that is not hex (an odd
/// length, another character) fails the calling test and gives no bytes, instead of trapping
/// the whole suite.
public func hex(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [UInt8] {
    do {
        return try Hex.decode(text)
    } catch {
        XCTFail("not hex (\(error)): \(text.prefix(64))", file: file, line: line)
        return []
    }
}

/// Bytes as lowercase hex.
public func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 { Hex.encode(bytes) }
