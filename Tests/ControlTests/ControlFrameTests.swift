import Foundation
import XCTest
@testable import Control
@_spi(StoreAccess) @testable import Node
import TestSupport

/// The control channel's frames and messages, without sockets.
final class ControlFrameTests: XCTestCase {
    private let secret: [UInt8] = Array("hunter2-секрет".utf8)

    private func frame(_ json: String) -> [UInt8] { frame(bytes: Array(json.utf8)) }

    private func frame(bytes payload: [UInt8]) -> [UInt8] {
        let n = UInt32(payload.count)
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + payload
    }

    private func assertRequestError(_ bytes: [UInt8], _ expected: ControlError, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try ControlRequest(frame: bytes), file: file, line: line) { error in
            XCTAssertEqual(error as? ControlError, expected, "\(error)", file: file, line: line)
        }
    }

    func testRequestAndResponseRoundTrip() throws {
        let request = ControlRequest(args: ["chat", "family", "héllo\nwörld \"quoted\" \\ /", ""], passphrase: secret + [0, 255])
        let bytes = try request.encodedFrame()
        XCTAssertEqual(Array(bytes.prefix(4)), [0, 0, 0, UInt8(bytes.count - 4)])
        let decoded = try ControlRequest(frame: bytes)
        XCTAssertEqual(decoded.args, request.args)
        XCTAssertEqual(decoded.passphrase, request.passphrase)
        XCTAssertEqual(try ControlRequest(frame: ControlRequest(args: [], passphrase: []).encodedFrame()).passphrase, [])
        // The exact wire shape, for other implementations.
        XCTAssertEqual(String(decoding: try ControlRequest(args: ["whoami"], passphrase: Array("pw".utf8)).encodedFrame().dropFirst(4), as: UTF8.self),
                       #"{"args":["whoami"],"passphrase":"cHc=","version":1}"#)

        let response = ControlResponse(exitCode: -1, stdout: "{\"ok\":true}\n" + String(repeating: "é", count: 70_000), stderr: "log\u{0}line")
        XCTAssertEqual(try ControlResponse(frame: response.encodedFrame()), response)
        XCTAssertEqual(String(decoding: try ControlResponse(exitCode: 2, stdout: "a", stderr: "").encodedFrame().dropFirst(4), as: UTF8.self),
                       #"{"exit_code":2,"stderr":"","stdout":"a","version":1}"#)
    }

    func testFramingErrorsAreTyped() throws {
        let good = try ControlRequest(args: ["whoami"], passphrase: secret).encodedFrame()
        let limit = ControlFrame.maximumRequestPayloadCount
        assertRequestError([], .frameTruncated(expected: 4, received: 0))
        assertRequestError([0, 0], .frameTruncated(expected: 4, received: 2))
        assertRequestError(Array(good.dropLast()), .frameTruncated(expected: good.count, received: good.count - 1))
        assertRequestError([0, 0x10, 0, 1], .frameTooLarge(announced: limit + 1, limit: limit))
        assertRequestError([0xff, 0xff, 0xff, 0xff], .frameTooLarge(announced: 0xffff_ffff, limit: limit))
        assertRequestError(good + [0], .frameMalformed("bytes follow the frame"))
        // A response may be larger than a request, but not without bound.
        let responseLimit = ControlFrame.maximumResponsePayloadCount
        XCTAssertThrowsError(try ControlResponse(frame: [0x04, 0, 0, 1])) { error in
            XCTAssertEqual(error as? ControlError, .frameTooLarge(announced: responseLimit + 1, limit: responseLimit))
        }
        // Encoding refuses what decoding would refuse.
        let huge = ControlRequest(args: [String(repeating: "x", count: limit)], passphrase: [])
        XCTAssertThrowsError(try huge.encodedFrame()) { error in
            guard case .frameTooLarge(let announced, limit)? = error as? ControlError else { return XCTFail("\(error)") }
            XCTAssertGreaterThan(announced, limit)
        }
    }

    func testContentErrorsAreTyped() {
        let shape = ControlError.frameMalformed("the request is not UTF-8 JSON of the expected shape")
        assertRequestError(frame(""), shape)
        assertRequestError(frame("not json"), shape)
        assertRequestError(frame(bytes: Array(#"{"version":1,"args":["a"#.utf8) + [0xff] + Array(#""],"passphrase":""}"#.utf8)), shape)  // not UTF-8
        assertRequestError(frame(#"{"version":1,"args":["\ud800"],"passphrase":""}"#), shape)  // a lone surrogate
        assertRequestError(frame("[]"), .frameMalformed("the request has the wrong type"))
        assertRequestError(frame(#"{"version":1,"args":[]}"#), .frameMalformed(#"the request lacks the field "passphrase""#))
        assertRequestError(frame(#"{"version":1,"args":[],"passphrase":"","extra":0}"#),
                           .frameMalformed(#"the request has an unknown field "extra""#))
        assertRequestError(frame(#"{"version":2,"args":[],"passphrase":""}"#),
                           .frameMalformed("the request has control protocol version 2, this build speaks 1"))
        assertRequestError(frame(#"{"version":1,"args":"whoami","passphrase":""}"#),
                           .frameMalformed(#"the field "args" of the request has the wrong type"#))
        assertRequestError(frame(#"{"version":1,"args":[],"passphrase":null}"#),
                           .frameMalformed(#"the field "passphrase" of the request is null"#))
        assertRequestError(frame(#"{"version":1,"args":[],"passphrase":"*not base64*"}"#),
                           .frameMalformed(#"the field "passphrase" of the request is not base64"#))
        XCTAssertThrowsError(try ControlRequest(frame: frame(#"{"version":1,"args":[1],"passphrase":""}"#))) { error in
            guard case .frameMalformed(let why)? = error as? ControlError else { return XCTFail("\(error)") }
            XCTAssertTrue(why.contains("args") && why.contains("wrong type"), why)
        }
        XCTAssertThrowsError(try ControlResponse(frame: frame(#"{"version":1,"exit_code":2147483648,"stdout":"","stderr":""}"#))) { error in
            XCTAssertEqual(error as? ControlError, .frameMalformed("the response is not UTF-8 JSON of the expected shape"))
        }
        XCTAssertThrowsError(try ControlResponse(frame: frame(#"{"version":1,"exit_code":0,"stdout":"","stderr":[]}"#))) { error in
            XCTAssertEqual(error as? ControlError, .frameMalformed(#"the field "stderr" of the response has the wrong type"#))
        }
    }

    func testReaderTakesAFrameInAnyPieces() throws {
        let bytes = try ControlRequest(args: ["group", "list"], passphrase: secret).encodedFrame()
        var reader = ControlFrameReader(limit: ControlFrame.maximumRequestPayloadCount)
        XCTAssertFalse(reader.hasStarted)
        for (i, byte) in bytes.enumerated() {
            let payload = try reader.append([byte])
            XCTAssertEqual(payload != nil, i == bytes.count - 1)
            XCTAssertTrue(reader.hasStarted)
            if i < bytes.count - 1 { XCTAssertThrowsError(try reader.finish()) }
        }
        XCTAssertTrue(reader.isComplete)
        XCTAssertNoThrow(try reader.finish())
        XCTAssertNil(try reader.append([]))
        XCTAssertThrowsError(try reader.append([0])) { error in
            XCTAssertEqual(error as? ControlError, .frameMalformed("bytes follow the frame"))
        }
    }

    /// Random bytes and random damage to a valid frame: always a typed error or a request, never a crash.
    func testRandomInputNeverCrashes() throws {
        var rng = SplitMix64(seed: 0xB0_44_0C)
        let good = try ControlRequest(args: ["chat", "g", "hi"], passphrase: secret).encodedFrame()
        var outcomes = (errors: 0, decoded: 0)
        for round in 0..<3000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int(rng.next() % 64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                if round % 4 == 0, bytes.count >= 4 { bytes[0] = 0; bytes[1] = 0; bytes[2] = 0; bytes[3] = UInt8(bytes.count - 4) }
            } else {
                bytes = good
                for _ in 0..<(1 + Int(rng.next() % 3)) {
                    bytes[4 + Int(rng.next() % UInt64(bytes.count - 4))] = UInt8(truncatingIfNeeded: rng.next())
                }
            }
            do {
                _ = try ControlRequest(frame: bytes)
                outcomes.decoded += 1
            } catch is ControlError {
                outcomes.errors += 1
            }
        }
        XCTAssertEqual(outcomes.errors + outcomes.decoded, 3000)
        XCTAssertGreaterThan(outcomes.errors, 2000)
    }

    func testThePassphraseNeverAppearsInDescriptionsOrErrors() throws {
        let request = ControlRequest(args: ["whoami"], passphrase: secret)
        var dumped = ""
        dump(request, to: &dumped)
        let texts = [String(describing: request), String(reflecting: request), "\(request)", dumped,
                     String(describing: Mirror(reflecting: request).children.map { "\($0.label ?? ""): \($0.value)" }),
                     String(describing: [request]), String(describing: Optional(request))]
        for text in texts {
            XCTAssertFalse(text.contains("hunter2"), text)
            XCTAssertFalse(text.contains("aHVudGVy"), text)  // its base64
            XCTAssertFalse(text.contains("104, 117"), text)  // its bytes
        }
        XCTAssertEqual(String(describing: request), #"ControlRequest(args: ["whoami"], passphrase: redacted)"#)
        XCTAssertEqual(String(describing: ControlRequest(args: [], passphrase: [])), "ControlRequest(args: [], passphrase: none)")

        // A passphrase field that fails to decode is named, never quoted.
        for json in [#"{"version":1,"args":[],"passphrase":"hunter2!!"}"#, #"{"version":1,"args":[],"passphrase":["hunter2"]}"#,
                     #"{"version":1,"args":[],"passphrase":{"hunter2":1}}"#, #"{"version":1,"args":[],"passphrase":"aHVudGVy""#,
                     #"{"version":"aHVudGVy","args":[],"passphrase":"aHVudGVy"}"#] {
            XCTAssertThrowsError(try ControlRequest(frame: frame(json))) { error in
                XCTAssertFalse("\(error)".contains("hunter2"), "\(error)")
                XCTAssertFalse("\(error)".contains("aHVudGVy"), "\(error)")
            }
        }
    }
}

