import Crypto
import Feed
import Foundation

/// Feeds (issue 26), the sans-I/O core as it stands: envelope verification against raw Ed25519,
/// sealing a contacts entry for 50 contacts, a whole feed-keys exchange against the ML-KEM-768
/// and X25519 work it contains, and the link frames 1,000 chunks take at MTU 185.
struct FeedBench: BenchSection {
    let name = "feed"
    let title = "Feeds: envelope verification, a contacts entry for 50 contacts, the pair-key exchange, chunks on the air"

    func run(_ context: BenchContext) throws -> SectionReport {
        var table = MarkdownTable(headers: ["measure", "Burrow", "reference", "ratio", "goal"], rightAligned: [1, 2, 3])
        var report = SectionReport(table: table)
        var rng = SystemRandomNumberGenerator()
        let identity = Curve25519.Signing.PrivateKey()
        let identityKey = Array(identity.publicKey.rawRepresentation)
        let feedID = FeedKeys.feedID(identityKey: identityKey)
        let journal = FeedKeys.journalKey(identitySeed: Array(identity.rawRepresentation))

        // 1. Verifying an envelope (decode, canonical check, feed id, Ed25519) vs Ed25519 alone.
        let content = Array(#"{"body":"home by six","type":"post"}"#.utf8)
        let envelope = try Envelope.sign(audience: "contacts", contentEncoded: Array(repeating: 7, count: 200), feedID: feedID, previous: nil,
                                         sequence: 0, timestamp: 1_795_000_000, type: "post", identity: identity)
        let signingInput = UnverifiedEnvelope.domain + Array(envelope.bytes)
        let publicKey = identity.publicKey
        let rawSignature = try identity.signature(for: signingInput)
        let (rawRate, envelopeRate, ratio) = try context.measurePair({
            guard publicKey.isValidSignature(rawSignature, for: signingInput) else { throw BenchFailure.check("raw verify") }
        }, {
            _ = try UnverifiedEnvelope.decode(envelope.bytes).verify(identityKey: identityKey)
        })
        table.add(["envelope verify (decode + canonical + Ed25519), per second", Format.rate(envelopeRate), "raw Ed25519 verify: " + Format.rate(rawRate),
                   String(format: "%.2f×", ratio), "≥ 0.8×"])
        if ratio < 0.8 { report.problems.append("envelope verification is below 0.8× raw Ed25519 (\(String(format: "%.2f", ratio))×)") }

        // 2. A contacts entry for 50 contacts (and the author's own slot).
        let recipients = [(feedID, journal)] + (0..<50).map { _ in
            (Array(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }), Array(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }))
        }
        let binding = envelope.binding
        let sealRate = try context.measure {
            let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let cek = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = try FeedAudience.sealContacts(content, author: feedID, recipients: recipients, salt: salt, cek: cek, binding: binding)
        }
        let sealMicros = sealRate > 0 ? 1e6 / sealRate : 0
        table.add(["contacts entry for 50 contacts (51 slots), µs", String(format: "%.0f", sealMicros), "—", "—", "< 1,000"])
        if sealMicros >= 1000 { report.problems.append("a contacts entry for 50 contacts took \(Int(sealMicros)) µs") }

        // 3. A whole exchange (three bodies, both pair keys) vs its primitives alone.
        func party() throws -> FeedKeyExchange {
            let id = Curve25519.Signing.PrivateKey()
            var exchange = FeedKeyExchange(identitySeed: Array(id.rawRepresentation), staticKey: Curve25519.KeyAgreement.PrivateKey())
            _ = try exchange.rotate(createdAt: 1_795_000_000_000, kemSeed: (0..<64).map { _ in UInt8.random(in: 0...255, using: &rng) })
            return exchange
        }
        let a = try party(), b = try party()
        let aKey = try XCTUnwrapIdentity(a), bKey = try XCTUnwrapIdentity(b)
        let exchangeRate = try context.measure {
            var x = a, y = b
            let first = try x.body(for: bKey, encapsulate: FeedKeyExchange.encapsulateFresh)
            guard let reply = try y.receive(first.bytes, from: aKey, encapsulate: FeedKeyExchange.encapsulateFresh),
                  let back = try x.receive(reply.bytes, from: bKey, encapsulate: FeedKeyExchange.encapsulateFresh) else {
                throw BenchFailure.check("the exchange did not complete")
            }
            _ = try y.receive(back.bytes, from: aKey, encapsulate: FeedKeyExchange.encapsulateFresh)
            guard x.pairKeys(with: bKey).last?.key == y.pairKeys(with: aKey).last?.key else { throw BenchFailure.check("pair keys differ") }
        }
        let kem = try MLKEM768.PrivateKey(seedRepresentation: (0..<64).map { _ in UInt8.random(in: 0...255, using: &rng) }, publicKey: nil)
        let x1 = Curve25519.KeyAgreement.PrivateKey(), x2 = Curve25519.KeyAgreement.PrivateKey()
        let primitiveRate = try context.measure {
            for _ in 0..<2 {
                let result = try kem.publicKey.encapsulate()
                _ = try kem.decapsulate(result.encapsulated)
            }
            for _ in 0..<2 { _ = try x1.sharedSecretFromKeyAgreement(with: x2.publicKey) }
        }
        table.add(["pair-key exchange (3 bodies, both sides), per second", Format.rate(exchangeRate),
                   "2 × ML-KEM-768 encaps+decaps + 2 × X25519: " + Format.rate(primitiveRate), Format.ratio(exchangeRate, primitiveRate), "—"])

        // 4. 1,000 chunks of these envelopes at MTU 185: link frames and bytes on the air (8.1).
        let mtu = 185
        var frames = 0, airBytes = 0
        for _ in 0..<1000 {
            let payload = 24 + 36 + envelope.bytes.count
            let packet = 126 + payload
            let count = packet <= mtu ? 1 : (packet + (mtu - 15) - 1) / (mtu - 15)
            frames += count
            airBytes += packet + (count > 1 ? count * 15 : 0)
        }
        let own = 1000 * envelope.bytes.count
        table.add(["1,000 chunks at MTU 185: link frames, bytes on air / envelope bytes", "\(frames) frames, \(airBytes) B",
                   "\(own) B of envelopes", String(format: "%.2f×", Double(airBytes) / Double(own)), "≤ 1.2× (whole sessions, once built)"])
        report.table = table
        report.notes = [
            "Row 1 alternates the two measurements (six rounds) and reports the median ratio. Row 2 seals one " +
                "\(content.count)-byte post for the author and 50 pair keys. Row 4 counts only the chunk packets of 8.1 (a signed directed mesh " +
                "packet of 126 bytes around the sealed payload, fragments of MTU − 15) for \(envelope.bytes.count)-byte envelopes; " +
                "requests, offers and acks come with the sessions of 8.5, which are not built yet, so the goal is not judged here.",
        ]
        return report
    }

    private func XCTUnwrapIdentity(_ exchange: FeedKeyExchange) throws -> [UInt8] {
        guard let bundle = exchange.currentBundle else { throw BenchFailure.check("no bundle") }
        return bundle.identityKey
    }
}
