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

    private static let runners: [String: @Sendable (JSONValue) throws -> Void] = [
        "canonical_json": canonicalJSON, "envelope": envelope, "content": content, "chain": chain,
        "envelope_reject": envelopeReject, "content_reject": contentReject,
        "self": sealSelf, "contacts": sealContacts, "group": sealGroup, "open": open,
        "mlkem_keygen": mlkemKeygen, "mlkem_encaps": mlkemEncaps, "mlkem_decaps": mlkemDecaps, "pq_bundle": pqBundle,
        "bundle_reject": bundleReject, "contacts_key": contactsKey, "exchange": exchange, "feed_keys_reject": feedKeysReject,
        "frame": frame, "frame_reject": frameReject, "presence": presence, "link": link, "link_reject": linkReject,
        "nostr_event": nostrEvent, "event_reject": eventReject, "chunk_reject": chunkReject,
    ]

    // MARK: Fields

    private static func string(_ entry: JSONValue?, _ key: String) throws -> String {
        guard let value = entry?[key]?.stringValue else { throw CaseFailure("field \(key) missing or not a string") }
        return value
    }

    private static func hex(_ entry: JSONValue?, _ key: String) throws -> [UInt8] {
        guard let bytes = try? Hex.decode(string(entry, key)) else { throw CaseFailure("field \(key) is not hex") }
        return bytes
    }

    private static func b64(_ text: String) throws -> [UInt8] {
        guard let bytes = Base64URL.decode(text) else { throw CaseFailure("not base64url: \(text.prefix(20))") }
        return bytes
    }

    /// A text field or its `_hex` twin, as bytes.
    private static func bytes(_ entry: JSONValue, _ key: String) throws -> [UInt8] {
        if let text = entry[key]?.stringValue { return Array(text.utf8) }
        return try hex(entry, key + "_hex")
    }

    private static func check<T: Equatable>(_ what: String, _ actual: T, _ expected: T) throws {
        guard actual == expected else { throw CaseFailure("\(what) differs") }
    }

    private static func expectedError(_ entry: JSONValue) -> String? { entry["expect"]?["error"]?.stringValue }

    private static func identity(_ entry: JSONValue) throws -> Curve25519.Signing.PrivateKey {
        try Curve25519.Signing.PrivateKey(rawRepresentation: hex(entry, "identity_seed"))
    }

    /// The envelope's binding members from a vector's `fields`.
    private static func fields(_ entry: JSONValue) throws -> (audience: String, feedID: [UInt8], previous: [UInt8]?, sequence: UInt32,
                                                              timestamp: Int64, type: String) {
        guard let f = entry["fields"], let sequence = f["sequence"]?.integerValue, let timestamp = f["timestamp"]?.integerValue else {
            throw CaseFailure("fields missing")
        }
        let previous = try f["previous"]?.stringValue.map(b64)
        return (try string(f, "audience"), try b64(string(f, "feed_id")), previous, UInt32(clamping: sequence), timestamp, try string(f, "type"))
    }

    private static func binding(_ entry: JSONValue) throws -> [UInt8] {
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

    private static func canonicalJSON(_ entry: JSONValue) throws {
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

    private static func envelope(_ entry: JSONValue) throws {
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

    private static func content(_ entry: JSONValue) throws {
        let value = try bytes(entry, "content")
        do {
            _ = try FeedContent.validate(value, type: try string(entry, "type"), authorIdentityKey: try hex(entry, "author_identity_key"))
            if let error = expectedError(entry) { throw CaseFailure("accepted; expected \(error)") }
            try check("canonical content", value, Array(try string(entry["expect"], "canonical").utf8))
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    private static func contentReject(_ entry: JSONValue) throws { try content(entry) }

    private static func envelopeReject(_ entry: JSONValue) throws {
        let input = try bytes(entry, "envelope")
        let origin: EnvelopeOrigin = entry["journal"]?.boolValue == true ? .journal : .peer
        do {
            _ = try UnverifiedEnvelope.decode(input, origin: origin).verify(identityKey: try hex(entry, "identity_key"))
            throw CaseFailure("accepted; expected \(expectedError(entry) ?? "?")")
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    private static func reader(_ value: JSONValue?) throws -> FeedReader? {
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

    private static func chain(_ entry: JSONValue) throws {
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

    private static func sealSelf(_ entry: JSONValue) throws {
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

    private static func sealContacts(_ entry: JSONValue) throws {
        let expect = entry["expect"]
        let binding = try binding(entry)
        try check("binding", binding, Array(try string(expect, "binding").utf8))
        let recipients = try (entry["recipients"]?.arrayValue ?? []).map { r in (feedID: try b64(string(r, "feed_id")), key: try hex(r, "key")) }
        let blob = try FeedAudience.sealContacts(Array(try string(entry, "content").utf8), author: try b64(string(entry, "author_feed_id")),
                                                 recipients: recipients, salt: try hex(entry, "salt"), cek: try hex(entry, "cek"), binding: binding)
        try check("blob", blob, try hex(expect, "blob"))
        try check("content_enc", Base64URL.encode(blob), try string(expect, "content_enc"))
    }

    private static func sealGroup(_ entry: JSONValue) throws {
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

    private static func open(_ entry: JSONValue) throws {
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

    // MARK: pq.json

    private static func kem(_ entry: JSONValue) throws -> MLKEM768.PrivateKey {
        try MLKEM768.PrivateKey(seedRepresentation: hex(entry, "seed"), publicKey: nil)
    }

    /// swift-crypto derives the key pair from the seed; it does not expose the 2,400-byte
    /// expanded `dk`, so the encapsulation key and its hash are what is compared.
    private static func mlkemKeygen(_ entry: JSONValue) throws {
        let ek = Array(try kem(entry).publicKey.rawRepresentation)
        try check("ek", ek, try hex(entry["expect"], "ek"))
        try check("ek sha256", Array(SHA256.hash(data: ek)), try hex(entry["expect"], "ek_sha256"))
    }

    /// swift-crypto's encapsulation draws its own randomness (no `Encaps_internal(m)`), so the
    /// vector's ciphertext is checked by decapsulating it to the vector's shared secret.
    private static func mlkemEncaps(_ entry: JSONValue) throws {
        let ss = try kem(entry).decapsulate(try hex(entry["expect"], "ct")).withUnsafeBytes { Array($0) }
        try check("shared secret", ss, try hex(entry["expect"], "ss"))
    }

    private static func mlkemDecaps(_ entry: JSONValue) throws {
        let ss = try kem(entry).decapsulate(try hex(entry, "ct")).withUnsafeBytes { Array($0) }
        try check("shared secret", ss, try hex(entry["expect"], "ss"))
    }

    private static func pqBundle(_ entry: JSONValue) throws {
        let expect = entry["expect"]
        let seed = try hex(entry, "identity_seed")
        let identity = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        let staticKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: hex(entry, "static_private"))
        guard let createdText = entry["created_at"]?.stringValue ?? entry["created_at"]?.integerValue.map(String.init),
              let createdAt = UInt64(createdText) else { throw CaseFailure("created_at") }
        let (bundle, _) = try PQBundle.make(identity: identity, staticKey: Array(staticKey.publicKey.rawRepresentation), createdAt: createdAt,
                                            kemSeed: try hex(entry, "kem_seed"))
        try check("bundle", bundle.bytes, try hex(expect, "bundle"))
        try check("signed message", PQBundle.domain + bundle.bytes.prefix(1257), try hex(expect, "signed_message"))
        try check("bundle sha256", bundle.hash, try hex(expect, "bundle_sha256"))
        try check("presence key", FeedKeys.presenceKey(identitySeed: seed, createdAt: createdAt), try hex(expect, "presence_key"))
    }

    private static func bundleReject(_ entry: JSONValue) throws {
        do {
            _ = try PQBundle.decode(try hex(entry, "bundle"))
            throw CaseFailure("accepted; expected \(expectedError(entry) ?? "?")")
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    /// One party of a `contacts_key` case: its bundle, ML-KEM key and static key.
    private static func party(_ entry: JSONValue?) throws -> (bundle: PQBundle, kem: MLKEM768.PrivateKey,
                                                             staticKey: Curve25519.KeyAgreement.PrivateKey) {
        let identity = try Curve25519.Signing.PrivateKey(rawRepresentation: hex(entry, "identity_seed"))
        let staticKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: hex(entry, "static_private"))
        guard let createdText = entry?["created_at"]?.stringValue ?? entry?["created_at"]?.integerValue.map(String.init),
              let createdAt = UInt64(createdText) else { throw CaseFailure("created_at") }
        let (bundle, kem) = try PQBundle.make(identity: identity, staticKey: Array(staticKey.publicKey.rawRepresentation),
                                              createdAt: createdAt, kemSeed: try hex(entry, "kem_seed"))
        return (bundle, kem, staticKey)
    }

    private static func contactsKey(_ entry: JSONValue) throws {
        let expect = entry["expect"]
        let a = try party(entry["a"]), b = try party(entry["b"])
        try check("bundle a", a.bundle.bytes, try hex(expect, "bundle_a"))
        try check("bundle b", b.bundle.bytes, try hex(expect, "bundle_b"))
        let ctToA = try hex(entry, "ct_to_a"), ctToB = try hex(entry, "ct_to_b")
        let ssA = try a.kem.decapsulate(ctToA).withUnsafeBytes { Array($0) }
        let ssB = try b.kem.decapsulate(ctToB).withUnsafeBytes { Array($0) }
        try check("ss_a", ssA, try hex(expect, "ss_a"))
        try check("ss_b", ssB, try hex(expect, "ss_b"))
        let sideA = PairKey.Side(bundle: a.bundle, ciphertext: ctToA, sharedSecret: ssA)
        let sideB = PairKey.Side(bundle: b.bundle, ciphertext: ctToB, sharedSecret: ssB)
        let (x, ikm, info) = try PairKey.inputs(staticPrivate: a.staticKey, mine: sideA, theirs: sideB)
        try check("x25519", x, try hex(expect, "x25519"))
        try check("ikm", ikm, try hex(expect, "ikm"))
        try check("info", info, try hex(expect, "info"))
        let fromA = try PairKey.derive(staticPrivate: a.staticKey, mine: sideA, theirs: sideB)
        let fromB = try PairKey.derive(staticPrivate: b.staticKey, mine: sideB, theirs: sideA)
        try check("key (a)", fromA, try hex(expect, "key"))
        try check("key (b)", fromB, try hex(expect, "key"))
    }

    /// The vectors' encapsulations, since swift-crypto has no `Encaps_internal(m)`: the
    /// ciphertext an expected body carries, opened with the target bundle's own ML-KEM key (the
    /// runner knows every party's seeds) for its shared secret. Every other byte of every body
    /// is then Burrow's own and compared whole.
    private final class VectorEncapsulator {
        var seeds: [[UInt8]: [UInt8]] = [:]
        var next: [UInt8]?

        func encapsulate(_ bundle: PQBundle) throws -> (ciphertext: [UInt8], sharedSecret: [UInt8]) {
            guard let ciphertext = next else { throw CaseFailure("an encapsulation the vector does not make") }
            guard let seed = seeds[bundle.hash] else { throw CaseFailure("no ML-KEM seed for the target bundle") }
            next = nil
            let shared = try MLKEM768.PrivateKey(seedRepresentation: seed, publicKey: nil).decapsulate(ciphertext).withUnsafeBytes { Array($0) }
            return (ciphertext, shared)
        }

        /// The ciphertext of an expected body with an encapsulation.
        func expect(_ body: [UInt8]?) {
            guard let body, body.count == FeedKeysBody.withEncapsulationCount else { return next = nil }
            next = Array(body[(FeedKeysBody.plainCount + 32)...])
        }
    }

    private static func exchangeParty(_ entry: JSONValue?) throws -> (exchange: FeedKeyExchange, identityKey: [UInt8]) {
        let seed = try hex(entry, "identity_seed")
        let identity = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        let staticKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: hex(entry, "static_private"))
        return (FeedKeyExchange(identitySeed: seed, staticKey: staticKey), Array(identity.publicKey.rawRepresentation))
    }

    private static func exchange(_ entry: JSONValue) throws {
        var parties = ["a": try exchangeParty(entry["a"]), "b": try exchangeParty(entry["b"])]
        let encapsulator = VectorEncapsulator()
        for (index, step) in (entry["steps"]?.arrayValue ?? []).enumerated() {
            let name = try string(step, "party")
            guard var party = parties[name], let peer = parties[name == "a" ? "b" : "a"] else { throw CaseFailure("party \(name)") }
            let expect = step["expect"]
            switch try string(step, "op") {
            case "rotate":
                guard let createdAt = step["created_at"]?.integerValue, createdAt >= 0 else { throw CaseFailure("created_at") }
                let seed = try hex(step, "kem_seed")
                let bundle = try party.exchange.rotate(createdAt: UInt64(createdAt), kemSeed: seed)
                encapsulator.seeds[bundle.hash] = seed
                try check("step \(index) bundle", bundle.bytes, try hex(expect, "bundle"))
            case "send", "resend":
                let expected = try hex(expect, "body")
                encapsulator.expect(expected)
                let body = try party.exchange.body(for: peer.identityKey, encapsulate: encapsulator.encapsulate)
                try check("step \(index) body", body.bytes, expected)
            case "deliver":
                let expected = expect?["reply"]?.stringValue.flatMap { try? Hex.decode($0) }
                encapsulator.expect(expected)
                do {
                    let reply = try party.exchange.receive(try hex(step, "body"), from: peer.identityKey, encapsulate: encapsulator.encapsulate)
                    if let error = expect?["error"]?.stringValue { throw CaseFailure("step \(index) accepted; expected \(error)") }
                    try check("step \(index) reply", reply?.bytes, expected)
                } catch let error as FeedError {
                    try check("step \(index) error", error.rawValue, expect?["error"]?.stringValue ?? "none")
                }
                let keys = party.exchange.pairKeys(with: peer.identityKey)
                try check("step \(index) pair key", keys.last.map { Hex.encode($0.key) }, expect?["pair_key"]?.stringValue)
                try check("step \(index) keys", Int64(keys.count), expect?["keys"]?.integerValue ?? -1)
            case "drop":
                break
            default:
                throw CaseFailure("unknown op")
            }
            parties[name] = party
        }
    }

    private static func feedKeysReject(_ entry: JSONValue) throws {
        var (receiver, _) = try exchangeParty(entry["receiver"])
        guard let createdText = entry["receiver"]?["created_at"]?.stringValue ?? entry["receiver"]?["created_at"]?.integerValue.map(String.init),
              let createdAt = UInt64(createdText) else { throw CaseFailure("created_at") }
        _ = try receiver.rotate(createdAt: createdAt, kemSeed: try hex(entry["receiver"], "kem_seed"))
        let peer = try hex(entry, "peer_identity_key")
        if let first = entry["first"]?.stringValue {
            guard let bytes = try? Hex.decode(first) else { throw CaseFailure("first") }
            _ = try receiver.receive(bytes, from: peer, encapsulate: FeedKeyExchange.encapsulateFresh)
        }
        do {
            _ = try receiver.receive(try hex(entry, "body"), from: peer, encapsulate: FeedKeyExchange.encapsulateFresh)
            throw CaseFailure("accepted; expected \(expectedError(entry) ?? "?")")
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    // MARK: sync.json (frames, presence, links)

    private static func frameType(_ entry: JSONValue) throws -> SyncFrameType {
        guard let raw = entry["type"]?.integerValue, let byte = UInt8(exactly: raw), let type = SyncFrameType(rawValue: byte) else {
            throw CaseFailure("type")
        }
        return type
    }

    private static func u32(_ entry: JSONValue, _ key: String) throws -> UInt32 {
        guard let value = entry[key]?.integerValue, let number = UInt32(exactly: value) else { throw CaseFailure(key) }
        return number
    }

    private static func frame(_ entry: JSONValue) throws {
        let type = try frameType(entry)
        let frames: [SyncFrame] = try (entry["frames"]?.arrayValue ?? []).map { f in
            switch type {
            case .request: return .request(feedID: try hex(f, "feed_id"), haveSequence: try u32(f, "have_seq"))
            case .range: return .range(feedID: try hex(f, "feed_id"), from: try u32(f, "from"), to: try u32(f, "to"))
            case .offer: return .offer(feedID: try hex(f, "feed_id"), haveSequence: try u32(f, "have_seq"),
                                       messageCount: try u32(f, "message_count"))
            case .chunk: return .chunk(messageID: try hex(f, "message_id"), envelope: Array(try string(f, "envelope").utf8))
            case .ack:
                guard let status = f["status"]?.integerValue else { throw CaseFailure("status") }
                return .ack(messageID: try hex(f, "message_id"), refused: status == 1)
            }
        }
        let payload = try SyncFrame.encode(frames, as: type)
        try check("payload", payload, try hex(entry["expect"], "payload"))
        try check("decoded", try SyncFrame.decode(payload, as: type), frames)
    }

    private static func frameReject(_ entry: JSONValue) throws {
        do {
            _ = try SyncFrame.decode(try hex(entry, "frames"), as: try frameType(entry))
            throw CaseFailure("accepted; expected \(expectedError(entry) ?? "?")")
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    private static func presence(_ entry: JSONValue) throws {
        let expect = entry["expect"]
        guard let createdAt = entry["created_at"]?.integerValue, createdAt >= 0, let caps = entry["caps"]?.integerValue,
              let capsValue = UInt16(exactly: caps) else { throw CaseFailure("created_at or caps") }
        let presenceKey = FeedKeys.presenceKey(identitySeed: try hex(entry, "identity_seed"), createdAt: UInt64(createdAt))
        try check("presence key", presenceKey, try hex(expect, "presence_key"))
        let tag = FeedPresence.tag(presenceKey: presenceKey, meshKey: try hex(entry, "mesh_key"))
        try check("tag", tag, try hex(expect, "tag"))
        let neighbours = try (entry["neighbours"]?.arrayValue ?? []).map { item -> MeshID in
            guard let text = item.stringValue, let bytes = try? Hex.decode(text), let id = MeshID(bytes: bytes) else { throw CaseFailure("neighbour") }
            return id
        }
        let announce = Announce(capabilities: Capabilities(rawValue: capsValue), neighbours: neighbours, presenceTag: tag)
        let payload = try announce.encoded()
        try check("announce payload", payload, try hex(expect, "announce_payload"))
        try check("announce decoded", try Announce.decode(payload), announce)
    }

    private static func linkPair(pairKey: [UInt8], own: [UInt8], peer: [UInt8], lastReceived: UInt64? = nil) -> FeedLink {
        FeedLink(pairKey: pairKey, ownMeshKey: own, peerMeshKey: peer, ownMeshID: MeshID(meshKey: own).bytes,
                 peerMeshID: MeshID(meshKey: peer).bytes, lastReceived: lastReceived)
    }

    private static func link(_ entry: JSONValue) throws {
        let expect = entry["expect"]
        let pairKey = try hex(entry, "pair_key")
        let a = try hex(entry, "mesh_key_a"), b = try hex(entry, "mesh_key_b")
        try check("mesh id a", MeshID(meshKey: a).bytes, try hex(expect, "mesh_id_a"))
        try check("mesh id b", MeshID(meshKey: b).bytes, try hex(expect, "mesh_id_b"))
        var links = ["a": linkPair(pairKey: pairKey, own: a, peer: b), "b": linkPair(pairKey: pairKey, own: b, peer: a)]
        try check("key a", links["a"]?.sendKey, try hex(expect, "key_a"))
        try check("key b", links["b"]?.sendKey, try hex(expect, "key_b"))
        for (index, item) in (expect?["sealed"]?.arrayValue ?? []).enumerated() {
            let sender = try string(item, "sender"), receiver = sender == "a" ? "b" : "a"
            guard var from = links[sender], var to = links[receiver], let counter = item["counter"]?.integerValue else { throw CaseFailure("sealed") }
            guard let raw = item["type"]?.integerValue, let byte = UInt8(exactly: raw), let type = SyncFrameType(rawValue: byte) else {
                throw CaseFailure("type")
            }
            try check("sealed \(index) counter", Int64(from.nextCounter), counter)
            let frames = try hex(item, "frames")
            let payload = try from.seal(frames, type: type)
            try check("sealed \(index) payload", payload, try hex(item, "payload"))
            try check("sealed \(index) opened", try to.open(payload, type: type), frames)
            links[sender] = from
            links[receiver] = to
        }
    }

    private static func linkReject(_ entry: JSONValue) throws {
        guard let last = entry["last_counter"]?.integerValue, last >= 0 else { throw CaseFailure("last_counter") }
        var receiver = linkPair(pairKey: try hex(entry, "pair_key"), own: try hex(entry, "mesh_key_receiver"),
                                peer: try hex(entry, "mesh_key_sender"), lastReceived: UInt64(last))
        do {
            _ = try receiver.open(try hex(entry, "payload"), type: try frameType(entry))
            throw CaseFailure("accepted; expected \(expectedError(entry) ?? "?")")
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    // MARK: The relay carrier and chunks

    /// `follows` (identity keys, hex) as feed id → identity key.
    private static func follows(_ entry: JSONValue) throws -> [[UInt8]: [UInt8]] {
        var out: [[UInt8]: [UInt8]] = [:]
        for item in entry["follows"]?.arrayValue ?? [] {
            guard let text = item.stringValue, let key = try? Hex.decode(text, length: 32) else { throw CaseFailure("follows") }
            out[FeedKeys.feedID(identityKey: key)] = key
        }
        return out
    }

    private static func nostrEvent(_ entry: JSONValue) throws {
        let follows = try follows(entry)
        let keys = Keys(secretKey: try SecretKey(bytes: hex(entry, "nostr_secret")))
        guard let createdAt = entry["created_at"]?.integerValue, let identityKey = follows.values.first else { throw CaseFailure("created_at") }
        let envelope = try UnverifiedEnvelope.decode(try bytes(entry, "envelope")).verify(identityKey: identityKey)
        let event = try FeedRelayCarrier.event(for: envelope, keys: keys, createdAt: createdAt, auxRand: try hex(entry, "aux"))
        guard let expected = entry["expect"]?["event"] else { throw CaseFailure("expect.event") }
        try check("id", event.id.hex, try string(expected, "id"))
        try check("pubkey", event.pubkey.hex, try string(expected, "pubkey"))
        try check("kind", Int64(event.kind), expected["kind"]?.integerValue ?? -1)
        try check("tags", event.tags, (expected["tags"]?.arrayValue ?? []).map { ($0.arrayValue ?? []).compactMap(\.stringValue) })
        try check("content", event.content, try string(expected, "content"))
        try check("sig", Hex.encode(event.sig), try string(expected, "sig"))
        let opened = try FeedRelayCarrier.open(event.jsonBytes, follows: follows)
        try check("message id", Base64URL.encode(opened.messageID), try string(entry["expect"], "message_id"))
    }

    private static func eventReject(_ entry: JSONValue) throws {
        guard let event = entry["event"] else { throw CaseFailure("event") }
        do {
            _ = try FeedRelayCarrier.open(event.jsonBytes, follows: try follows(entry))
            throw CaseFailure("accepted; expected \(expectedError(entry) ?? "?")")
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    private static func chunkReject(_ entry: JSONValue) throws {
        let follows = try follows(entry)
        let requested = Set(try (entry["requested"]?.arrayValue ?? []).map { try b64($0.stringValue ?? "") })
        var chains = follows.mapValues { FeedChain(identityKey: $0) }
        let messageID = try hex(entry, "message_id")
        let received = FeedChunkReceiver.receive(messageID: messageID, envelope: try bytes(entry, "envelope"), requested: requested,
                                                 chains: &chains)
        let expect = entry["expect"]
        switch received.result {
        case .success(let status): try check("status", status.rawValue, expect?["status"]?.stringValue ?? "error")
        case .failure(let error): try check("error", error.rawValue, expect?["error"]?.stringValue ?? "none")
        }
        try check("ack", SyncFrame.ack(messageID: messageID, refused: received.refused).bytes, try hex(expect, "ack"))
    }
}
