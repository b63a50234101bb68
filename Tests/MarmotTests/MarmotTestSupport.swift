import Foundation
import Marmot
import MLS
import Nostr
import TestSupport
import XCTest


enum TestData {
    static func json(_ path: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Fixtures.data(path)) as? [String: Any])
    }

    static func text(_ path: String) throws -> String {
        String(decoding: try Fixtures.data(path), as: UTF8.self)
    }

    /// marmot-samples/kp_event.json, id and signature checked.
    static func sampleKeyPackageEvent() throws -> Event {
        try UnverifiedEvent(json: text("marmot-samples/kp_event.json")).verified()
    }

    static func sampleWelcomeRumor() throws -> Rumor {
        try Rumor(json: text("marmot-samples/welcome_rumor.json"))
    }

    static func sampleGroupEvent() throws -> Event {
        try UnverifiedEvent(json: text("marmot-samples/msg445.json")).verified()
    }

    static func protocolVectors() throws -> [String: Any] {
        try json("marmot/nostrc/protocol-vectors.json")
    }

    /// A KeyPackage shaped as MDK makes them (BasicCredential = the Nostr key, capabilities
    /// with last_resort, 0xF2EE and SelfRemove, last-resort extension, 84-day lifetime from
    /// an hour before `now`), signed with a fresh Ed25519 key.
    static func marmotKeyPackage<R: RandomNumberGenerator>(identity: [UInt8], now: Int64, rng: inout R,
                                                          proposals: [ProposalType] = [.selfRemove]) throws -> KeyPackage {
        let suite = CipherSuiteProvider.mls128DHKEMX25519AES128GCMSHA256Ed25519
        let signer = try SignaturePrivateKey.generate(using: &rng)
        let initKey = try HPKEPrivateKey(rng.randomSecret(32)).publicKey()
        let encryptionKey = try HPKEPrivateKey(rng.randomSecret(32)).publicKey()
        let start = UInt64(now) - 3600
        var leaf = LeafNode(
            encryptionKey: encryptionKey.bytes, signatureKey: signer.publicKey.bytes,
            credential: .basic(identity: identity),
            capabilities: Capabilities(extensions: [.lastResort, ExtensionType(0xF2EE)], proposals: proposals),
            source: .keyPackage(Lifetime(notBefore: start, notAfter: start + 84 * 86400 + 3600)))
        try leaf.sign(with: signer, suite: suite, position: nil)
        var kp = KeyPackage(initKey: initKey.bytes, leafNode: leaf, extensions: try Extensions([.lastResort]))
        try kp.sign(with: signer, suite: suite)
        return kp
    }
}

/// Asserts that `body` throws exactly `expected`.
func XCTAssertThrowsMarmot<T>(_ expected: MarmotErrorMatcher, _ body: @autoclosure () throws -> T,
                              file: StaticString = #filePath, line: UInt = #line) {
    do {
        _ = try body()
        XCTFail("expected \(expected), got no error", file: file, line: line)
    } catch {
        guard let error = error as? MarmotError else { return XCTFail("not a MarmotError: \(error)", file: file, line: line) }
        XCTAssertTrue(expected.matches(error), "expected \(expected), got \(error)", file: file, line: line)
    }
}

/// Either an exact error or a predicate over it (for cases whose reason text is incidental).
struct MarmotErrorMatcher: CustomStringConvertible {
    let description: String
    let matches: (MarmotError) -> Bool

    static func exactly(_ error: MarmotError) -> MarmotErrorMatcher {
        MarmotErrorMatcher(description: "\(error)") { $0 == error }
    }

    static func invalidTag(_ name: String) -> MarmotErrorMatcher {
        MarmotErrorMatcher(description: "invalidTag(\(name), …)") {
            if case .invalidTag(name, _) = $0 { return true } else { return false }
        }
    }

    static func invalidRelayURL() -> MarmotErrorMatcher {
        MarmotErrorMatcher(description: "invalidRelayURL") {
            if case .invalidRelayURL = $0 { return true } else { return false }
        }
    }

    static func invalidPayload(_ field: String) -> MarmotErrorMatcher {
        MarmotErrorMatcher(description: "invalidPayload(field: \(field))") {
            if case .invalidPayload(_, field, _) = $0 { return true } else { return false }
        }
    }

    static func matching(_ description: String, _ predicate: @escaping (MarmotError) -> Bool) -> MarmotErrorMatcher {
        MarmotErrorMatcher(description: description, matches: predicate)
    }
}
