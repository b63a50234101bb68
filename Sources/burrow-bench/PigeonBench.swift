import Crypto
import Foundation
import Nostr
@_spi(PigeonPrimitives) import Pigeon

/// Pigeon direct messages (Docs/protocols/pigeon-dm.md) beside the Python peers of the interop tests,
/// measured in the same run on the same operations and sizes as
/// `Tests/Interop/peers/bench_pigeon.py`: noiseprotocol 0.3.1 for the Noise XX handshake and
/// Syndace's doubleratchet 1.3.0, configured to the profile's constants, for the ratchet. A raw
/// swift-crypto baseline bounds the cost of one message.
struct PigeonBench: BenchSection {
    let name = "pigeon"
    let title = "Pigeon DMs: Noise XX handshake, Double Ratchet"

    /// Content bytes of a benchmark message (padded to the 256-byte bucket, as the profile does).
    static let messageBytes = 100
    /// Card bytes carried in handshake2 and handshake3 by the primitive-level rows (a card with
    /// a short nickname and one relay; the engine rows carry real cards).
    static let cardBytes = 330
    /// Burrow ÷ Python peers, for the handshake, session and message rows.
    static let peerRatioGoal = 10.0
    /// Raw AES-GCM + HKDF ÷ one ratchet message, at most.
    static let baselineRatioGoal = 2.0

    func run(_ context: BenchContext) throws -> SectionReport {
        var report = SectionReport(table: MarkdownTable(headers: [], rightAligned: []))

        // The peer runs first and alone, so the two never compete for the cores.
        var peer: [String: Double] = [:]
        var peerName = "noiseprotocol + doubleratchet"
        if context.includePeers {
            do {
                let output = try PythonBench.run(
                    python: context.python, script: context.peerScript("bench_pigeon.py"),
                    arguments: ["--seconds", String(context.seconds), "--message-bytes", String(Self.messageBytes),
                                "--card-bytes", String(Self.cardBytes)],
                    timeout: 10 * context.seconds + 90)
                for (key, value) in output["ops_per_second"] as? [String: Any] ?? [:] {
                    if let number = value as? Double { peer[key] = number } else if let int = value as? Int { peer[key] = Double(int) }
                }
                if let versions = output["versions"] as? [String: String],
                   let noise = versions["noiseprotocol"], let ratchet = versions["doubleratchet"] {
                    peerName = "noiseprotocol \(noise) + doubleratchet \(ratchet)"
                }
                if peer.isEmpty { report.problems.append("the Pigeon peer bench printed no figures") }
            } catch {
                report.problems.append("Python peers not measured: \(error)")
            }
        } else {
            report.notes.append("Python peers not run (--no-peers).")
        }

        let burrow = try measureBurrow(context)

        var table = MarkdownTable(
            headers: ["operation", "Burrow (ops/s)", "\(peerName) via Python (ops/s)", "Burrow ÷ Python"],
            rightAligned: [1, 2, 3])
        let rows: [(String, String)] = [
            ("Noise XX handshake, both sides (3 messages, profile prologue and payloads)", "handshake"),
            ("session setup: XX + ratchet root (4.4) + both ratchets started (5.2)", "session"),
            ("ratchet message: encrypt + decrypt, \(Self.messageBytes) B in the 256 B bucket", "message"),
            ("ratchet message with a DH step (direction alternating)", "message_dh_step"),
        ]
        for (label, key) in rows {
            table.add([label, Format.rate(burrow[key]), Format.rate(peer[key]), Format.ratio(burrow[key], peer[key])])
        }
        table.add(["engine: handshake start → h1 → h2 → h3, cards verified, state records (`PigeonState`)",
                   Format.rate(burrow["engine_handshake"]), "—", "—"])
        table.add(["engine: send + deliver of a \(Self.messageBytes) B text (`PigeonState`)",
                   Format.rate(burrow["engine_message"]), "—", "—"])
        table.add(["baseline: raw swift-crypto AES-GCM + HKDF for one message (seal and open)",
                   Format.rate(burrow["baseline"]), "—", "—"])
        table.add(["primitive: swift-crypto X25519 key agreement (private key parsed each time, as Pigeon does)",
                   Format.rate(burrow["x25519"]), "—", "—"])
        table.add(["primitive: swift-crypto HMAC-SHA256 (32 B key, 1 B message: half a KDF_CK)",
                   Format.rate(burrow["hmac"]), "—", "—"])
        table.add(["primitive: swift-crypto HKDF-SHA256, 32 B → 44 B (message key ‖ nonce)",
                   Format.rate(burrow["hkdf"]), "—", "—"])
        table.add(["primitive: swift-crypto AES-256-GCM seal, 256 B with 154 B AD",
                   Format.rate(burrow["aes_gcm"]), "—", "—"])
        let baselineRatio = burrow["baseline_ratio"] ?? 0
        table.add([
            "baseline ÷ ratchet message (goal ≤ \(String(format: "%.0f", Self.baselineRatioGoal)))",
            String(format: "%.2f", baselineRatio), "", "",
        ])
        report.table = table

        report.notes.append(
            "Operations per CPU second, one thread, best of runs totalling about \(context.seconds) s of CPU time per operation; "
                + "the baseline ratio is the median over 6 alternating rounds. Each row counts both ends: a handshake is all "
                + "three messages written and read, a message is one encrypt and one decrypt. Handshake payloads: ts (8 B), "
                + "ratchet key (32 B) + \(Self.cardBytes) B card each way. The session row makes the two ratchet key pairs "
                + "and, on the responder, the key pair of its first DH step. The baseline is the primitive work of one "
                + "message without the chain-key HMACs: HKDF-SHA256 to key ‖ nonce and AES-256-GCM seal of the 256 B "
                + "bucket with the 154 B AD, then the same HKDF and open, all through swift-crypto's own APIs; Pigeon derives "
                + "HKDF over swift-crypto's HMAC instead (`Primitives.hkdfSHA256`), which is faster than swift-crypto's "
                + "`HKDF` on Linux, so a ratchet message can cost less than this baseline. The engine rows have no Python counterpart: they "
                + "add card decoding and three signature checks per card, padding, content encoding and the state records "
                + "of each transition.")
        var verdicts: [String] = []
        for (label, key) in [("handshake", "handshake"), ("session setup", "session"), ("message", "message"),
                             ("message with a DH step", "message_dh_step")] {
            guard let ours = burrow[key], let theirs = peer[key], theirs > 0 else { continue }
            let ratio = ours / theirs
            verdicts.append(String(format: "%@ %.1f× (%@)", label, ratio, ratio >= Self.peerRatioGoal ? "met" : "**not met**"))
        }
        if !verdicts.isEmpty {
            report.notes.append("Goal Burrow ≥ \(Int(Self.peerRatioGoal))× the Python peers: " + verdicts.joined(separator: "; ") + ".")
        }
        let baselineVerdict = baselineRatio > 0 && baselineRatio <= Self.baselineRatioGoal ? "met" : "**not met**"
        report.notes.append(String(format: "One ratchet message costs %.2f× the raw AES-GCM + HKDF baseline: goal ≤ %.0f× ",
                                   baselineRatio, Self.baselineRatioGoal) + baselineVerdict + ".")
        return report
    }

