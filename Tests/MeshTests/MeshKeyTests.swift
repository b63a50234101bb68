@testable import Mesh
import TestSupport
import XCTest

final class MeshKeyTests: XCTestCase {
    /// RFC 8032 §5.1.7: `s` must be below the group order L, or one packet would have a second
    /// valid signature (and a second wire form). s + L is the same scalar mod L.
    func testEd25519RefusesNonCanonicalS() throws {
        let key = MeshFixture.key(1)
        let message = Array("burrow-mesh-v1:packet test".utf8)
        let signature = key.sign(message)
        XCTAssertTrue(Ed25519Verifier.verify(signature: signature, message: message, publicKey: key.publicKey))
        // L, little-endian.
        let order = hex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")
        var s = Array(signature[32...]), carry = 0
        for i in 0..<32 {
            let sum = Int(s[i]) + Int(order[i]) + carry
            s[i] = UInt8(sum & 0xFF)
            carry = sum >> 8
        }
        XCTAssertEqual(carry, 0)
        let malleated = Array(signature[..<32]) + s
        XCTAssertNotEqual(malleated, signature)
        XCTAssertFalse(Ed25519Verifier.verify(signature: malleated, message: message, publicKey: key.publicKey))
        // And the packet path refuses it as bad_signature.
        let packet = try MeshFixture.dm(from: key)
        var bytes = packet.encoded
        bytes.replaceSubrange((bytes.count - 64)..., with: Array(packet.signature[..<32]) + add(Array(packet.signature[32...]), order))
        XCTAssertThrowsError(try UnverifiedPacket.decode(bytes).verified()) { XCTAssertEqual($0 as? MeshError, .badSignature) }
    }

    private func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out = a, carry = 0
        for i in 0..<32 {
            let sum = Int(a[i]) + Int(b[i]) + carry
            out[i] = UInt8(sum & 0xFF)
            carry = sum >> 8
        }
        return out
    }

    func testMeshIDIsTheHashPrefixOfTheKey() throws {
        for vector in try MeshFixture.vectors("payloads.json") where vector["kind"]?.stringValue == "mesh_id" {
            let key = hex(vector["fields"]?["mesh_key"]?.stringValue ?? "")
            XCTAssertEqual(MeshID(meshKey: key).hex, vector["payload"]?.stringValue)
        }
        XCTAssertEqual(MeshFixture.key(1).id, MeshID(meshKey: MeshFixture.key(1).publicKey))
    }

    func testRotationEvery15MinutesPostponedByInvitesAndPreviousIDAnswered() {
        var rng = SplitMix64(seed: 9)
        let t0 = MeshFixture.now
        var identity = MeshIdentity(now: t0, using: &rng)
        let first = identity.current.id
        XCTAssertFalse(identity.rotateIfDue(now: t0 + 15 * 60_000 - 1, inviteOpen: false, using: &rng))
        XCTAssertFalse(identity.rotateIfDue(now: t0 + 15 * 60_000, inviteOpen: true, using: &rng), "an open invite holds the key")
        XCTAssertEqual(identity.current.id, first)
        let t1 = t0 + 16 * 60_000
        XCTAssertTrue(identity.rotateIfDue(now: t1, inviteOpen: false, using: &rng))
        XCTAssertNotEqual(identity.current.id, first)
        XCTAssertTrue(identity.answers(to: first, now: t1 + 59_999))
        XCTAssertFalse(identity.answers(to: first, now: t1 + 60_000))
        XCTAssertTrue(identity.answers(to: identity.current.id, now: t1 + 60_000))
    }

    func testSecretsStayOutOfDescriptions() throws {
        let key = MeshFixture.key(3)
        XCTAssertEqual(String(describing: key), "MeshKey(\(key.id))")
        var rng = SplitMix64(seed: 1)
        XCTAssertEqual(String(describing: CPace.Scalar.random(using: &rng)), "CPace.Scalar(<redacted>)")
        XCTAssertEqual(String(describing: JoinKeys(isk: [UInt8](repeating: 1, count: 64))), "JoinKeys(<redacted>)")
    }
}
