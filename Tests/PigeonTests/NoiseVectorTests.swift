import Nostr
import Pigeon
import TestSupport
import XCTest

/// The published Noise_XX_25519_ChaChaPoly_SHA256 vectors (cacophony, noise-c, snow), run
/// through `NoiseXX`: every handshake message byte for byte in both directions, the handshake
/// hash where given, and the transport messages through Split()'s ciphers.
final class NoiseVectorTests: XCTestCase {
    func testCacophony() throws { try runFile("noise/cacophony.Noise_XX_25519_ChaChaPoly_SHA256.json", messages: 6, hash: true) }
    func testNoiseC() throws { try runFile("noise/noise-c-basic.Noise_XX_25519_ChaChaPoly_SHA256.json", messages: 6, hash: true) }
    func testSnow() throws { try runFile("noise/snow.Noise_XX_25519_ChaChaPoly_SHA256.json", messages: 5, hash: false) }

    func runFile(_ path: String, messages expectedCount: Int, hash: Bool) throws {
        let root = try JSONValue.parse([UInt8](try Fixtures.data(path)))
        let vectors = try XCTUnwrap(root["vectors"]?.arrayValue)
        XCTAssertEqual(vectors.count, 1)
        for vector in vectors {
            let name = vector["protocol_name"]?.stringValue ?? vector["name"]?.stringValue
            XCTAssertEqual(name, NoiseXX.protocolName)
            func hex(_ key: String) throws -> [UInt8] { try Hex.decode(try XCTUnwrap(vector[key]?.stringValue)) }
            let initPrologue = try hex("init_prologue"), respPrologue = try hex("resp_prologue")
            let initStatic = try X25519PrivateKey(bytes: hex("init_static"))
            let initEphemeral = try X25519PrivateKey(bytes: hex("init_ephemeral"))
            let respStatic = try X25519PrivateKey(bytes: hex("resp_static"))
            let respEphemeral = try X25519PrivateKey(bytes: hex("resp_ephemeral"))
            let messages = try XCTUnwrap(vector["messages"]?.arrayValue).map { m in
                (payload: try Hex.decode(try XCTUnwrap(m["payload"]?.stringValue)),
                 ciphertext: try Hex.decode(try XCTUnwrap(m["ciphertext"]?.stringValue)))
            }
            XCTAssertEqual(messages.count, expectedCount)

            // Message 1: initiator writes, responder reads.
            let (sentE, m1) = try NoiseXX.initiate(prologue: initPrologue, staticKey: initStatic, ephemeral: initEphemeral, payload: messages[0].payload)
            XCTAssertEqual(m1, messages[0].ciphertext, "message 1")
            let readE = try NoiseXX.respond(prologue: respPrologue, staticKey: respStatic, message: m1)
            XCTAssertEqual(readE.payload, messages[0].payload)
            // Message 2.
            let (sentResponse, m2) = try readE.writeMessage2(ephemeral: respEphemeral, payload: messages[1].payload)
            XCTAssertEqual(m2, messages[1].ciphertext, "message 2")
            let response = try sentE.readMessage2(m2)
            XCTAssertEqual(response.payload, messages[1].payload)
            XCTAssertEqual(response.remoteStatic, respStatic.publicKey)
            // Message 3.
            let (initiatorResult, m3) = try response.writeMessage3(payload: messages[2].payload)
            XCTAssertEqual(m3, messages[2].ciphertext, "message 3")
            let (responderResult, payload3) = try sentResponse.readMessage3(m3)
            XCTAssertEqual(payload3, messages[2].payload)
            XCTAssertEqual(responderResult.remoteStatic, initStatic.publicKey)
            XCTAssertEqual(initiatorResult.handshakeHash, responderResult.handshakeHash)
            if hash { XCTAssertEqual(initiatorResult.handshakeHash, try hex("handshake_hash")) }

            // Transport messages: the initiator sends with the first cipher, the responder with the second.
            var (i2r, r2i) = initiatorResult.split()
            var (ri2r, rr2i) = responderResult.split()
            for (index, message) in messages.enumerated().dropFirst(3) {
                let fromInitiator = index % 2 == 0
                let sealed = fromInitiator ? try i2r.encrypt(ad: [], plaintext: message.payload)
                                           : try rr2i.encrypt(ad: [], plaintext: message.payload)
                XCTAssertEqual(sealed, message.ciphertext, "transport message \(index)")
                let opened = fromInitiator ? try ri2r.decrypt(ad: [], ciphertext: sealed) : try r2i.decrypt(ad: [], ciphertext: sealed)
                XCTAssertEqual(opened, message.payload)
            }
        }
    }

    /// A flipped bit anywhere in message 2 or 3 is refused, and the state that refused it can
    /// still read the genuine message.
    func testTamperedHandshakeMessagesAreRefused() throws {
        let prologue = Array("p".utf8)
        let iStatic = X25519PrivateKey.generate(), rStatic = X25519PrivateKey.generate()
        let (sentE, m1) = try NoiseXX.initiate(prologue: prologue, staticKey: iStatic, ephemeral: .generate(), payload: [1, 2, 3])
        let readE = try NoiseXX.respond(prologue: prologue, staticKey: rStatic, message: m1)
        let (sent, m2) = try readE.writeMessage2(ephemeral: .generate(), payload: [4])
        for index in stride(from: 32, to: m2.count, by: 7) {
            var bad = m2
            bad[index] ^= 0x01
            XCTAssertThrowsError(try sentE.readMessage2(bad)) { XCTAssertEqual($0 as? NoiseError, .decryptFailed) }
        }
        let response = try sentE.readMessage2(m2)
        let (_, m3) = try response.writeMessage3(payload: [5])
        var bad = m3
        bad[bad.count - 1] ^= 0x80
        XCTAssertThrowsError(try sent.readMessage3(bad))
        XCTAssertEqual(try sent.readMessage3(m3).1, [5])
        // A different prologue gives a different transcript: message 2 does not authenticate.
        let otherRead = try NoiseXX.respond(prologue: Array("q".utf8), staticKey: rStatic, message: m1)
        let (_, otherM2) = try otherRead.writeMessage2(ephemeral: .generate(), payload: [4])
        XCTAssertThrowsError(try sentE.readMessage2(otherM2))
    }
}
