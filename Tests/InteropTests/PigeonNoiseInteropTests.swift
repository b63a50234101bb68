import Foundation
import Nostr
@testable import Pigeon
import TestSupport
import XCTest

/// Live Noise_XX_25519_ChaChaPoly_SHA256 handshakes between Burrow's `NoiseXX` and the Python
/// `noiseprotocol` 0.3.1 package (`Tests/Interop/peers/noise_peer.py`), with the Pigeon profile's
/// prologue ("burrow-pigeon-v1:prologue" ‖ 0x01) and payloads (section 4.1: `ts` u64; `R_r` ‖
/// card; `R_i` ‖ card). Messages travel as hex over the peer's stdin/stdout: no sockets.
///
/// Each run checks, on both sides: the final handshake hash `h`; the chaining key `ck` at
/// Split() (noise_peer.py records it from inside noiseprotocol's own Split()); both Split()
/// keys; the ratchet root HKDF(salt = h, IKM = ck, "burrow-pigeon-v1:ratchet-root") as the
/// Python side computes it with `cryptography`; the remote static keys; the payloads; and a
/// transport message each way through the Split() ciphers. Fresh random keys every run, plus a
/// fixed-key case: the first conversation of the profile's published vectors
/// (`Tests/Fixtures/pigeon/conversations.json`), whose handshake bytes, `h`, `ck` and root
/// noiseprotocol must reproduce too. Tampered messages are refused by both implementations.
///
/// Secret values (ck, Split() keys, the root) are compared as `SecretBytes`, so a failure
/// never prints them.
final class PigeonNoiseInteropTests: XCTestCase {
    static let prologue = Array("burrow-pigeon-v1:prologue".utf8) + [0x01]
    private var peer: PythonPeer!
    private var nextID = 0

    override func setUpWithError() throws {
        _ = try InteropVenv.python()
        let peer = try PythonPeer(script: Fixtures.peerScript("noise_peer.py"))
        addTeardownBlock { peer.terminate() }
        self.peer = peer
        XCTAssertEqual(peer.hello["version"] as? String, "0.3.1")
    }

    // MARK: - Payloads (section 4.1)

    struct Payloads {
        var ts: [UInt8]
        var responder: [UInt8]   // R_r ‖ card
        var initiator: [UInt8]   // R_i ‖ card

        /// Random ratchet keys and card-sized random bytes: the Noise layer carries cards opaquely.
        static func random() -> Payloads {
            var ts: [UInt8] = []
            ts.appendBigEndian(UInt64(Date().timeIntervalSince1970 * 1000))
            return Payloads(
                ts: ts,
                responder: X25519PrivateKey.generate().publicKey.bytes + randomBytes(Int.random(in: 299...735)),
                initiator: X25519PrivateKey.generate().publicKey.bytes + randomBytes(Int.random(in: 299...735)))
        }
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// What one side ends a handshake with.
    struct Outcome {
        var handshakeHash: [UInt8]
        var chainingKey: SecretBytes
        var split1: SecretBytes
        var split2: SecretBytes
        var ratchetRoot: SecretBytes
        var remoteStatic: [UInt8]
    }

    private func newID() -> String {
        nextID += 1
        return "hs\(nextID)"
    }

    private func pythonStart(_ id: String, role: String, staticKey: [UInt8], ephemeral: [UInt8]? = nil) throws -> [UInt8] {
        var fields: [String: Any] = ["id": id, "role": role, "prologue": Hex.encode(Self.prologue), "static": Hex.encode(staticKey)]
        if let ephemeral { fields["ephemeral"] = Hex.encode(ephemeral) }
        return try Hex.decode(try peer.request("start", fields).string("static_public"))
    }

    private func pythonWrite(_ id: String, _ payload: [UInt8]) throws -> [UInt8] {
        try Hex.decode(try peer.request("write", ["id": id, "payload": Hex.encode(payload)]).string("message"))
    }

    private func pythonRead(_ id: String, _ message: [UInt8]) throws -> [UInt8] {
        try Hex.decode(try peer.request("read", ["id": id, "message": Hex.encode(message)]).string("payload"))
    }

