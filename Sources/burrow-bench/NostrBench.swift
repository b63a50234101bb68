import Foundation
import Nostr

/// Burrow's Nostr core beside rust-nostr (nostr-sdk through Python) on the same operations and
/// input shapes as `Tests/Interop/peers/bench_nostr_sdk.py`, with raw libsecp256k1 as the
/// ceiling for signing and verification.
struct NostrBench: BenchSection {
    let name = "nostr"
    let title = "Nostr: BIP-340 events, NIP-44 v2, NIP-59 gift wrap"

    /// Content of the benchmark events, rumors and NIP-44 plaintexts (as in the peer script).
    static let contentBytes = 128
    /// Burrow event verify ÷ raw `secp256k1_schnorrsig_verify`.
    static let verifyRatioGoal = 0.9

    func run(_ context: BenchContext) throws -> SectionReport {
        var report = SectionReport(table: MarkdownTable(headers: [], rightAligned: []))

        // The peer runs first and alone, so the two never compete for the cores.
        var peer: [String: Double] = [:]
        var peerName = "nostr-sdk"
        if context.includePeers {
            do {
                let output = try PythonBench.run(
                    python: context.python, script: context.peerScript("bench_nostr_sdk.py"),
                    arguments: ["--seconds", String(context.seconds), "--content-bytes", String(Self.contentBytes)],
                    timeout: 12 * context.seconds + 90)
                for (key, value) in output["ops_per_second"] as? [String: Any] ?? [:] {
                    if let number = value as? Double { peer[key] = number } else if let int = value as? Int { peer[key] = Double(int) }
                }
                if let version = output["version"] as? String { peerName = "nostr-sdk \(version)" }
                if peer.isEmpty { report.problems.append("nostr-sdk bench printed no figures") }
            } catch {
                report.problems.append("nostr-sdk not measured: \(error)")
            }
        } else {
            report.notes.append("nostr-sdk not run (--no-peers).")
        }

        let burrow = try measureBurrow(context)

        var table = MarkdownTable(
            headers: ["operation", "Burrow (ops/s)", "\(peerName) via Python (ops/s)", "Burrow ÷ nostr-sdk"],
            rightAligned: [1, 2, 3])
        let rows: [(String, String)] = [
            ("Schnorr sign: event id + BIP-340 signature", "event_sign"),
            ("Schnorr verify: event id + signature", "event_verify"),
            ("NIP-44 v2 encrypt (ECDH + \(Self.contentBytes) B)", "nip44_encrypt"),
            ("NIP-44 v2 decrypt (ECDH + \(Self.contentBytes) B)", "nip44_decrypt"),
            ("NIP-59 gift wrap (rumor → seal → wrap)", "gift_wrap"),
            ("NIP-59 unwrap (seal signature, rumor id checked)", "gift_unwrap"),
        ]
        for (label, key) in rows {
            table.add([label, Format.rate(burrow[key]), Format.rate(peer[key]), Format.ratio(burrow[key], peer[key])])
        }
        table.add(["NIP-44 v2 encrypt, conversation key cached", Format.rate(burrow["nip44_encrypt_cached"]), "—", "—"])
        table.add(["NIP-44 v2 decrypt, conversation key cached", Format.rate(burrow["nip44_decrypt_cached"]), "—", "—"])
        table.add(["ceiling: raw libsecp256k1 `secp256k1_schnorrsig_sign32`", Format.rate(burrow["raw_sign"]), "—", "—"])
        table.add(["ceiling: raw libsecp256k1 `secp256k1_schnorrsig_verify`", Format.rate(burrow["raw_verify"]), "—", "—"])
        let ratio = burrow["verify_ratio"] ?? 0
        table.add(["Burrow event sign ÷ raw sign", String(format: "%.2f", burrow["sign_ratio"] ?? 0), "", ""])
        table.add([
            "Burrow event verify ÷ raw verify (goal ≥ \(String(format: "%.1f", Self.verifyRatioGoal)))",
            String(format: "%.2f", ratio), "", "",
        ])
        report.table = table

        report.notes.append(
            "Operations per CPU second, one thread, best of runs totalling about \(context.seconds) s of CPU time "
                + "per operation; the ratios to raw libsecp256k1 are medians over 6 alternating rounds. "
                + "Events are kind 1 with \(Self.contentBytes) bytes of content and 2 tags; "
                + "nostr-sdk figures include the Python/UniFFI call overhead of its bindings.")
        let verdict = ratio >= Self.verifyRatioGoal ? "met" : "**not met**"
        report.notes.append(String(format: "Event verify (id + signature) reaches %.2f of raw libsecp256k1 verify: ", ratio)
            + String(format: "goal ≥ %.1f ", Self.verifyRatioGoal) + verdict + ".")
        return report
    }

