import Crypto
import Feed
import MLS
import Mesh
import Nostr

/// Runs a feed vector file (feed.md 13) through `Sources/Feed`: every case of a kind this build
/// implements is one passed or failed case; the kinds it does not implement yet (post-quantum
/// keys, mesh sync, the relay carrier) are counted as skipped, never as passed.
public enum FeedConformance {
    public static func run(json: [UInt8]) -> ConformanceReport {
        var report = ConformanceReport()
        let root: JSONValue
        do { root = try JSONValue.parse(json) } catch {
            report.record("feed file", .failure(CaseFailure("not JSON: \(error)")))
            return report
        }
        guard root["format"]?.stringValue == "burrow-feed-v1-vectors", let cases = root["cases"]?.arrayValue else {
            report.record("feed file", .failure(CaseFailure("not a burrow-feed-v1-vectors file")))
            return report
        }
        for entry in cases {
            let kind = entry["kind"]?.stringValue ?? "?"
            let name = "\(kind)/\(entry["name"]?.stringValue ?? "?")"
            guard let runner = runners[kind] else {
                report.skipped += 1
                continue
            }
            report.record(name, Result { try runner(entry) })
        }
        return report
    }

    static let runners: [String: @Sendable (JSONValue) throws -> Void] = [
        "canonical_json": canonicalJSON, "envelope": envelope, "content": content, "chain": chain,
        "envelope_reject": envelopeReject, "content_reject": contentReject,
        "self": sealSelf, "contacts": sealContacts, "group": sealGroup, "open": open,
        "mlkem_keygen": mlkemKeygen, "mlkem_encaps": mlkemEncaps, "mlkem_decaps": mlkemDecaps, "pq_bundle": pqBundle,
        "bundle_reject": bundleReject, "contacts_key": contactsKey, "exchange": exchange, "feed_keys_reject": feedKeysReject,
        "frame": frame, "frame_reject": frameReject, "presence": presence, "link": link, "link_reject": linkReject,
        "nostr_event": nostrEvent, "event_reject": eventReject, "chunk_reject": chunkReject, "session": session,
        "mesh_packet": meshPacket,
    ]

    // MARK: Fields

    static func string(_ entry: JSONValue?, _ key: String) throws -> String {
        guard let value = entry?[key]?.stringValue else { throw CaseFailure("field \(key) missing or not a string") }
        return value
    }

    static func hex(_ entry: JSONValue?, _ key: String) throws -> [UInt8] {
        guard let bytes = try? Hex.decode(string(entry, key)) else { throw CaseFailure("field \(key) is not hex") }
        return bytes
    }

    static func b64(_ text: String) throws -> [UInt8] {
        guard let bytes = Base64URL.decode(text) else { throw CaseFailure("not base64url: \(text.prefix(20))") }
        return bytes
    }

    /// A text field or its `_hex` twin, as bytes.
    static func bytes(_ entry: JSONValue, _ key: String) throws -> [UInt8] {
        if let text = entry[key]?.stringValue { return Array(text.utf8) }
        return try hex(entry, key + "_hex")
    }

    static func check<T: Equatable>(_ what: String, _ actual: T, _ expected: T) throws {
        guard actual == expected else { throw CaseFailure("\(what) differs") }
    }

    static func expectedError(_ entry: JSONValue) -> String? { entry["expect"]?["error"]?.stringValue }

    static func identity(_ entry: JSONValue) throws -> Curve25519.Signing.PrivateKey {
        try Curve25519.Signing.PrivateKey(rawRepresentation: hex(entry, "identity_seed"))
    }

    /// The envelope's binding members from a vector's `fields`.
    static func fields(_ entry: JSONValue) throws -> (audience: String, feedID: [UInt8], previous: [UInt8]?, sequence: UInt32,
                                                              timestamp: Int64, type: String) {
        guard let f = entry["fields"], let sequence = f["sequence"]?.integerValue, let timestamp = f["timestamp"]?.integerValue else {
            throw CaseFailure("fields missing")
        }
        let previous = try f["previous"]?.stringValue.map(b64)
        return (try string(f, "audience"), try b64(string(f, "feed_id")), previous, UInt32(clamping: sequence), timestamp, try string(f, "type"))
    }

    static func binding(_ entry: JSONValue) throws -> [UInt8] {
        guard let f = entry["fields"]?.objectValue else { throw CaseFailure("fields missing") }
        let members: [FeedJSONMember] = try f.map { member in
            switch member.value {
            case .string(let s): return FeedJSONMember(member.key, .string(s))
            case .integer(let i): return FeedJSONMember(member.key, .integer(i))
            case .null: return FeedJSONMember(member.key, .null)
            default: throw CaseFailure("unexpected field type")
            }
        }
        return try CanonicalJSON.serialize(.object(members))
    }

    // MARK: envelopes.json

