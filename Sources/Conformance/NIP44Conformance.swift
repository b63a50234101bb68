import Crypto
import Nostr

/// Runs the NIP-44 v2 vectors (paulmillr/nip44 `nip44.vectors.json`, pinned by sha256 in the
/// NIP) through Burrow's `NIP44`. Every entry of every group is one case, and each of the
/// message-key derivations under `valid.get_message_keys.keys` is one case: 128 in the published
/// file (96 list entries + 32 derivations). An entry that cannot be parsed counts as failed.
public enum NIP44Conformance {
    public static func run(json: [UInt8]) -> ConformanceReport {
        var report = ConformanceReport()
        let root: JSONValue
        do {
            root = try JSONValue.parse(json)
        } catch {
            report.record("nip44 file", .failure(CaseFailure("not JSON: \(error)")))
            return report
        }
        guard let v2 = root["v2"], let valid = v2["valid"], let invalid = v2["invalid"] else {
            report.record("nip44 file", .failure(CaseFailure("no v2.valid / v2.invalid groups")))
            return report
        }

        each(valid["get_conversation_key"], "valid.get_conversation_key", &report, conversationKeyCase)
        if let group = valid["get_message_keys"] {
            let keys = (group["keys"]?.arrayValue ?? []).map { Optional($0) }
            for (i, entry) in keys.enumerated() {
                report.record("valid.get_message_keys[\(i)]", Result { try messageKeysCase(group, entry) })
            }
            if keys.isEmpty {
                report.record("valid.get_message_keys", .failure(CaseFailure("no keys")))
            }
        } else {
            report.record("valid.get_message_keys", .failure(CaseFailure("group missing")))
        }
        each(valid["calc_padded_len"], "valid.calc_padded_len", &report, paddedLengthCase)
        each(valid["encrypt_decrypt"], "valid.encrypt_decrypt", &report, encryptDecryptCase)
        each(valid["encrypt_decrypt_long_msg"], "valid.encrypt_decrypt_long_msg", &report, longMessageCase)
        each(invalid["encrypt_msg_lengths"], "invalid.encrypt_msg_lengths", &report, invalidLengthCase)
        each(invalid["get_conversation_key"], "invalid.get_conversation_key", &report, invalidConversationKeyCase)
        each(invalid["decrypt"], "invalid.decrypt", &report, invalidDecryptCase)
        return report
    }

    private static func each(
        _ group: JSONValue?, _ name: String, _ report: inout ConformanceReport, _ body: (JSONValue) throws -> Void
    ) {
        guard let cases = group?.arrayValue else {
            report.record(name, .failure(CaseFailure("group missing or not an array")))
            return
        }
        for (i, entry) in cases.enumerated() {
            let note = entry["note"]?.stringValue.map { " (\($0))" } ?? ""
            report.record("\(name)[\(i)]\(note)", Result { try body(entry) })
        }
    }

    // MARK: Field access

    private static func string(_ entry: JSONValue?, _ key: String) throws -> String {
        guard let value = entry?[key]?.stringValue else { throw CaseFailure("field \(key) missing or not a string") }
        return value
    }

    private static func hex(_ entry: JSONValue?, _ key: String, length: Int? = nil) throws -> [UInt8] {
        guard let bytes = try? Hex.decode(string(entry, key), length: length) else {
            throw CaseFailure("field \(key) is not hex of the expected length")
        }
        return bytes
    }

    private static func integer(_ value: JSONValue?, _ what: String) throws -> Int {
        guard let i = value?.integerValue else { throw CaseFailure("\(what) is not an integer") }
        return Int(i)
    }

    private static func conversationKey(_ entry: JSONValue) throws -> NIP44.ConversationKey {
        try NIP44.ConversationKey(bytes: hex(entry, "conversation_key", length: 32))
    }

    // MARK: Cases

    private static func conversationKeyCase(_ entry: JSONValue) throws {
        let secret = try SecretKey(bytes: hex(entry, "sec1", length: 32))
        let publicKey = try PublicKey(bytes: hex(entry, "pub2", length: 32))
        let computed = try NIP44.conversationKey(secretKey: secret, publicKey: publicKey)
        guard computed == (try conversationKey(entry)) else { throw CaseFailure("conversation key differs") }
    }