    /// The peer refuses `message` with an AEAD failure (`ok: false` naming the exception type).
    private func assertPythonRefuses(_ id: String, _ message: [UInt8], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try pythonRead(id, message), what, file: file, line: line) { error in
            guard case PythonPeer.PeerError.failed(let op, let text) = error else {
                return XCTFail("\(what): expected a refusal, got \(error)", file: file, line: line)
            }
            XCTAssertEqual(op, "read", file: file, line: line)
            // noise_peer.py names the exception noiseprotocol raised: cryptography's AEAD failure.
            XCTAssertEqual(text, "read: RuntimeError: InvalidTag", what, file: file, line: line)
        }
    }

    private func pythonOutcome(_ id: String) throws -> Outcome {
        let r = try peer.request("result", ["id": id])
        let h = try Hex.decode(try r.string("handshake_hash"))
        let ck = try Hex.decode(try r.string("chaining_key"))
        return Outcome(
            handshakeHash: h,
            chainingKey: SecretBytes(ck),
            split1: SecretBytes(try Hex.decode(try r.string("split_1"))),
            split2: SecretBytes(try Hex.decode(try r.string("split_2"))),
            ratchetRoot: SecretBytes(try Hex.decode(try r.string("ratchet_root"))),
            remoteStatic: try Hex.decode(try r.string("remote_static")))
    }

    private static func swiftOutcome(_ result: NoiseHandshakeResult) -> Outcome {
        let (c1, c2) = result.split()
        return Outcome(
            handshakeHash: result.handshakeHash,
            chainingKey: SecretBytes(result.chainingKey),
            split1: c1.key ?? SecretBytes([]),
            split2: c2.key ?? SecretBytes([]),
            ratchetRoot: SecretBytes(RatchetKDF.ratchetRoot(handshakeHash: result.handshakeHash, chainingKey: result.chainingKey)),
            remoteStatic: result.remoteStatic.bytes)
    }

    private func assertSameSecrets(_ ours: Outcome, _ theirs: Outcome, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(ours.handshakeHash, theirs.handshakeHash, "h", file: file, line: line)
        XCTAssertEqual(ours.handshakeHash.count, 32, file: file, line: line)
        XCTAssertEqual(ours.chainingKey, theirs.chainingKey, "ck at Split()", file: file, line: line)
        XCTAssertEqual(ours.split1, theirs.split1, "Split() initiator→responder key", file: file, line: line)
        XCTAssertEqual(ours.split2, theirs.split2, "Split() responder→initiator key", file: file, line: line)
        XCTAssertEqual(ours.ratchetRoot, theirs.ratchetRoot, "ratchet root (4.4)", file: file, line: line)
        XCTAssertNotEqual(ours.split1, ours.split2, file: file, line: line)
        XCTAssertEqual(ours.chainingKey.count, 32, file: file, line: line)
    }

    /// One transport message each way through Split()'s ciphers: ours encrypts, noiseprotocol
    /// decrypts, and back. `weAreInitiator` picks which of our two ciphers sends.
    private func exchangeTransport(_ id: String, _ result: NoiseHandshakeResult, weAreInitiator: Bool,
                                   file: StaticString = #filePath, line: UInt = #line) throws {
        var (i2r, r2i) = result.split()
        let ours = Array("transport from Burrow \(id)".utf8)
        let sealed = weAreInitiator ? try i2r.encrypt(ad: [], plaintext: ours) : try r2i.encrypt(ad: [], plaintext: ours)
        let opened = try Hex.decode(try peer.request("decrypt", ["id": id, "ciphertext": Hex.encode(sealed)]).string("plaintext"))
        XCTAssertEqual(opened, ours, "noiseprotocol opened our transport message", file: file, line: line)
        let theirs = Array("transport from noiseprotocol \(id)".utf8)
        let theirSealed = try Hex.decode(try peer.request("encrypt", ["id": id, "plaintext": Hex.encode(theirs)]).string("ciphertext"))
        let theirOpened = weAreInitiator ? try r2i.decrypt(ad: [], ciphertext: theirSealed) : try i2r.decrypt(ad: [], ciphertext: theirSealed)
        XCTAssertEqual(theirOpened, theirs, "we opened noiseprotocol's transport message", file: file, line: line)
    }