    static func canonicalJSON(_ entry: JSONValue) throws {
        let input = try bytes(entry, "input")
        do {
            let value = try CanonicalJSON.parse(input)
            let canonical = try CanonicalJSON.serialize(value)
            if let error = expectedError(entry) { throw CaseFailure("accepted; expected \(error)") }
            try check("canonical form", canonical, Array(try string(entry["expect"], "canonical").utf8))
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    static func envelope(_ entry: JSONValue) throws {
        let key = try identity(entry)
        let expect = entry["expect"]
        let identityKey = Array(key.publicKey.rawRepresentation)
        try check("identity key", identityKey, try hex(expect, "identity_key"))
        try check("feed id", Base64URL.encode(FeedKeys.feedID(identityKey: identityKey)), try string(expect, "feed_id"))
        let f = try fields(entry)
        let made = try Envelope.sign(audience: f.audience, contentEncoded: try b64(string(entry, "content_enc")), feedID: f.feedID,
                                     previous: f.previous, sequence: f.sequence, timestamp: f.timestamp, type: f.type, identity: key)
        try check("envelope", made.bytes, Array(try string(expect, "envelope").utf8))
        try check("message id", Base64URL.encode(made.messageID), try string(expect, "message_id"))
        try check("message id hex", made.messageID, try hex(expect, "message_id_hex"))
        try check("binding", made.binding, Array(try string(expect, "binding").utf8))
        let unsigned = Array(try string(expect, "unsigned").utf8)
        try check("signing input", UnverifiedEnvelope.domain + unsigned, try hex(expect, "signing_input"))
        try check("signature", Base64URL.encode(made.fields.signature), try string(expect, "signature"))
        // And the published bytes verify as received.
        _ = try UnverifiedEnvelope.decode(made.bytes, origin: f.audience == "self" ? .journal : .peer).verify(identityKey: identityKey)
    }

    static func content(_ entry: JSONValue) throws {
        let value = try bytes(entry, "content")
        do {
            _ = try FeedContent.validate(value, type: try string(entry, "type"), authorIdentityKey: try hex(entry, "author_identity_key"))
            if let error = expectedError(entry) { throw CaseFailure("accepted; expected \(error)") }
            try check("canonical content", value, Array(try string(entry["expect"], "canonical").utf8))
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    static func contentReject(_ entry: JSONValue) throws { try content(entry) }

    static func envelopeReject(_ entry: JSONValue) throws {
        let input = try bytes(entry, "envelope")
        let origin: EnvelopeOrigin = entry["journal"]?.boolValue == true ? .journal : .peer
        do {
            _ = try UnverifiedEnvelope.decode(input, origin: origin).verify(identityKey: try hex(entry, "identity_key"))
            throw CaseFailure("accepted; expected \(expectedError(entry) ?? "?")")
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    static func reader(_ value: JSONValue?) throws -> FeedReader? {
        guard let value, value.objectValue != nil else { return nil }
        var pairKeys: [[UInt8]: [[UInt8]]] = [:]
        for member in value["pair_keys"]?.objectValue ?? [] {
            pairKeys[try b64(member.key)] = try (member.value.arrayValue ?? []).map { item in
                guard let text = item.stringValue, let key = try? Hex.decode(text) else { throw CaseFailure("pair key") }
                return key
            }
        }
        var groups: [String: [UInt64: [UInt8]]] = [:]
        for member in value["groups"]?.objectValue ?? [] {
            var epochs: [UInt64: [UInt8]] = [:]
            for epoch in member.value.objectValue ?? [] {
                guard let number = UInt64(epoch.key), let text = epoch.value.stringValue, let secret = try? Hex.decode(text) else {
                    throw CaseFailure("group secret")
                }
                epochs[number] = secret
            }
            groups[member.key] = epochs
        }
        return FeedReader(feedID: try b64(string(value, "reader_feed_id")), journalKey: try hex(value, "journal_key"),
                          pairKeys: pairKeys, groupSecrets: groups)
    }

    static func chain(_ entry: JSONValue) throws {
        let journal = entry["journal"]?.boolValue == true
        let maximum = entry["max_per_feed"]?.integerValue.map { Int($0) } ?? FeedChain.defaultMaximumPerFeed
        var store = FeedChain(identityKey: try hex(entry, "identity_key"), maximumPerFeed: journal ? nil : maximum,
                              origin: journal ? .journal : .peer, reader: try reader(entry["reader"]))
        for (index, step) in (entry["steps"]?.arrayValue ?? []).enumerated() {
            let outcome = store.receive(try bytes(step, "envelope"))
            let expect = step["expect"]
            switch outcome.result {
            case .success(let status): try check("step \(index) status", status.rawValue, expect?["status"]?.stringValue ?? "error")
            case .failure(let error): try check("step \(index) error", error.rawValue, expect?["error"]?.stringValue ?? "none")
            }
            let released = try (expect?["released"]?.arrayValue ?? []).map { item -> String in
                guard let seq = item["seq"]?.integerValue else { throw CaseFailure("released seq") }
                return "\(seq):" + (item["status"]?.stringValue ?? item["error"]?.stringValue ?? "?")
            }
            let ours = outcome.released.map { release -> String in
                switch release.result {
                case .success(let status): return "\(release.sequence):\(status.rawValue)"
                case .failure(let error): return "\(release.sequence):\(error.rawValue)"
                }
            }
            try check("step \(index) released", ours, released)
        }
        guard let final = entry["final"] else { throw CaseFailure("final missing") }
        let accepted = final["accepted"]?.arrayValue?.compactMap(\.integerValue)
        try check("accepted range", store.range.map { [Int64($0.lowerBound), Int64($0.upperBound)] }, accepted)
        try check("held", store.held.map { Int64($0) }, final["held"]?.arrayValue?.compactMap(\.integerValue) ?? [])
        try check("head", store.head.map { Base64URL.encode($0) }, final["head"]?.stringValue)
        for member in final["contents"]?.objectValue ?? [] {
            guard let sequence = UInt32(member.key), let status = store.entries[sequence]?.content else {
                throw CaseFailure("no content for \(member.key)")
            }
            try check("content \(member.key) status", status.name, member.value["status"]?.stringValue ?? "?")
            if case .ok(let canonical) = status {
                try check("content \(member.key)", canonical, Array(try string(member.value, "content").utf8))
            }
        }
    }

    // MARK: audiences.json

    static func sealSelf(_ entry: JSONValue) throws {
        let expect = entry["expect"]
        let journalKey = FeedKeys.journalKey(identitySeed: try hex(entry, "identity_seed"))
        try check("journal key", journalKey, try hex(expect, "journal_key"))
        let binding = try binding(entry)
        try check("binding", binding, Array(try string(expect, "binding").utf8))
        let blob = try FeedAudience.sealSelf(Array(try string(entry, "content").utf8), journalKey: journalKey, salt: try hex(entry, "salt"),
                                             binding: binding)
        try check("blob", blob, try hex(expect, "blob"))
        try check("content_enc", Base64URL.encode(blob), try string(expect, "content_enc"))
    }

    static func sealContacts(_ entry: JSONValue) throws {
        let expect = entry["expect"]
        let binding = try binding(entry)
        try check("binding", binding, Array(try string(expect, "binding").utf8))
        let recipients = try (entry["recipients"]?.arrayValue ?? []).map { r in (feedID: try b64(string(r, "feed_id")), key: try hex(r, "key")) }
        let blob = try FeedAudience.sealContacts(Array(try string(entry, "content").utf8), author: try b64(string(entry, "author_feed_id")),
                                                 recipients: recipients, salt: try hex(entry, "salt"), cek: try hex(entry, "cek"), binding: binding)
        try check("blob", blob, try hex(expect, "blob"))
        try check("content_enc", Base64URL.encode(blob), try string(expect, "content_enc"))
    }

    static func sealGroup(_ entry: JSONValue) throws {
        let expect = entry["expect"]
        let suite = try CipherSuiteProvider(CipherSuite(0x0001))
        let exporter = Secret(try hex(entry, "exporter_secret"))
        let feedSecret = try suite.expandWithLabel(suite.deriveSecret(exporter, label: FeedKeys.exporterLabel), label: "exported",
                                                   context: suite.hash(FeedKeys.exporterContext), length: 32).unsafeBytes
        try check("feed secret", feedSecret, try hex(expect, "feed_secret"))
        try check("audience", FeedKeys.groupAudience(mlsGroupID: try hex(entry, "mls_group_id")), try string(expect, "audience"))
        let binding = try binding(entry)
        try check("binding", binding, Array(try string(expect, "binding").utf8))
        guard let epoch = entry["epoch"]?.integerValue, epoch >= 0 else { throw CaseFailure("epoch") }
        let blob = try FeedAudience.sealGroup(Array(try string(entry, "content").utf8), feedSecret: feedSecret, epoch: UInt64(epoch),
                                              salt: try hex(entry, "salt"), binding: binding)
        try check("blob", blob, try hex(expect, "blob"))
        try check("content_enc", Base64URL.encode(blob), try string(expect, "content_enc"))
    }

    static func open(_ entry: JSONValue) throws {
        guard let reader = try reader(entry["reader"]) else { throw CaseFailure("reader missing") }
        let author = try hex(entry, "author_identity_key")
        let envelope = try UnverifiedEnvelope.decode(try bytes(entry, "envelope")).verify(identityKey: author)
        let status = reader.open(envelope, authorIdentityKey: author)
        if case .ok(let canonical) = status {
            try check("content", canonical, Array(try string(entry["expect"], "content").utf8))
        } else {
            try check("error", status.name, expectedError(entry) ?? "none")
        }
    }
}
