import Crypto
import Feed
import MLS
import Mesh
import Nostr

/// pq.json and the contacts keys of audiences.json: ML-KEM, bundles, pair keys, the feed-keys exchange.
extension FeedConformance {
    // MARK: pq.json

    static func kem(_ entry: JSONValue) throws -> MLKEM768.PrivateKey {
        try MLKEM768.PrivateKey(seedRepresentation: hex(entry, "seed"), publicKey: nil)
    }

    /// swift-crypto derives the key pair from the seed; it does not expose the 2,400-byte
    /// expanded `dk`, so the encapsulation key and its hash are what is compared.
    static func mlkemKeygen(_ entry: JSONValue) throws {
        let ek = Array(try kem(entry).publicKey.rawRepresentation)
        try check("ek", ek, try hex(entry["expect"], "ek"))
        try check("ek sha256", Array(SHA256.hash(data: ek)), try hex(entry["expect"], "ek_sha256"))
    }

    /// swift-crypto's encapsulation draws its own randomness (no `Encaps_internal(m)`), so the
    /// vector's ciphertext is checked by decapsulating it to the vector's shared secret.
    static func mlkemEncaps(_ entry: JSONValue) throws {
        let ss = try kem(entry).decapsulate(try hex(entry["expect"], "ct")).withUnsafeBytes { Array($0) }
        try check("shared secret", ss, try hex(entry["expect"], "ss"))
    }

    static func mlkemDecaps(_ entry: JSONValue) throws {
        let ss = try kem(entry).decapsulate(try hex(entry, "ct")).withUnsafeBytes { Array($0) }
        try check("shared secret", ss, try hex(entry["expect"], "ss"))
    }

    /// A party's bundle time (ms), written as a number or a decimal string.
    static func createdAt(_ entry: JSONValue?) throws -> UInt64 {
        guard let text = entry?["created_at"]?.stringValue ?? entry?["created_at"]?.integerValue.map(String.init),
              let createdAt = UInt64(text) else { throw CaseFailure("created_at") }
        return createdAt
    }

    static func pqBundle(_ entry: JSONValue) throws {
        let expect = entry["expect"]
        let bundle = try party(entry).bundle
        let createdAt = try createdAt(entry)
        let seed = try hex(entry, "identity_seed")
        try check("bundle", bundle.bytes, try hex(expect, "bundle"))
        try check("signed message", PQBundle.domain + bundle.bytes.prefix(1257), try hex(expect, "signed_message"))
        try check("bundle sha256", bundle.hash, try hex(expect, "bundle_sha256"))
        try check("presence key", FeedKeys.presenceKey(identitySeed: seed, createdAt: createdAt), try hex(expect, "presence_key"))
    }

    static func bundleReject(_ entry: JSONValue) throws {
        do {
            _ = try PQBundle.decode(try hex(entry, "bundle"))
            throw CaseFailure("accepted; expected \(expectedError(entry) ?? "?")")
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    /// A party of a `pq_bundle` or `contacts_key` case: its bundle, ML-KEM key and static key.
    static func party(_ entry: JSONValue?) throws -> (bundle: PQBundle, kem: MLKEM768.PrivateKey,
                                                             staticKey: Curve25519.KeyAgreement.PrivateKey) {
        let identity = try Curve25519.Signing.PrivateKey(rawRepresentation: hex(entry, "identity_seed"))
        let staticKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: hex(entry, "static_private"))
        let (bundle, kem) = try PQBundle.make(identity: identity, staticKey: Array(staticKey.publicKey.rawRepresentation),
                                              createdAt: try createdAt(entry), kemSeed: try hex(entry, "kem_seed"))
        return (bundle, kem, staticKey)
    }

    static func contactsKey(_ entry: JSONValue) throws {
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
    final class VectorEncapsulator {
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

    static func exchangeParty(_ entry: JSONValue?) throws -> (exchange: FeedKeyExchange, identityKey: [UInt8]) {
        let seed = try hex(entry, "identity_seed")
        let identity = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        let staticKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: hex(entry, "static_private"))
        return (FeedKeyExchange(identitySeed: seed, staticKey: staticKey), Array(identity.publicKey.rawRepresentation))
    }

    static func exchange(_ entry: JSONValue) throws {
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

    static func feedKeysReject(_ entry: JSONValue) throws {
        var (receiver, _) = try exchangeParty(entry["receiver"])
        _ = try receiver.rotate(createdAt: try createdAt(entry["receiver"]), kemSeed: try hex(entry["receiver"], "kem_seed"))
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
}