    // MARK: - Handshakes in both roles

    /// noiseprotocol initiates, `NoiseXX` responds.
    @discardableResult
    private func pythonInitiates(
        initiatorStatic: [UInt8], responderStatic: X25519PrivateKey, initiatorEphemeral: [UInt8]? = nil,
        responderEphemeral: X25519PrivateKey = .generate(), payloads: Payloads,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> (m1: [UInt8], m2: [UInt8], m3: [UInt8], outcome: Outcome) {
        let id = newID()
        let initiatorPublic = try pythonStart(id, role: "initiator", staticKey: initiatorStatic, ephemeral: initiatorEphemeral)
        let m1 = try pythonWrite(id, payloads.ts)
        XCTAssertEqual(m1.count, 32 + 8, "message 1 = e ‖ ts", file: file, line: line)
        let readE = try NoiseXX.respond(prologue: Self.prologue, staticKey: responderStatic, message: m1)
        XCTAssertEqual(readE.payload, payloads.ts, file: file, line: line)
        let (sent, m2) = try readE.writeMessage2(ephemeral: responderEphemeral, payload: payloads.responder)
        XCTAssertEqual(try pythonRead(id, m2), payloads.responder, "noiseprotocol read our payload 2", file: file, line: line)
        let m3 = try pythonWrite(id, payloads.initiator)
        let (result, payload3) = try sent.readMessage3(m3)
        XCTAssertEqual(payload3, payloads.initiator, file: file, line: line)
        XCTAssertEqual(result.remoteStatic.bytes, initiatorPublic, "our responder learned noiseprotocol's static key", file: file, line: line)

        let theirs = try pythonOutcome(id)
        XCTAssertEqual(theirs.remoteStatic, responderStatic.publicKey.bytes, "noiseprotocol learned our static key", file: file, line: line)
        let ours = Self.swiftOutcome(result)
        assertSameSecrets(ours, theirs, file: file, line: line)
        try exchangeTransport(id, result, weAreInitiator: false, file: file, line: line)
        _ = try peer.request("forget", ["id": id])
        return (m1, m2, m3, ours)
    }

    /// `NoiseXX` initiates, noiseprotocol responds.
    @discardableResult
    private func weInitiate(
        initiatorStatic: X25519PrivateKey, responderStatic: [UInt8], initiatorEphemeral: X25519PrivateKey = .generate(),
        responderEphemeral: [UInt8]? = nil, payloads: Payloads,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> (m1: [UInt8], m2: [UInt8], m3: [UInt8], outcome: Outcome) {
        let id = newID()
        let responderPublic = try pythonStart(id, role: "responder", staticKey: responderStatic, ephemeral: responderEphemeral)
        let (sentE, m1) = try NoiseXX.initiate(prologue: Self.prologue, staticKey: initiatorStatic, ephemeral: initiatorEphemeral, payload: payloads.ts)
        XCTAssertEqual(try pythonRead(id, m1), payloads.ts, "noiseprotocol read our ts", file: file, line: line)
        let m2 = try pythonWrite(id, payloads.responder)
        let response = try sentE.readMessage2(m2)
        XCTAssertEqual(response.payload, payloads.responder, file: file, line: line)
        XCTAssertEqual(response.remoteStatic.bytes, responderPublic, "our initiator learned noiseprotocol's static key", file: file, line: line)
        let (result, m3) = try response.writeMessage3(payload: payloads.initiator)
        XCTAssertEqual(try pythonRead(id, m3), payloads.initiator, "noiseprotocol read our payload 3", file: file, line: line)

        let theirs = try pythonOutcome(id)
        XCTAssertEqual(theirs.remoteStatic, initiatorStatic.publicKey.bytes, "noiseprotocol learned our static key", file: file, line: line)
        let ours = Self.swiftOutcome(result)
        assertSameSecrets(ours, theirs, file: file, line: line)
        try exchangeTransport(id, result, weAreInitiator: true, file: file, line: line)
        _ = try peer.request("forget", ["id": id])
        return (m1, m2, m3, ours)
    }

    /// Fresh random static and ephemeral keys and payloads, several runs.
    func testNoiseprotocolInitiatesAgainstOurResponder() throws {
        for _ in 0..<5 {
            try pythonInitiates(initiatorStatic: X25519PrivateKey.generate().rawBytes, responderStatic: .generate(), payloads: .random())
        }
    }

    func testWeInitiateAgainstNoiseprotocolResponder() throws {
        for _ in 0..<5 {
            try weInitiate(initiatorStatic: .generate(), responderStatic: X25519PrivateKey.generate().rawBytes, payloads: .random())
        }
    }

    /// Fixed keys: the first script of the published Pigeon vectors (Alice initiates to Bob).
    /// Both role assignments reproduce the vector's three handshake frames byte for byte, and
    /// `h`, `ck` and the ratchet root of its `session_keys`.
    func testFixedKeysReproduceThePublishedPigeonVector() throws {
        let v = try ConversationVector.load()
        let payloads = Payloads(ts: v.ts, responder: v.bobRatchetPublic + v.bobCard, initiator: v.aliceRatchetPublic + v.aliceCard)

        let a = try pythonInitiates(
            initiatorStatic: v.aliceStatic, responderStatic: try X25519PrivateKey(bytes: v.bobStatic),
            initiatorEphemeral: v.aliceEphemeral, responderEphemeral: try X25519PrivateKey(bytes: v.bobEphemeral), payloads: payloads)
        let b = try weInitiate(
            initiatorStatic: try X25519PrivateKey(bytes: v.aliceStatic), responderStatic: v.bobStatic,
            initiatorEphemeral: try X25519PrivateKey(bytes: v.aliceEphemeral), responderEphemeral: v.bobEphemeral, payloads: payloads)
        for (name, run) in [("noiseprotocol initiates", a), ("Burrow initiates", b)] {
            XCTAssertEqual(run.m1, v.handshake1Body, "\(name): handshake1")
            XCTAssertEqual(run.m2, v.handshake2Body, "\(name): handshake2")
            XCTAssertEqual(run.m3, v.handshake3Body, "\(name): handshake3")
            XCTAssertEqual(run.outcome.handshakeHash, v.handshakeHash, "\(name): h")
            XCTAssertEqual(run.outcome.chainingKey, SecretBytes(v.chainingKey), "\(name): ck")
            XCTAssertEqual(run.outcome.ratchetRoot, SecretBytes(v.ratchetRoot), "\(name): ratchet root")
        }
    }

    // MARK: - Tampering

    /// A flipped bit in each encrypted field of messages 2 and 3 (and in the ephemeral keys) is
    /// refused by whichever side reads it; a tampered message 1 (its payload is clear but
    /// hashed into h) makes the initiator refuse message 2. Our states are values: after a
    /// refusal the same state still reads the genuine message. noiseprotocol's connection is
    /// unusable after a refusal, so each of its refusals gets a fresh handshake.
    func testTamperedMessagesAreRefusedByBoth() throws {
        let prologue = Self.prologue
        let ourStatic = X25519PrivateKey.generate()
        let theirStatic = X25519PrivateKey.generate().rawBytes
        let payloads = Payloads.random()
        // Positions: in e (0), in the encrypted static key (40), in the payload ciphertext and its tag (last byte).
        func positions(_ m: [UInt8]) -> [Int] { [0, 40, 80, m.count - 1] }

        // noiseprotocol reads a tampered message 2 of ours.
        for index in [0, 40, 80, 32 + 48 + payloads.responder.count + 15] {
            let id = newID()
            _ = try pythonStart(id, role: "initiator", staticKey: theirStatic)
            let m1 = try pythonWrite(id, payloads.ts)
            let readE = try NoiseXX.respond(prologue: prologue, staticKey: ourStatic, message: m1)
            var (_, m2) = try readE.writeMessage2(ephemeral: .generate(), payload: payloads.responder)
            m2[index] ^= 0x01
            assertPythonRefuses(id, m2, "tampered message 2 at \(index)")
            _ = try peer.request("forget", ["id": id])
        }

        // We read a tampered message 3 of noiseprotocol's; the same state then reads the genuine one.
        do {
            let id = newID()
            _ = try pythonStart(id, role: "initiator", staticKey: theirStatic)
            let readE = try NoiseXX.respond(prologue: prologue, staticKey: ourStatic, message: try pythonWrite(id, payloads.ts))
            let (sent, m2) = try readE.writeMessage2(ephemeral: .generate(), payload: payloads.responder)
            _ = try pythonRead(id, m2)
            let m3 = try pythonWrite(id, payloads.initiator)
            for index in [0, 40, 47, 48, 60, m3.count - 1] {
                var bad = m3
                bad[index] ^= 0x80
                XCTAssertThrowsError(try sent.readMessage3(bad), "tampered message 3 at \(index)") { XCTAssertEqual($0 as? NoiseError, .decryptFailed) }
            }
            XCTAssertEqual(try sent.readMessage3(m3).1, payloads.initiator)
        }

        // We read a tampered message 2 of noiseprotocol's; the same state then reads the genuine one.
        let ourInitiator: (NoiseXXInitiatorSentE, [UInt8], String) = try {
            let id = newID()
            _ = try pythonStart(id, role: "responder", staticKey: theirStatic)
            let (sentE, m1) = try NoiseXX.initiate(prologue: prologue, staticKey: ourStatic, ephemeral: .generate(), payload: payloads.ts)
            _ = try pythonRead(id, m1)
            return (sentE, try pythonWrite(id, payloads.responder), id)
        }()
        let (sentE, genuine2, responderID) = ourInitiator
        for index in positions(genuine2) {
            var bad = genuine2
            bad[index] ^= 0x01
            XCTAssertThrowsError(try sentE.readMessage2(bad), "tampered message 2 at \(index)") { XCTAssertEqual($0 as? NoiseError, .decryptFailed) }
        }
        let response = try sentE.readMessage2(genuine2)
        XCTAssertEqual(response.payload, payloads.responder)
        // noiseprotocol reads a tampered message 3 of ours.
        var (_, m3) = try response.writeMessage3(payload: payloads.initiator)
        m3[50] ^= 0x01
        assertPythonRefuses(responderID, m3, "tampered message 3")

        // Tampered message 1 (ts is clear but hashed): each initiator refuses the resulting message 2.
        do {
            let id = newID()
            _ = try pythonStart(id, role: "initiator", staticKey: theirStatic)
            var m1 = try pythonWrite(id, payloads.ts)
            m1[m1.count - 1] ^= 0x01
            let readE = try NoiseXX.respond(prologue: prologue, staticKey: ourStatic, message: m1)
            XCTAssertNotEqual(readE.payload, payloads.ts)
            let (_, m2) = try readE.writeMessage2(ephemeral: .generate(), payload: payloads.responder)
            assertPythonRefuses(id, m2, "message 2 answering a tampered message 1")
        }
        do {
            let id = newID()
            _ = try pythonStart(id, role: "responder", staticKey: theirStatic)
            let (sentE, m1) = try NoiseXX.initiate(prologue: prologue, staticKey: ourStatic, ephemeral: .generate(), payload: payloads.ts)
            var bad1 = m1
            bad1[35] ^= 0x01
            _ = try pythonRead(id, bad1)
            let m2 = try pythonWrite(id, payloads.responder)
            XCTAssertThrowsError(try sentE.readMessage2(m2), "message 2 answering a tampered message 1") { XCTAssertEqual($0 as? NoiseError, .decryptFailed) }
        }

        // A different prologue (another profile version) is refused the same way.
        do {
            let id = newID()
            _ = try peer.request("start", ["id": id, "role": "initiator", "prologue": Hex.encode(Array("burrow-pigeon-v1:prologue".utf8) + [0x02]),
                                           "static": Hex.encode(theirStatic)])
            let readE = try NoiseXX.respond(prologue: prologue, staticKey: ourStatic, message: try pythonWrite(id, payloads.ts))
            let (_, m2) = try readE.writeMessage2(ephemeral: .generate(), payload: payloads.responder)
            assertPythonRefuses(id, m2, "message 2 under another prologue")
        }
    }
}

/// The handshake of the first script in `Tests/Fixtures/pigeon/conversations.json`.
struct ConversationVector {
    var aliceStatic: [UInt8], aliceEphemeral: [UInt8], aliceRatchetPublic: [UInt8], aliceCard: [UInt8]
    var bobStatic: [UInt8], bobEphemeral: [UInt8], bobRatchetPublic: [UInt8], bobCard: [UInt8]
    var ts: [UInt8]
    var handshake1Body: [UInt8], handshake2Body: [UInt8], handshake3Body: [UInt8]
    var handshakeHash: [UInt8], chainingKey: [UInt8], ratchetRoot: [UInt8], binding: [UInt8]
    var aliceRatchetKeys: [[UInt8]], bobRatchetKeys: [[UInt8]]
    var steps: [[String: Any]]

    struct Malformed: Error, CustomStringConvertible {
        let field: String
        var description: String { "conversations.json: \(field) missing or malformed" }
    }

    static func load() throws -> ConversationVector {
        let json = try JSONSerialization.jsonObject(with: try Fixtures.data("pigeon/conversations.json"))
        guard let cases = (json as? [String: Any])?["cases"] as? [[String: Any]], let first = cases.first,
              let parties = first["parties"] as? [String: [String: Any]], let alice = parties["alice"], let bob = parties["bob"],
              let steps = first["steps"] as? [[String: Any]]
        else { throw Malformed(field: "cases[0]") }
        func hex(_ object: [String: Any], _ key: String) throws -> [UInt8] {
            guard let text = object[key] as? String else { throw Malformed(field: key) }
            return try Hex.decode(text)
        }
        func keys(_ party: [String: Any], _ key: String) throws -> [[UInt8]] {
            guard let list = party[key] as? [String], !list.isEmpty else { throw Malformed(field: key) }
            return try list.map { try Hex.decode($0) }
        }
        func expect(_ step: [String: Any]) -> [String: Any] { step["expect"] as? [String: Any] ?? [:] }
        guard steps.count > 3, steps[0]["op"] as? String == "start",
              let h1Text = expect(steps[0])["frame"] as? String,
              let h2Text = (expect(steps[1])["outputs"] as? [String])?.first,
              let h3Text = (expect(steps[2])["outputs"] as? [String])?.first,
              let sessionKeys = expect(steps[2])["session_keys"] as? [String: Any],
              let nowMs = steps[0]["now_ms"] as? Int
        else { throw Malformed(field: "handshake steps") }
        let h1 = try Hex.decode(h1Text), h2 = try Hex.decode(h2Text), h3 = try Hex.decode(h3Text)
        var ts: [UInt8] = []
        ts.appendBigEndian(UInt64(nowMs))
        let aliceRatchet = try keys(alice, "ratchet_keys"), bobRatchet = try keys(bob, "ratchet_keys")
        return ConversationVector(
            aliceStatic: try hex(alice, "static_private"), aliceEphemeral: try keys(alice, "ephemeral_keys")[0],
            aliceRatchetPublic: try X25519PrivateKey(bytes: aliceRatchet[0]).publicKey.bytes, aliceCard: try hex(alice, "card"),
            bobStatic: try hex(bob, "static_private"), bobEphemeral: try keys(bob, "ephemeral_keys")[0],
            bobRatchetPublic: try X25519PrivateKey(bytes: bobRatchet[0]).publicKey.bytes, bobCard: try hex(bob, "card"),
            ts: ts,
            handshake1Body: Array(h1.dropFirst(Frame.headerLength)), handshake2Body: Array(h2.dropFirst(Frame.headerLength)),
            handshake3Body: Array(h3.dropFirst(Frame.headerLength)),
            handshakeHash: try hex(sessionKeys, "handshake_hash"), chainingKey: try hex(sessionKeys, "chaining_key"),
            ratchetRoot: try hex(sessionKeys, "ratchet_root"), binding: try hex(sessionKeys, "binding"),
            aliceRatchetKeys: aliceRatchet, bobRatchetKeys: bobRatchet, steps: steps)
    }
}