    // MARK: - Burrow

    private static let prologue = Array("burrow-pigeon-v1:prologue".utf8) + [0x01]

    static func randomBytes(_ count: Int, _ rng: inout SystemRandomNumberGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// Every Burrow figure, keyed like the peer's JSON.
    private func measureBurrow(_ context: BenchContext) throws -> [String: Double] {
        var rng = SystemRandomNumberGenerator()
        let initiatorStatic = X25519PrivateKey.generate(), responderStatic = X25519PrivateKey.generate()
        let cardI = Self.randomBytes(Self.cardBytes, &rng), cardR = Self.randomBytes(Self.cardBytes, &rng)
        var ts: [UInt8] = []
        for shift in stride(from: 56, through: 0, by: -8) { ts.append(UInt8(truncatingIfNeeded: UInt64(1_767_225_600_000) >> UInt64(shift))) }
        let placeholder = [UInt8](repeating: 0, count: 32)

        /// Both sides of XX; returns both results and the payloads each side read.
        func handshake(rR: [UInt8], rI: [UInt8]) throws -> (NoiseHandshakeResult, NoiseHandshakeResult, [UInt8], [UInt8]) {
            let (sentE, m1) = try NoiseXX.initiate(prologue: Self.prologue, staticKey: initiatorStatic, ephemeral: .generate(), payload: ts)
            let readE = try NoiseXX.respond(prologue: Self.prologue, staticKey: responderStatic, message: m1)
            let (sent, m2) = try readE.writeMessage2(ephemeral: .generate(), payload: rR + cardR)
            let response = try sentE.readMessage2(m2)
            let (initiator, m3) = try response.writeMessage3(payload: rI + cardI)
            let (responder, payload3) = try sent.readMessage3(m3)
            return (initiator, responder, response.payload, payload3)
        }

        let binding = Self.randomBytes(96, &rng)
        /// Handshake, roots, ratchet key pairs and both ratchets, as `bench_pigeon.py`'s session.
        func session() throws -> (PigeonRatchetSession, PigeonRatchetSession) {
            let rr = X25519PrivateKey.generate(), ri = X25519PrivateKey.generate()
            let (initiator, responder, payload2, payload3) = try handshake(rR: rr.publicKey.bytes, rI: ri.publicKey.bytes)
            let id = SessionID(initiatorEphemeral: rr.publicKey)  // any 16 bytes: the bench has no frames of its own
            let alice = try PigeonRatchetSession.initiator(
                root: PigeonRatchetSession.ratchetRoot(of: initiator), ratchetKey: ri,
                remoteRatchetKey: try X25519PublicKey(bytes: Array(payload2[0..<32])), session: id, binding: binding)
            let bob = try PigeonRatchetSession.responder(
                root: PigeonRatchetSession.ratchetRoot(of: responder), ratchetKey: rr,
                remoteRatchetKey: try X25519PublicKey(bytes: Array(payload3[0..<32])), nextKey: .generate(), session: id, binding: binding)
            return (alice, bob)
        }

        // Inputs, each checked once so the loops measure working operations.
        let (checkI, checkR, _, _) = try handshake(rR: placeholder, rI: placeholder)
        guard checkI.handshakeHash == checkR.handshakeHash, checkI.remoteStatic == responderStatic.publicKey else {
            throw BenchFailure.check("Noise XX handshake")
        }
        var (alice, bob) = try session()
        var keys = SystemKeySource()
        let padded = try Padding.pad(Self.randomBytes(Self.messageBytes, &rng))
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        for (from, to) in [(0, 1), (1, 0)] {
            var pair = [alice, bob]
            let frame = try pair[from].encrypt(padded: padded)
            guard try pair[to].decrypt(frame: frame, now: now, keys: &keys) == padded else { throw BenchFailure.check("ratchet round trip") }
            (alice, bob) = (pair[0], pair[1])
        }
        var engine = try EnginePair(now: now, rng: &rng)
        try engine.checkMessage(Self.messageBytes, now: now)

        // The raw baseline: one message's HKDF + AES-GCM, both ends.
        let mk = SymmetricKey(size: .bits256)
        let ad = binding + Self.randomBytes(58, &rng)
        func baselineMessage() throws -> Int {
            let material = HKDF<SHA256>.deriveKey(inputKeyMaterial: mk, info: Array("burrow-pigeon-v1:message-key".utf8), outputByteCount: 44)
            let (key, nonce) = try material.withUnsafeBytes { raw in
                (SymmetricKey(data: Array(raw[0..<32])), try AES.GCM.Nonce(data: Array(raw[32..<44])))
            }
            let box = try AES.GCM.seal(padded, using: key, nonce: nonce, authenticating: ad)
            let material2 = HKDF<SHA256>.deriveKey(inputKeyMaterial: mk, info: Array("burrow-pigeon-v1:message-key".utf8), outputByteCount: 44)
            let (key2, nonce2) = try material2.withUnsafeBytes { raw in
                (SymmetricKey(data: Array(raw[0..<32])), try AES.GCM.Nonce(data: Array(raw[32..<44])))
            }
            let opened = try AES.GCM.open(try AES.GCM.SealedBox(nonce: nonce2, ciphertext: box.ciphertext, tag: box.tag), using: key2, authenticating: ad)
            return opened.count
        }
        guard try baselineMessage() == padded.count else { throw BenchFailure.check("baseline round trip") }

        var sink = 0
        var results: [String: Double] = [:]
        results["handshake"] = try context.measure {
            let (i, _, _, _) = try handshake(rR: placeholder, rI: placeholder)
            sink &+= Int(i.handshakeHash[0])
        }
        results["session"] = try context.measure {
            let (a, _) = try session()
            sink &+= a.binding.count
        }
        func message() throws {
            let frame = try alice.encrypt(padded: padded)
            sink &+= try bob.decrypt(frame: frame, now: now, keys: &keys).count
        }
        results["message"] = try context.measure(message)
        var turn = 0
        results["message_dh_step"] = try context.measure {
            turn += 1
            if turn % 2 == 0 {
                let frame = try alice.encrypt(padded: padded)
                sink &+= try bob.decrypt(frame: frame, now: now, keys: &keys).count
            } else {
                let frame = try bob.encrypt(padded: padded)
                sink &+= try alice.decrypt(frame: frame, now: now, keys: &keys).count
            }
        }
        // Back in one chain for the paired measurement below.
        (alice, bob) = try session()
        // Median over alternating rounds of baseline rate ÷ message rate: how many raw messages
        // fit in the time of one ratchet message.
        (results["message_paired"], results["baseline"], results["baseline_ratio"]) = try context.measurePair(message, {
            sink &+= try baselineMessage()
        })
        // The primitives under those figures, for reading them.
        let dhPrivate = X25519PrivateKey.generate().rawBytes
        let dhPeer = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: X25519PrivateKey.generate().publicKey.bytes)
        results["x25519"] = try context.measure {
            let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: dhPrivate)
            sink &+= try key.sharedSecretFromKeyAgreement(with: dhPeer).withUnsafeBytes { Int($0[0]) }
        }
        let chainKey = SymmetricKey(size: .bits256)
        results["hmac"] = context.measure {
            sink &+= HMAC<SHA256>.authenticationCode(for: [0x01], using: chainKey).withUnsafeBytes { Int($0[0]) }
        }
        results["hkdf"] = context.measure {
            sink &+= HKDF<SHA256>.deriveKey(inputKeyMaterial: mk, info: Array("burrow-pigeon-v1:message-key".utf8), outputByteCount: 44)
                .withUnsafeBytes { Int($0[0]) }
        }
        let gcmKey = SymmetricKey(size: .bits256)
        let gcmNonce = AES.GCM.Nonce()
        results["aes_gcm"] = try context.measure {
            sink &+= try AES.GCM.seal(padded, using: gcmKey, nonce: gcmNonce, authenticating: ad).tag.count
        }
        results["engine_handshake"] = try context.measure {
            sink &+= try engine.handshake(now: now).1.sessions.count
        }
        results["engine_message"] = try context.measure {
            sink &+= try engine.message(Self.messageBytes, now: now)
        }
        blackHole(sink)
        return results
    }
}

