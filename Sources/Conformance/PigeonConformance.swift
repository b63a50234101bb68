import Foundation
import Nostr
import Pigeon

/// Runs the Pigeon DM vectors (`vectors/pigeon/*.json`, Docs/protocols/pigeon-dm.md section 11) through
/// Burrow's `Pigeon` module. Every case of a file is one case of the report: `card`,
/// `safety_number`, `card_reject`, `card_accept`, `script` and `nostr`. A script case passes
/// only if every step gives exactly the expected bytes, flags and refusals, a refusal leaves
/// the state (and the key source) unchanged, and every state survives its byte encoding.
public enum PigeonConformance {
    public static let format = "burrow-pigeon-v1-vectors"

    public static func run(json: [UInt8]) -> ConformanceReport {
        var report = ConformanceReport()
        let root: JSONValue
        do {
            root = try JSONValue.parse(json)
        } catch {
            report.record("pigeon file", .failure(CaseFailure("not JSON: \(error)")))
            return report
        }
        guard root["format"]?.stringValue == format, let cases = root["cases"]?.arrayValue else {
            report.record("pigeon file", .failure(CaseFailure("not a \(format) file with cases")))
            return report
        }
        for (i, entry) in cases.enumerated() {
            let kind = entry["kind"]?.stringValue ?? "?"
            let name = "\(kind)[\(i)] \(entry["name"]?.stringValue ?? "")"
            report.record(name, Result { try runCase(kind, entry) })
        }
        return report
    }

    static func runCase(_ kind: String, _ entry: JSONValue) throws {
        switch kind {
        case "card": try cardCase(entry)
        case "safety_number": try safetyNumberCase(entry)
        case "card_reject": try cardRejectCase(entry)
        case "card_accept": try cardAcceptCase(entry)
        case "script":
            var script = try PigeonScript(entry)
            try script.run()
        case "nostr": try nostrCase(entry)
        default: throw CaseFailure("unknown case kind \(kind)")
        }
    }

    // MARK: Cards

    static func cardCase(_ entry: JSONValue) throws {
        let expect = try field(entry, "expect")
        let identity = try Ed25519PrivateKey(seed: hex(entry, "identity_seed", 32))
        let staticKey = try X25519PrivateKey(bytes: hex(entry, "static_private", 32))
        let nostr = Keys(secretKey: try SecretKey(bytes: hex(entry, "nostr_secret", 32)))
        let relays = try (field(entry, "relays").arrayValue ?? []).map { value -> String in
            guard let s = value.stringValue else { throw CaseFailure("relays: not strings") }
            return s
        }
        guard identity.publicKey.bytes == (try hex(expect, "identity_key")) else { throw CaseFailure("identity_key differs") }
        guard staticKey.publicKey.bytes == (try hex(expect, "static_key")) else { throw CaseFailure("static_key differs") }
        guard nostr.publicKey.bytes == (try hex(expect, "nostr_key")) else { throw CaseFailure("nostr_key differs") }
        let card = try ContactCard.issue(
            identity: identity, staticKey: staticKey.publicKey, nostr: nostr, auxRand: hex(entry, "bip340_aux", 32),
            createdAt: UInt64(try integer(entry, "created_at")), nickname: string(entry, "nickname"), relays: relays)
        let bundle = try IdentityBundle(identity: identity, staticKey: staticKey.publicKey)
        guard IdentityBundle.message(identity: bundle.identityKey, staticKey: bundle.staticKey) == (try hex(expect, "bundle_message")) else { throw CaseFailure("bundle_message differs") }
        guard bundle.bytes == (try hex(expect, "bundle")) else { throw CaseFailure("bundle differs") }
        guard ContactCard.linkDigest(identity: card.identityKey, nostrKey: card.nostrKey) == (try hex(expect, "nostr_link_digest")) else { throw CaseFailure("nostr_link_digest differs") }
        guard card.nostrLink == (try hex(expect, "nostr_sig")) else { throw CaseFailure("nostr_sig differs") }
        guard card.signature == (try hex(expect, "card_sig")) else { throw CaseFailure("card_sig differs") }
        guard card.bytes == (try hex(expect, "card")) else { throw CaseFailure("card differs") }
        guard card.bytes.count == (try integer(expect, "card_length")) else { throw CaseFailure("card_length differs") }
        guard card.text == (try string(expect, "card_text")) else { throw CaseFailure("card_text differs") }
        let decoded = try ContactCard(text: string(expect, "card_text"))
        guard decoded == card, decoded.nickname == (try string(entry, "nickname")), decoded.relays == relays else {
            throw CaseFailure("decoded card differs")
        }
    }