    /// Every Burrow figure, keyed like the peer's JSON.
    private func measureBurrow(_ context: BenchContext) throws -> [String: Double] {
        var rng = SystemRandomNumberGenerator()
        let sender = Keys.generate(using: &rng)
        let recipient = Keys.generate(using: &rng)
        let content = String(repeating: "x", count: Self.contentBytes)
        let tags = [["p", recipient.publicKey.hex], ["t", "bench"]]
        let createdAt: Int64 = 1_700_000_000
        let now = Int64(Date().timeIntervalSince1970)

        // Inputs, each checked once so the loops measure working operations.
        let event = try Event.sign(kind: 1, content: content, tags: tags, createdAt: createdAt, keys: sender, rng: &rng)
        let unverified = try UnverifiedEvent(json: event.jsonString)
        _ = try unverified.verified()
        let senderKey = try NIP44.conversationKey(secretKey: sender.secretKey, publicKey: recipient.publicKey)
        let payload = try NIP44.encrypt(plaintext: content, conversationKey: senderKey, using: &rng)
        let recipientKey = try NIP44.conversationKey(secretKey: recipient.secretKey, publicKey: sender.publicKey)
        guard try NIP44.decrypt(payload: payload, conversationKey: recipientKey) == content else {
            throw BenchFailure.check("NIP-44 round trip")
        }
        let rumor = try Rumor(pubkey: sender.publicKey, createdAt: now, kind: 14, tags: [], content: content)
        let wrap = try GiftWrap.wrap(rumor: rumor, sender: sender, recipient: recipient.publicKey, now: now, rng: &rng)
        guard try GiftWrap.unwrap(wrap, recipient: recipient).rumor == rumor else {
            throw BenchFailure.check("gift wrap round trip")
        }
        var raw = try RawSecp256k1(secret: sender.secretKey.bytes, message: event.id.bytes, auxRand: [UInt8](repeating: 7, count: 32))
        defer { raw.destroy() }

        var sink = 0
        var results: [String: Double] = [:]
        // Sign and verify alternate with their libsecp256k1 ceilings (see `measurePair`).
        var failures = 0
        (results["raw_sign"], results["event_sign"], results["sign_ratio"]) = try context.measurePair({
            if !raw.sign() { failures += 1 }
        }, {
            let signed = try Event.sign(kind: 1, content: content, tags: tags, createdAt: createdAt, keys: sender, rng: &rng)
            sink &+= Int(signed.sig[0])
        })
        (results["raw_verify"], results["event_verify"], results["verify_ratio"]) = try context.measurePair({
            if !raw.verify() { failures += 1 }
        }, {
            sink &+= Int(try unverified.verified().sig[0])
        })
        results["nip44_encrypt"] = try context.measure {
            let key = try NIP44.conversationKey(secretKey: sender.secretKey, publicKey: recipient.publicKey)
            sink &+= try NIP44.encrypt(plaintext: content, conversationKey: key, using: &rng).utf8.count
        }
        results["nip44_decrypt"] = try context.measure {
            let key = try NIP44.conversationKey(secretKey: recipient.secretKey, publicKey: sender.publicKey)
            sink &+= try NIP44.decrypt(payload: payload, conversationKey: key).utf8.count
        }
        results["nip44_encrypt_cached"] = try context.measure {
            sink &+= try NIP44.encrypt(plaintext: content, conversationKey: senderKey, using: &rng).utf8.count
        }
        results["nip44_decrypt_cached"] = try context.measure {
            sink &+= try NIP44.decrypt(payload: payload, conversationKey: recipientKey).utf8.count
        }
        results["gift_wrap"] = try context.measure {
            let made = try GiftWrap.wrap(rumor: rumor, sender: sender, recipient: recipient.publicKey, now: now, rng: &rng)
            sink &+= made.content.utf8.count
        }
        results["gift_unwrap"] = try context.measure {
            sink &+= try GiftWrap.unwrap(wrap, recipient: recipient).rumor.content.utf8.count
        }
        guard failures == 0 else { throw BenchFailure.check("raw libsecp256k1 failed \(failures) times") }
        blackHole(sink)
        return results
    }
}

enum BenchFailure: Error, CustomStringConvertible {
    case check(String)
    var description: String {
        switch self {
        case .check(let what): return "benchmark self-check failed: \(what)"
        }
    }
}

/// Keeps the optimizer from discarding the measured work.
@inline(never)
func blackHole(_ value: Int) {
    if value == 0x5eed_5eed { print("") }
}
