import Nostr
import Pigeon

/// Runs a published Noise test-vector file (the cacophony/snow/noise-c JSON format: a
/// `vectors` array of handshakes with keys, prologues and messages) through Pigeon's
/// Noise_XX_25519_ChaChaPoly_SHA256: every handshake message byte for byte in both directions,
/// the handshake hash where given, then the transport messages through Split()'s ciphers.
/// Vectors of other protocols, or with PSKs (an empty list is none) or fallback, are skipped.
public enum NoiseConformance {
    public static func run(json: [UInt8]) -> ConformanceReport {
        var report = ConformanceReport()
        guard let root = try? JSONValue.parse(json), let vectors = root["vectors"]?.arrayValue else {
            report.record("noise file", .failure(CaseFailure("not a Noise vector file (no vectors array)")))
            return report
        }
        for (index, vector) in vectors.enumerated() {
            let name = vector["protocol_name"]?.stringValue ?? vector["name"]?.stringValue ?? "?"
            let usesPSKs = (vector["init_psks"]?.arrayValue?.isEmpty == false) || (vector["resp_psks"]?.arrayValue?.isEmpty == false)
            guard name == NoiseXX.protocolName, !usesPSKs, vector["fallback"]?.boolValue != true else {
                report.skipped += 1
                continue
            }
            report.record("vector[\(index)] \(name)", Result { try runVector(vector) })
        }
        return report
    }

    static func runVector(_ vector: JSONValue) throws {
        func hex(_ key: String) throws -> [UInt8] {
            guard let text = vector[key]?.stringValue else { throw CaseFailure("missing \(key)") }
            return try Hex.decode(text)
        }
        let initStatic = try X25519PrivateKey(bytes: hex("init_static"))
        let initEphemeral = try X25519PrivateKey(bytes: hex("init_ephemeral"))
        let respStatic = try X25519PrivateKey(bytes: hex("resp_static"))
        let respEphemeral = try X25519PrivateKey(bytes: hex("resp_ephemeral"))
        guard let list = vector["messages"]?.arrayValue, list.count >= 3 else { throw CaseFailure("fewer than three messages") }
        let messages = try list.map { m -> (payload: [UInt8], ciphertext: [UInt8]) in
            guard let payload = m["payload"]?.stringValue, let ciphertext = m["ciphertext"]?.stringValue else {
                throw CaseFailure("a message lacks payload or ciphertext")
            }
            return (try Hex.decode(payload), try Hex.decode(ciphertext))
        }
        func expect(_ actual: [UInt8], _ expected: [UInt8], _ what: String) throws {
            guard actual == expected else { throw CaseFailure("\(what) differs") }
        }

        let (sentE, m1) = try NoiseXX.initiate(prologue: try hex("init_prologue"), staticKey: initStatic, ephemeral: initEphemeral,
                                               payload: messages[0].payload)
        try expect(m1, messages[0].ciphertext, "message 1")
        let readE = try NoiseXX.respond(prologue: try hex("resp_prologue"), staticKey: respStatic, message: m1)
        try expect(readE.payload, messages[0].payload, "message 1 payload as read")
        let (sentResponse, m2) = try readE.writeMessage2(ephemeral: respEphemeral, payload: messages[1].payload)
        try expect(m2, messages[1].ciphertext, "message 2")
        let response = try sentE.readMessage2(m2)
        try expect(response.payload, messages[1].payload, "message 2 payload as read")
        try expect(response.remoteStatic.bytes, respStatic.publicKey.bytes, "the responder's static key as read")
        let (initiator, m3) = try response.writeMessage3(payload: messages[2].payload)
        try expect(m3, messages[2].ciphertext, "message 3")
        let (responder, payload3) = try sentResponse.readMessage3(m3)
        try expect(payload3, messages[2].payload, "message 3 payload as read")
        try expect(responder.remoteStatic.bytes, initStatic.publicKey.bytes, "the initiator's static key as read")
        try expect(initiator.handshakeHash, responder.handshakeHash, "the two sides' handshake hashes")
        if vector["handshake_hash"] != nil { try expect(initiator.handshakeHash, try hex("handshake_hash"), "handshake hash") }

        var (i2r, r2i) = initiator.split()
        var (ri2r, rr2i) = responder.split()
        for (index, message) in messages.enumerated().dropFirst(3) {
            let fromInitiator = index % 2 == 0
            let sealed = fromInitiator ? try i2r.encrypt(ad: [], plaintext: message.payload)
                                       : try rr2i.encrypt(ad: [], plaintext: message.payload)
            try expect(sealed, message.ciphertext, "transport message \(index + 1)")
            let opened = fromInitiator ? try ri2r.decrypt(ad: [], ciphertext: sealed) : try r2i.decrypt(ad: [], ciphertext: sealed)
            try expect(opened, message.payload, "transport message \(index + 1) as read")
        }
    }
}
