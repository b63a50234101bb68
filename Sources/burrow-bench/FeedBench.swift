import Crypto
import Feed
import Foundation

/// Feeds (issue 26), the sans-I/O core as it stands: envelope verification against raw Ed25519,
/// sealing a contacts entry for 50 contacts, a whole feed-keys exchange against the ML-KEM-768
/// and X25519 work it contains, and whole sessions of 1,000 entries at MTU 185.
struct FeedBench: BenchSection {
    let name = "feed"
    let title = "Feeds: envelope verification, a contacts entry for 50 contacts, the pair-key exchange, sessions on the air"

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

        // 4. Whole sessions: a contact who follows A and holds nothing meets A, who has written
        // 1,000 entries, over an MTU-185 link; every frame both ways counted against the
        // envelopes' own bytes. Once with short posts, once with long ones.
        for (label, bodyBytes) in [("short posts (~40-byte body)", 40), ("long posts (2,000-byte body)", 2000)] {
            let follower = Curve25519.Signing.PrivateKey()
            let a = FeedChains(ownIdentityKey: identityKey, follows: [])
            let b = FeedChains(ownIdentityKey: Array(follower.publicKey.rawRepresentation), follows: [identityKey])
            var previous: [UInt8]?
            let post = Array(#"{"body":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: bodyBytes) + Array(#"","type":"post"}"#.utf8)
            let fiveContacts = Array(recipients.prefix(6))
            for sequence in 0..<1000 as Range<UInt32> {
                let blobBinding = try Envelope.sign(audience: "contacts", contentEncoded: [0], feedID: feedID, previous: previous,
                                                    sequence: sequence, timestamp: 1_795_000_000 + Int64(sequence), type: "post",
                                                    identity: identity).binding
                let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let cek = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let blob = try FeedAudience.sealContacts(post, author: feedID, recipients: fiveContacts, salt: salt, cek: cek, binding: blobBinding)
                let entry = try Envelope.sign(audience: "contacts", contentEncoded: blob, feedID: feedID, previous: previous, sequence: sequence,
                                              timestamp: 1_795_000_000 + Int64(sequence), type: "post", identity: identity)
                guard case .success = a.appendOwn(entry.bytes).result else { throw BenchFailure.check("own entry \(sequence)") }
                previous = entry.messageID
            }
            let meshA = Array(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation)
            let meshB = Array(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation)
            let pairKey = Array(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
            func link(_ own: [UInt8], _ peer: [UInt8]) -> FeedLink {
                FeedLink(pairKey: pairKey, ownMeshKey: own, peerMeshKey: peer, ownMeshID: Array(SHA256.hash(data: own).prefix(8)),
                         peerMeshID: Array(SHA256.hash(data: peer).prefix(8)))
            }
            var run = FeedSessionRun(FeedSession(link: link(meshA, meshB), peerFeedID: b.ownFeedID),
                                     FeedSession(link: link(meshB, meshA), peerFeedID: a.ownFeedID), mtu: 185, budget: nil)
            let started = DispatchTime.now().uptimeNanoseconds
            try run.run((a, b))
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            guard b.followed[feedID]?.range == 0...999 else { throw BenchFailure.check("the follower did not get all 1,000 entries") }
            let envelopeBytes = (0..<1000 as Range<UInt32>).reduce(0) { $0 + (a.own.entries[$1]?.envelope.bytes.count ?? 0) }
            var frames = 0, air = 0
            for sent in run.transcript where sent.delivered {
                let packet = 126 + sent.packet.payload.count
                frames += sent.linkFrames
                air += packet + (sent.linkFrames > 1 ? sent.linkFrames * 15 : 0)
            }
            let ratio = Double(air) / Double(envelopeBytes)
            table.add(["session, 1,000 entries at MTU 185, \(label): frames, bytes on air / envelope bytes",
                       "\(run.transcript.count) packets, \(frames) frames, \(air) B in \(String(format: "%.2f", seconds)) s",
                       "\(envelopeBytes) B of envelopes (\(envelopeBytes / 1000) B each)", String(format: "%.2f×", ratio), "≤ 1.2×"])
            if ratio > 1.2 { report.problems.append("a session of 1,000 \(label) costs \(String(format: "%.2f", ratio))× the envelopes on air") }
        }
        report.table = table
        report.notes = [
            "Row 1 alternates the two measurements (six rounds) and reports the median ratio. Row 2 seals one " +
                "\(content.count)-byte post for the author and 50 pair keys. Rows 4–5 run whole sessions (FeedSessionRun: requests, offers, " +
                "1,000 chunks, acks, both directions) and count every delivered packet on the air: a signed directed mesh packet of 126 bytes " +
                "around the sealed payload (8-byte counter, 16-byte tag, 36-byte chunk header), cut into fragments of MTU − 15 with a " +
                "15-byte header each. Each chunk carries one envelope (8.4), so the fixed ~186 bytes per chunk dominate short entries: " +
                "the 1.2× goal holds only for long ones. The time is the sans-I/O session alone.",
        ]
        return report
    }

    private func XCTUnwrapIdentity(_ exchange: FeedKeyExchange) throws -> [UInt8] {
        guard let bundle = exchange.currentBundle else { throw BenchFailure.check("no bundle") }
        return bundle.identityKey
    }
}
