import Crypto
import Feed
import Foundation
import TestSupport
import XCTest

/// swift-crypto's ML-KEM-768 (what bundles use) against Python `cryptography`'s, live in the
/// interop venv: the same seed gives the same encapsulation key, and each side opens what the
/// other encapsulated to the same shared secret.
final class MLKEMInteropTests: XCTestCase {
    func testSwiftCryptoAndPythonCryptographyAgree() throws {
        var rng = SplitMix64(seed: 0x4D4C_4B45)
        let seed = (0..<64).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let ours = try MLKEM768.PrivateKey(seedRepresentation: seed, publicKey: nil)
        let toPython = try ours.publicKey.encapsulate()
        let answer = try XCTUnwrap(VenvPython.run("""
            import json, sys
            from cryptography.hazmat.primitives.asymmetric import mlkem
            d = json.load(sys.stdin)
            key = mlkem.MLKEM768PrivateKey.from_seed_bytes(bytes.fromhex(d["seed"]))
            ours = key.public_key().public_bytes_raw()
            opened = key.decapsulate(bytes.fromhex(d["ct"]))
            peer = mlkem.MLKEM768PublicKey.from_public_bytes(bytes.fromhex(d["ek"]))
            ss, ct = peer.encapsulate()
            print(json.dumps({"ek": ours.hex(), "opened": opened.hex(), "ss": ss.hex(), "ct": ct.hex()}))
            """, input: ["seed": hex(seed), "ct": hex(Array(toPython.encapsulated)), "ek": hex(Array(ours.publicKey.rawRepresentation))])
            as? [String: String])
        XCTAssertEqual(answer["ek"], hex(Array(ours.publicKey.rawRepresentation)), "one seed, one encapsulation key")
        XCTAssertEqual(answer["opened"], toPython.sharedSecret.withUnsafeBytes { hex(Array($0)) }, "Python opens ours")
        let theirs = try ours.decapsulate(TestSupport.hex(try XCTUnwrap(answer["ct"])))
        XCTAssertEqual(theirs.withUnsafeBytes { hex(Array($0)) }, answer["ss"], "we open Python's")
        XCTAssertTrue(PQBundle.isValidEncapsulationKey(Array(ours.publicKey.rawRepresentation)))
        var unreduced = Array(ours.publicKey.rawRepresentation)
        unreduced[0] = 0xFF
        unreduced[1] |= 0x0F
        XCTAssertFalse(PQBundle.isValidEncapsulationKey(unreduced), "a coefficient of 4095 fails the modulus check")
    }
}