    static func safetyNumberCase(_ entry: JSONValue) throws {
        let expect = try field(entry, "expect")
        func party(_ name: String) throws -> (identity: Ed25519PublicKey, nostrKey: [UInt8]) {
            let p = try field(entry, name)
            return (try Ed25519PublicKey(bytes: hex(p, "identity_key", 32)), try hex(p, "nostr_key", 32))
        }
        let a = try party("a"), b = try party("b")
        guard SafetyNumber.fingerprint(identity: a.identity, nostrKey: a.nostrKey) == (try string(expect, "fingerprint_a")) else {
            throw CaseFailure("fingerprint_a differs")
        }
        guard SafetyNumber.fingerprint(identity: b.identity, nostrKey: b.nostrKey) == (try string(expect, "fingerprint_b")) else {
            throw CaseFailure("fingerprint_b differs")
        }
        let expected = try string(expect, "safety_number")
        guard SafetyNumber(a, b).grouped == expected, SafetyNumber(b, a).grouped == expected else {
            throw CaseFailure("safety_number differs")
        }
        guard SafetyNumber(a, b).matches(expected) else { throw CaseFailure("safety number does not match its own text") }
    }

    static func cardRejectCase(_ entry: JSONValue) throws {
        let code = try string(field(entry, "expect"), "error")
        do {
            _ = try ContactCard(text: string(entry, "card_text"))
        } catch let error as PigeonError {
            guard error.code == code else { throw CaseFailure("refused with \(error.code), expected \(code)") }
            return
        }
        throw CaseFailure("accepted, expected \(code)")
    }

    static func cardAcceptCase(_ entry: JSONValue) throws {
        let card = try ContactCard(text: string(entry, "card_text"))
        guard card.bytes == (try hex(field(entry, "expect"), "card")) else { throw CaseFailure("card differs") }
    }

    // MARK: Transport

    static func nostrCase(_ entry: JSONValue) throws {
        let expect = try field(entry, "expect")
        let recipient = Keys(secretKey: try SecretKey(bytes: hex(entry, "recipient_secret", 32)))
        let wrap = try UnverifiedEvent(jsonValue: field(entry, "gift_wrap")).verified()
        let gift = try GiftWrap.unwrap(wrap, recipient: recipient)
        guard gift.sender.bytes == (try hex(expect, "sender")) else { throw CaseFailure("sender differs") }
        guard gift.rumor.kind == (try integer(expect, "rumor_kind")) else { throw CaseFailure("rumor kind differs") }
        guard gift.rumor.content == (try string(expect, "rumor_content")) else { throw CaseFailure("rumor content differs") }
        let frame = try NostrCarrier.frame(from: gift.rumor)
        guard frame == (try hex(expect, "frame")) else { throw CaseFailure("frame differs") }
        // The same rumor with content that is not base64 is bad_frame.
        let broken = try Rumor(pubkey: gift.rumor.pubkey, createdAt: gift.rumor.createdAt, kind: gift.rumor.kind,
                               content: "!" + gift.rumor.content.dropFirst())
        do {
            _ = try NostrCarrier.frame(from: broken)
            throw CaseFailure("non-base64 content accepted")
        } catch let error as PigeonError {
            guard error == .badFrame else { throw CaseFailure("non-base64 content refused with \(error.code)") }
        }
    }

    // MARK: Field access

    static func field(_ entry: JSONValue?, _ key: String) throws -> JSONValue {
        guard let value = entry?[key] else { throw CaseFailure("field \(key) missing") }
        return value
    }

    static func string(_ entry: JSONValue?, _ key: String) throws -> String {
        guard let value = entry?[key]?.stringValue else { throw CaseFailure("field \(key) missing or not a string") }
        return value
    }

    static func integer(_ entry: JSONValue?, _ key: String) throws -> Int64 {
        guard let value = entry?[key]?.integerValue else { throw CaseFailure("field \(key) missing or not an integer") }
        return value
    }

    static func hex(_ entry: JSONValue?, _ key: String, _ length: Int? = nil) throws -> [UInt8] {
        guard let bytes = try? Hex.decode(string(entry, key), length: length) else {
            throw CaseFailure("field \(key) is not hex of the expected length")
        }
        return bytes
    }

    static func hexValue(_ value: JSONValue?, _ what: String) throws -> [UInt8] {
        guard let s = value?.stringValue, let bytes = try? Hex.decode(s) else { throw CaseFailure("\(what) is not hex") }
        return bytes
    }
}