/// Two `PigeonState` nodes holding each other's cards, for the engine rows: fresh handshakes
/// from the same starting states, and messages on one established session.
private struct EnginePair {
    let aliceID: Ed25519PublicKey, bobID: Ed25519PublicKey
    let aliceBase: PigeonState, bobBase: PigeonState
    var alice: PigeonState, bob: PigeonState
    var keys = SystemKeySource()
    var rng = SystemRandomNumberGenerator()

    init(now: UInt64, rng: inout SystemRandomNumberGenerator) throws {
        func node(_ nickname: String) throws -> PigeonState {
            let identity = Ed25519PrivateKey.generate(), staticKey = X25519PrivateKey.generate()
            let card = try ContactCard.issue(
                identity: identity, staticKey: staticKey.publicKey, nostr: Keys.generate(using: &rng),
                auxRand: PigeonBench.randomBytes(32, &rng), createdAt: now, nickname: nickname, relays: ["wss://relay.example.org"])
            return PigeonState(local: try LocalIdentity(identityKey: identity, staticKey: staticKey, card: card))
        }
        var a = try node("alice"), b = try node("bob")
        let aliceCard = a.local.card, bobCard = b.local.card
        a = try a.addContact(bobCard).state
        b = try b.addContact(aliceCard).state
        aliceID = aliceCard.identityKey
        bobID = bobCard.identityKey
        aliceBase = a
        bobBase = b
        alice = a
        bob = b
        (alice, bob) = try handshake(now: now)
    }