    private static func messageKeysCase(_ group: JSONValue, _ entry: JSONValue?) throws {
        let keys = try NIP44.messageKeys(conversationKey: conversationKey(group), nonce: hex(entry, "nonce", length: 32))
        guard keys.chachaKey == (try hex(entry, "chacha_key")) else { throw CaseFailure("chacha_key differs") }
        guard keys.chachaNonce == (try hex(entry, "chacha_nonce")) else { throw CaseFailure("chacha_nonce differs") }
        guard keys.hmacKey == (try hex(entry, "hmac_key")) else { throw CaseFailure("hmac_key differs") }
    }

    private static func paddedLengthCase(_ entry: JSONValue) throws {
        guard let pair = entry.arrayValue, pair.count == 2 else { throw CaseFailure("expected [length, padded]") }
        let length = try integer(pair[0], "length"), expected = try integer(pair[1], "padded length")
        let computed = NIP44.calcPaddedLength(length)
        guard computed == expected else { throw CaseFailure("padded length \(computed), expected \(expected)") }
    }

    private static func encryptDecryptCase(_ entry: JSONValue) throws {
        let sec1 = try SecretKey(bytes: hex(entry, "sec1", length: 32))
        let sec2 = try SecretKey(bytes: hex(entry, "sec2", length: 32))
        let expectedKey = try conversationKey(entry)
        guard try NIP44.conversationKey(secretKey: sec1, publicKey: sec2.publicKey) == expectedKey,
              try NIP44.conversationKey(secretKey: sec2, publicKey: sec1.publicKey) == expectedKey
        else { throw CaseFailure("conversation key differs") }
        let plaintext = try string(entry, "plaintext"), payload = try string(entry, "payload")
        let encrypted = try NIP44.encrypt(plaintext: plaintext, conversationKey: expectedKey, nonce: hex(entry, "nonce", length: 32))
        guard encrypted == payload else { throw CaseFailure("payload differs") }
        guard try NIP44.decrypt(payload: payload, conversationKey: expectedKey) == plaintext else {
            throw CaseFailure("decrypted plaintext differs")
        }
    }

    private static func longMessageCase(_ entry: JSONValue) throws {
        let key = try conversationKey(entry)
        let plaintext = String(repeating: try string(entry, "pattern"), count: try integer(entry["repeat"], "repeat"))
        guard sha256Hex(Array(plaintext.utf8)) == (try string(entry, "plaintext_sha256")) else {
            throw CaseFailure("plaintext sha256 differs")
        }
        let payload = try NIP44.encrypt(plaintext: plaintext, conversationKey: key, nonce: hex(entry, "nonce", length: 32))
        guard sha256Hex(Array(payload.utf8)) == (try string(entry, "payload_sha256")) else {
            throw CaseFailure("payload sha256 differs")
        }
        guard try NIP44.decrypt(payload: payload, conversationKey: key) == plaintext else {
            throw CaseFailure("decrypted plaintext differs")
        }
    }

    private static func invalidLengthCase(_ entry: JSONValue) throws {
        let length = try integer(entry, "message length")
        guard let key = try? NIP44.ConversationKey(bytes: [UInt8](repeating: 1, count: 32)) else {
            throw CaseFailure("could not build a key")
        }
        let plaintext = String(repeating: "a", count: length)
        do {
            _ = try NIP44.encrypt(plaintext: plaintext, conversationKey: key, nonce: [UInt8](repeating: 2, count: 32))
        } catch NostrError.nip44PlaintextLength {
            return
        }
        throw CaseFailure("a \(length)-byte plaintext was accepted")
    }

    private static func invalidConversationKeyCase(_ entry: JSONValue) throws {
        let sec1 = try hex(entry, "sec1", length: 32), pub2 = try hex(entry, "pub2", length: 32)
        let derived = try? NIP44.conversationKey(secretKey: SecretKey(bytes: sec1), publicKey: PublicKey(bytes: pub2))
        guard derived == nil else { throw CaseFailure("an invalid key pair produced a conversation key") }
    }

    private static func invalidDecryptCase(_ entry: JSONValue) throws {
        let key = try conversationKey(entry), payload = try string(entry, "payload")
        do {
            _ = try NIP44.decrypt(payload: payload, conversationKey: key)
        } catch is NostrError {
            return
        }
        throw CaseFailure("an invalid payload decrypted")
    }

    private static func sha256Hex(_ bytes: [UInt8]) -> String { Hex.encode(Array(SHA256.hash(data: bytes))) }
}
