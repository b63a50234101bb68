import Foundation
import TestSupport
import XCTest
@testable import MLS

/// KeyPackages generated live by MDK 0.8.0 (through mdk-python in the interop venv) decode,
/// re-encode byte-identically and validate, and our KeyPackageRef equals MDK's `i` tag.
final class LiveMDKKeyPackageTests: XCTestCase {
    private static let script = #"""
    import json, os, sys, tempfile, time
    import mdk
    out = []
    with tempfile.TemporaryDirectory() as d:
        m = mdk.new_mdk_with_key(os.path.join(d, "mdk.db"), os.urandom(32), None)
        for pubkey in sys.argv[1:]:
            r = m.create_key_package_for_event(pubkey, ["wss://relay.example.com"])
            out.append({"pubkey": pubkey, "content": r.key_package, "tags": r.tags,
                        "hash_ref": r.hash_ref.hex(), "created": int(time.time())})
    print(json.dumps(out))
    """#

    private func runMDK(_ pubkeys: [String]) throws -> [[String: Any]] {
        let python = try InteropVenv.python()
        let process = Process()
        process.executableURL = python
        process.arguments = ["-c", Self.script] + pubkeys
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "mdk-python", code: Int(process.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: String(decoding: errors, as: UTF8.self)])
        }
        return try XCTUnwrap(JSONSerialization.jsonObject(with: output) as? [[String: Any]])
    }

    func testLiveMDKKeyPackagesDecodeAndValidate() throws {
        let pubkeys = [
            "466d7fcae563e5cb09a0d1870bb580344804617879a14949cf22285f1bae3f27",
            "37e64dfa54eda44221af0b695520bf9973b934046f3dbb5e963dbdec0837cc3c",
            "08ab03acd38f835573cecbde43b6995381aa80f17835fd660ab06ba636771323",
        ]
        let generated = try runMDK(pubkeys)
        XCTAssertEqual(generated.count, 3)
        for entry in generated {
            let bytes = [UInt8](try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(entry["content"] as? String))))
            let kp = try KeyPackage(tlsSerialized: bytes)
            XCTAssertEqual(kp.tlsSerialized, bytes)
            XCTAssertEqual(kp.leafNode.credential.basicIdentity, hex(try XCTUnwrap(entry["pubkey"] as? String)))
            let caps = kp.leafNode.capabilities
            XCTAssertTrue(caps.supportsProposal(.selfRemove))
            XCTAssertTrue(caps.supportsExtension(ExtensionType(0xF2EE)))
            XCTAssertTrue(kp.extensions.isLastResort)

            let created = try XCTUnwrap(entry["created"] as? UInt64)
            let verified = try kp.validate(at: created)
            let tags = try XCTUnwrap(entry["tags"] as? [[String]])
            let iTag = try XCTUnwrap(tags.first { $0.first == "i" })
            XCTAssertEqual(verified.reference, hex(iTag[1]))
            XCTAssertEqual([0x20] + verified.reference, hex(try XCTUnwrap(entry["hash_ref"] as? String)))
        }
    }
}