    /// A complete handshake from the base states: Alice's and Bob's states with the new session.
    mutating func handshake(now: UInt64) throws -> (PigeonState, PigeonState) {
        var a = aliceBase, b = bobBase
        let start = try a.start(with: bobID, now: now, keys: &keys)
        a = start.state
        let h2 = try b.deliver(frame: start.output.frame, now: now, keys: &keys)
        b = h2.state
        guard let frame2 = h2.output.outputs.first else { throw BenchFailure.check("engine handshake2") }
        let h3 = try a.deliver(frame: frame2, now: now, keys: &keys)
        a = h3.state
        guard let frame3 = h3.output.outputs.first else { throw BenchFailure.check("engine handshake3") }
        let done = try b.deliver(frame: frame3, now: now, keys: &keys)
        b = done.state
        guard done.output.established != nil, done.output.ackDue else { throw BenchFailure.check("engine session") }
        return (a, b)
    }

    /// Alice sends a text of `bytes` bytes and Bob delivers it.
    mutating func message(_ bytes: Int, now: UInt64) throws -> Int {
        let content = try MessageContent(kind: 1, msgID: PigeonBench.randomBytes(16, &rng), sentAt: now,
                                         body: [UInt8](repeating: 0x61, count: bytes))
        let sent = try alice.send(to: bobID, content: content, now: now)
        alice = sent.state
        var count = 0
        for frame in sent.output.frames {
            let delivered = try bob.deliver(frame: frame, now: now, keys: &keys)
            bob = delivered.state
            count += delivered.output.message?.content?.body.count ?? 0
        }
        return count
    }

    /// Bob's ack confirms Alice's session, then one message is checked end to end.
    mutating func checkMessage(_ bytes: Int, now: UInt64) throws {
        let ack = try MessageContent(kind: 0, msgID: PigeonBench.randomBytes(16, &rng), sentAt: now, body: [])
        let sent = try bob.send(to: aliceID, content: ack, now: now)
        bob = sent.state
        for frame in sent.output.frames { alice = try alice.deliver(frame: frame, now: now, keys: &keys).state }
        guard try message(bytes, now: now) == bytes else { throw BenchFailure.check("engine message") }
    }
}
