import CSodium
import Crypto
import Foundation
import Nostr

/// NIP-44 v2 decryption under a fixed conversation key. The first byte picks what the rest is:
///
/// - 0: the payload text itself (base64 and length rules, version, MAC);
/// - 1: the decoded payload bytes, base64-encoded here (version, lengths, MAC);
/// - 2: nonce ‖ ciphertext, with a valid MAC computed here (ChaCha20, padding, UTF-8 checks on
///   keystream-random plaintext);
/// - 3: nonce ‖ padded plaintext, encrypted and MACed here, so the fuzzer controls the length
///   prefix and padding that decryption checks.
///
/// Properties (the NIP's `decrypt` and `unpad`, re-implemented here from its pseudocode, as
/// the oracle): a payload that decrypts yields exactly the plaintext the oracle reads from its
/// bytes; in modes 2 and 3, where this code builds well-formed payloads, decryption succeeds
/// exactly when the oracle says the padded plaintext is valid; any UTF-8 text of allowed
/// length encrypts and decrypts back to itself. (Padding bytes are not required to be zero,
/// as in the NIP, so a payload is not necessarily the one `encrypt` would make.)
public enum NIP44Target: FuzzTarget {
    public static let name = "nip44"

    /// A fixed key: the fuzzer attacks the payload format, not key agreement.
    static let keyBytes: [UInt8] = (0..<32).map { UInt8(truncatingIfNeeded: 0xA5 &+ $0 &* 7) }
    static let conversationKey: NIP44.ConversationKey? = try? NIP44.ConversationKey(bytes: keyBytes)
    static let sodiumReady: Bool = sodium_init() >= 0

    public static func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        guard let key = conversationKey, sodiumReady else { throw PropertyViolation(name, "fixed conversation key unusable") }
        guard let mode = bytes.first else { return .rejected("empty") }
        let rest = Array(bytes.dropFirst())
        switch mode % 4 {
        case 0:
            let payload = String(decoding: rest, as: UTF8.self)
            let outcome = try decrypt(payload, key, wellFormed: false)
            try checkEncryptRoundTrip(payload, key)
            return outcome
        case 1:
            return try decrypt(Data(rest).base64EncodedString(), key, wellFormed: false)
        case 2:
            guard rest.count >= 32 else { return .rejected("nonce") }
            return try decrypt(try payload(nonce: Array(rest[0..<32]), ciphertext: Array(rest[32...]), key), key, wellFormed: true)
        default:
            guard rest.count >= 32 else { return .rejected("nonce") }
            let nonce = Array(rest[0..<32])
            let ciphertext = chacha20(Array(rest[32...]), try messageKeys(key, nonce))
            return try decrypt(try payload(nonce: nonce, ciphertext: ciphertext, key), key, wellFormed: true)
        }
    }

    /// Decrypts and compares with the oracle. `wellFormed`: standard base64 of version 2, a
    /// nonce and a valid MAC, built here, so the oracle also predicts failure.
    static func decrypt(_ payload: String, _ key: NIP44.ConversationKey, wellFormed: Bool) throws -> FuzzOutcome {
        let actual = try? NIP44.decrypt(payload: payload, conversationKey: key)
        guard actual != nil || wellFormed else { return .rejected("decrypt") }
        guard let data = Data(base64Encoded: payload), data.count >= 65, data[data.startIndex] == NIP44.version else {
            if actual == nil { return .rejected("decrypt") }
            throw PropertyViolation(name, "a payload that decrypts is not base64 of version 2, nonce and MAC")
        }
        let bytes = Array(data)
        let nonce = Array(bytes[1..<33]), ciphertext = Array(bytes[33..<(bytes.count - 32)])
        let expected = expectedPlaintext(chacha20(ciphertext, try messageKeys(key, nonce)), payloadLength: bytes.count)
        guard actual == expected else {
            throw PropertyViolation(name, "decryption \(actual == nil ? "failed" : "succeeded") on a \(bytes.count)-byte payload "
                                    + "whose plaintext the NIP says is \(expected == nil ? "invalid" : "valid")"
                                    + (actual != nil && expected != nil ? " and different" : ""))
        }
        return actual == nil ? .rejected("padding") : .accepted("plaintext")
    }

    static func checkEncryptRoundTrip(_ text: String, _ key: NIP44.ConversationKey) throws {
        let length = text.utf8.count
        guard length >= NIP44.minPlaintextLength, length <= NIP44.maxPlaintextLength else { return }
        let nonce = Array(SHA256.hash(data: Array(text.utf8)))
        guard let payload = try? NIP44.encrypt(plaintext: text, conversationKey: key, nonce: nonce),
              (try? NIP44.decrypt(payload: payload, conversationKey: key)) == text
        else { throw PropertyViolation(name, "a \(length)-byte plaintext does not encrypt and decrypt back to itself") }
    }

    // MARK: Building payloads (library primitives only)

    static func messageKeys(_ key: NIP44.ConversationKey, _ nonce: [UInt8]) throws -> NIP44.MessageKeys {
        do { return try NIP44.messageKeys(conversationKey: key, nonce: nonce) } catch {
            throw PropertyViolation(name, "message keys for a 32-byte nonce failed")
        }
    }

    static func payload(nonce: [UInt8], ciphertext: [UInt8], _ key: NIP44.ConversationKey) throws -> String {
        let keys = try messageKeys(key, nonce)
        var mac = HMAC<SHA256>(key: SymmetricKey(data: keys.hmacKey))
        mac.update(data: nonce)
        mac.update(data: ciphertext)
        return Data([NIP44.version] + nonce + ciphertext + Array(mac.finalize())).base64EncodedString()
    }

    static func chacha20(_ input: [UInt8], _ keys: NIP44.MessageKeys) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: input.count)
        _ = crypto_stream_chacha20_ietf_xor(&output, input, UInt64(input.count), keys.chachaNonce, keys.chachaKey)
        return output
    }

    /// NIP-44's `unpad` and the payload size limits, written from the NIP's pseudocode.
    static func expectedPlaintext(_ padded: [UInt8], payloadLength: Int) -> String? {
        // Decoded payload = version ‖ nonce ‖ ciphertext ‖ mac must be 99…65603 bytes.
        guard payloadLength >= 99, payloadLength <= 65_603, padded.count >= 2 else { return nil }
        let length = Int(padded[0]) << 8 | Int(padded[1])
        guard length >= 1, padded.count == 2 + nipPaddedLength(length) else { return nil }
        return String(validating: padded[2..<(2 + length)], as: UTF8.self)
    }

    /// `calc_padded_len` from NIP-44.
    static func nipPaddedLength(_ length: Int) -> Int {
        if length <= 32 { return 32 }
        var nextPower = 1
        while nextPower < length { nextPower <<= 1 }  // 1 << (floor(log2(length - 1)) + 1)
        let chunk = nextPower <= 256 ? 32 : nextPower / 8
        return chunk * ((length - 1) / chunk + 1)
    }
}
