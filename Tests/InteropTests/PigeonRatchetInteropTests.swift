import Foundation
import Nostr
@testable import Pigeon
import TestSupport
import XCTest

/// Live Double Ratchet interop between Burrow's `DoubleRatchet` (section 5 of
/// Docs/protocols/pigeon-dm.md) and Syndace's `doubleratchet` 1.3.0 (`Tests/Interop/peers/ratchet_peer.py`),
/// frames exchanged as hex over the peer's stdin/stdout (no sockets).
///
/// Syndace's library is configured only through its extension points, and every constant of
/// section 5.1 is matched exactly: KDF_RK = its HKDF KDF (salt = RK, IKM = DH output, info
/// "burrow-pigeon-v1:root-chain", 64 bytes → RK ‖ CK); KDF_CK = its separate-HMACs KDF with the
/// constant 0x02 0x01 (ck' = HMAC(ck, 0x02), mk = HMAC(ck, 0x01)); the AEAD = HKDF(no salt, mk,
/// "burrow-pigeon-v1:message-key", 44) → AES-256-GCM key ‖ nonce; header = DH (32) ‖ pn u32 ‖ n u32;
/// AD = binding (96) ‖ frame[0..58); MAX_SKIP = 1000 and 2,000 stored skipped keys. Both starts of
/// 5.2 are the library's own DiffieHellmanRatchet.create (no own key: the initiator; the
/// responder's r_r: DH step as if header (R_i, 0, 0) had arrived).
///
/// What the library does differently (its policy, not its arithmetic), pinned by the tests below:
/// 1. A new chain whose `pn` would skip more than 1000 keys of the old chain: the profile refuses
///    (`skip_limit`, 5.4 step 4); Syndace only warns, skips storing those keys and accepts the
///    message (`testPnBeyondMaxSkipIsTheOneDivergence`).
/// 2. A frame of a chain already replaced whose key is not stored: the profile refuses it from
///    the header (`message_replayed`, retired keys, 5.4 step 3); Syndace has no retired-key list,
///    so it tries a DH step with the old key and refuses at the AEAD check
///    (`AuthenticationFailedException`). Same outcome (refused, state unchanged), other reason.
/// 3. Replays in the current chain: `message_replayed` here, `DuplicateMessageException` there.
/// 4. Skipped keys expire after 30 days here; Syndace keeps them until evicted (not exercised:
///    it needs a 30-day clock).
/// 5. Neither side's library API starts a ratchet without a message (Syndace's
///    encrypt/decrypt_initial_message); the peer builds its DoubleRatchet from the state of
///    DiffieHellmanRatchet.create with DoubleRatchet.from_model, the library's own state API.
final class PigeonRatchetInteropTests: XCTestCase {
    private var peer: PythonPeer!

    override func setUpWithError() throws {
        _ = try InteropVenv.python()
        let peer = try PythonPeer(script: Fixtures.peerScript("ratchet_peer.py"))
        addTeardownBlock { peer.terminate() }
        self.peer = peer
        XCTAssertEqual(peer.hello["version"] as? String, "1.3.0")
    }

    // MARK: - Parties

    enum Refusal: Equatable {
        case replayed, skipLimit, decryptFailed
    }

    struct State: Equatable {
        var dhs: [UInt8]
        var dhr: [UInt8]?
        var ns: Int, nr: Int, pn: Int
        var skipped: Int
    }

    struct RefusalError: Error, Equatable {
        let refusal: Refusal
        let detail: String
    }

    final class OurParty: Party {
        let name: String
        let session: [UInt8]
        let binding: [UInt8]
        var ratchet: DoubleRatchet
        var keys = SystemKeySource()
        init(name: String, ratchet: DoubleRatchet, session: [UInt8], binding: [UInt8]) {
            self.name = name
            self.ratchet = ratchet
            self.session = session
            self.binding = binding
        }
        func encrypt(_ padded: [UInt8]) throws -> [UInt8] {
            try ratchet.encrypt(padded: padded, session: try SessionID(bytes: session), binding: binding)
        }
        func decrypt(_ frame: [UInt8]) throws -> Result<[UInt8], RefusalError> {
            let parsed = try Frame(bytes: frame)
            let now = UInt64(Date().timeIntervalSince1970 * 1000)
            do throws(PigeonError) {
                return .success(try ratchet.decrypt(frame: parsed, binding: binding, now: now, keys: &keys))
            } catch {
                switch error {
                case .messageReplayed: return .failure(RefusalError(refusal: .replayed, detail: "\(error)"))
                case .skipLimit: return .failure(RefusalError(refusal: .skipLimit, detail: "\(error)"))
                case .decryptFailed: return .failure(RefusalError(refusal: .decryptFailed, detail: "\(error)"))
                default: throw error
                }
            }
        }
        func advance(_ count: Int) throws { try ratchet.skipSending(count) }
        func state() throws -> State {
            let s = ratchet.snapshot
            return State(dhs: s.dhsPublic.bytes, dhr: s.dhr?.bytes, ns: Int(s.ns), nr: Int(s.nr), pn: Int(s.pn), skipped: s.skippedCount)
        }
    }

    final class SyndaceParty: Party {
        let name: String
        let session: [UInt8]
        let binding: [UInt8]
        let peer: PythonPeer
        let id: String
        /// The warnings the library raised during the last decrypt (its policy for a `pn` over MAX_SKIP).
        private(set) var lastWarnings: [String] = []
        init(name: String, peer: PythonPeer, id: String, session: [UInt8], binding: [UInt8]) {
            self.name = name
            self.peer = peer
            self.id = id
            self.session = session
            self.binding = binding
        }
        func encrypt(_ padded: [UInt8]) throws -> [UInt8] {
            let r = try peer.request("encrypt", ["id": id, "session": Hex.encode(session), "binding": Hex.encode(binding), "plaintext": Hex.encode(padded)])
            return try Hex.decode(try r.string("frame"))
        }
        func decrypt(_ frame: [UInt8]) throws -> Result<[UInt8], RefusalError> {
            do {
                let r = try peer.request("decrypt", ["id": id, "binding": Hex.encode(binding), "frame": Hex.encode(frame)])
                lastWarnings = (r["warnings"] as? [String]) ?? []
                return .success(try Hex.decode(try r.string("plaintext")))
            } catch PythonPeer.PeerError.failed(op: "decrypt", let text) {
                lastWarnings = []
                switch text {
                case "decrypt: RuntimeError: DuplicateMessageException": return .failure(RefusalError(refusal: .replayed, detail: text))
                case "decrypt: RuntimeError: DoSProtectionException": return .failure(RefusalError(refusal: .skipLimit, detail: text))
                case "decrypt: RuntimeError: AuthenticationFailedException": return .failure(RefusalError(refusal: .decryptFailed, detail: text))
                default: throw PythonPeer.PeerError.failed(op: "decrypt", error: text)
                }
            }
        }
        func advance(_ count: Int) throws { try peer.request("advance", ["id": id, "count": count], timeout: 120) }
        func state() throws -> State {
            let r = try peer.request("state", ["id": id])
            return State(
                dhs: try Hex.decode(try r.string("dhs")), dhr: (r["dhr"] as? String).flatMap { try? Hex.decode($0) },
                // A ratchet always has a sending chain; the receiving chain and PN may not exist yet (0 here).
                ns: try r.int("sending_chain_length"), nr: (r["receiving_chain_length"] as? Int) ?? 0,
                pn: (r["previous_sending_chain_length"] as? Int) ?? 0, skipped: try r.int("skipped"))
        }
    }

    /// One end of a session: ours or Syndace's.
    protocol Party: AnyObject {
        var name: String { get }
        var session: [UInt8] { get }
        var binding: [UInt8] { get }
        func encrypt(_ padded: [UInt8]) throws -> [UInt8]
        /// The padded plaintext, or the refusal (mapped from either implementation's error).
        func decrypt(_ frame: [UInt8]) throws -> Result<[UInt8], RefusalError>
        /// The sending chain steps `count` times (lost messages).
        func advance(_ count: Int) throws
        func state() throws -> State
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// A session between our ratchet and Syndace's, from a random root, binding and session id,
    /// set up as in 5.2: the responder's `R_r` (handshake2) before the initiator starts, the
    /// initiator's `R_i` (handshake3) before the responder starts.
    private func makePair(oursIsInitiator: Bool, id: String) throws -> (initiator: Party, responder: Party) {
        let root = Self.randomBytes(32), binding = Self.randomBytes(96), session = Self.randomBytes(16)
        if oursIsInitiator {
            let rR = try Hex.decode(try peer.request("ratchet_key", ["id": id]).string("public"))
            let ri = X25519PrivateKey.generate()
            let ours = try DoubleRatchet.initiator(root: root, ratchetKey: ri, remoteRatchetKey: try X25519PublicKey(bytes: rR))
            _ = try peer.request("init_responder", ["id": id, "root": Hex.encode(root), "remote": Hex.encode(ri.publicKey.bytes)])
            return (OurParty(name: "Burrow (initiator)", ratchet: ours, session: session, binding: binding),
                    SyndaceParty(name: "Syndace (responder)", peer: peer, id: id, session: session, binding: binding))
        } else {
            let rr = X25519PrivateKey.generate()
            let rI = try Hex.decode(try peer.request("init_initiator", ["id": id, "root": Hex.encode(root), "remote": Hex.encode(rr.publicKey.bytes)]).string("public"))
            let ours = try DoubleRatchet.responder(root: root, ratchetKey: rr, remoteRatchetKey: try X25519PublicKey(bytes: rI), nextKey: .generate())
            return (SyndaceParty(name: "Syndace (initiator)", peer: peer, id: id, session: session, binding: binding),
                    OurParty(name: "Burrow (responder)", ratchet: ours, session: session, binding: binding))
        }
    }

    private var counter = 0
    /// A distinct padded message (the 256 bucket).
    private func message() throws -> [UInt8] {
        counter += 1
        return try Padding.pad(Array("message \(counter) \(UUID().uuidString)".utf8))
    }

    private func send(_ from: Party) throws -> (frame: [UInt8], plaintext: [UInt8]) {
        let plaintext = try message()
        return (try from.encrypt(plaintext), plaintext)
    }

    private func deliver(_ sent: (frame: [UInt8], plaintext: [UInt8]), to party: Party, _ what: String,
                         file: StaticString = #filePath, line: UInt = #line) throws {
        switch try party.decrypt(sent.frame) {
        case .success(let plaintext):
            XCTAssertEqual(plaintext, sent.plaintext, "\(party.name): \(what)", file: file, line: line)
        case .failure(let refusal):
            XCTFail("\(party.name) refused \(what): \(refusal.detail)", file: file, line: line)
        }
    }

    private func refuse(_ frame: [UInt8], by party: Party, _ expected: Refusal, _ what: String,
                        file: StaticString = #filePath, line: UInt = #line) throws {
        switch try party.decrypt(frame) {
        case .success: XCTFail("\(party.name) accepted \(what)", file: file, line: line)
        case .failure(let refusal): XCTAssertEqual(refusal.refusal, expected, "\(party.name), \(what): \(refusal.detail)", file: file, line: line)
        }
    }

    // MARK: - The conversation, in both role assignments

    func testBurrowInitiatorWithSyndaceResponder() throws {
        let (a, b) = try makePair(oursIsInitiator: true, id: "burrow-initiates")
        try converse(a, b, oursIsInitiator: true)
    }

    func testSyndaceInitiatorWithBurrowResponder() throws {
        let (a, b) = try makePair(oursIsInitiator: false, id: "syndace-initiates")
        try converse(a, b, oursIsInitiator: false)
    }

    /// Both send at once, out-of-order delivery within a chain, skipped keys used later, DH steps
    /// each way, skipped keys stored across a DH step (`pn`), replays and tampering refused with
    /// the state unchanged, and the exact MAX_SKIP bound.
    private func converse(_ a: Party, _ b: Party, oursIsInitiator: Bool) throws {
        // Both ends can send at once (5.2).
        let a0 = try send(a), a1 = try send(a), a2 = try send(a)
        let b0 = try send(b), b1 = try send(b)
        XCTAssertEqual(try a.state().ns, 3)
        XCTAssertEqual(try b.state().ns, 2)

        // Out of order within A's first chain: a2 skips a0 and a1.
        try deliver(a2, to: b, "a2 first (skips a0, a1)")
        XCTAssertEqual(try b.state().skipped, 2)
        XCTAssertEqual(try b.state().nr, 3)
        try deliver(a0, to: b, "a0 from a skipped key")
        XCTAssertEqual(try b.state().skipped, 1)

        // A receives B's first chain out of order: a DH step on A's side, then a skipped key.
        try deliver(b1, to: a, "b1 (A's first DH step, skips b0)")
        XCTAssertEqual(try a.state().dhr, try b.state().dhs)
        XCTAssertEqual(try a.state().skipped, 1)
        XCTAssertEqual(try a.state().pn, 3)
        XCTAssertEqual(try a.state().ns, 0)
        try deliver(b0, to: a, "b0 from a skipped key")
        try deliver(a1, to: b, "a1 from a skipped key, after a2 and a0")
        XCTAssertEqual(try a.state().skipped, 0)
        XCTAssertEqual(try b.state().skipped, 0)

        // DH step A → B, then B → A.
        let a3 = try send(a)
        try deliver(a3, to: b, "a3 (B's DH step)")
        XCTAssertEqual(try b.state().dhr, try a.state().dhs)
        XCTAssertEqual(try b.state().pn, 2)
        let b2 = try send(b)
        try deliver(b2, to: a, "b2 (A's DH step)")
        XCTAssertEqual(try a.state().dhr, try b.state().dhs)
        XCTAssertEqual(try a.state().pn, 1)

        // Skipped keys across a DH step: B sees a4 of A's new chain, then a7 of the next one
        // (pn = 3 stores a5, a6 of the old chain), then a6 and a5.
        let a4 = try send(a), a5 = try send(a), a6 = try send(a)
        try deliver(a4, to: b, "a4 (B's DH step)")
        let b3 = try send(b)
        try deliver(b3, to: a, "b3 (A's DH step)")
        let a7 = try send(a)
        XCTAssertEqual(try a.state().pn, 3)
        try deliver(a7, to: b, "a7 (new chain; pn = 3 stores a5, a6)")
        XCTAssertEqual(try b.state().skipped, 2)
        try deliver(a6, to: b, "a6 from the old chain's skipped keys")
        try deliver(a5, to: b, "a5 from the old chain's skipped keys")
        XCTAssertEqual(try b.state().skipped, 0)

        // Replays: in the current chain (both: replayed), and of a replaced chain whose keys are
        // gone (ours: replayed from the retired keys; Syndace: AEAD failure after a trial DH step).
        let stateB = try b.state(), stateA = try a.state()
        try refuse(a7.frame, by: b, .replayed, "a replay of a7 (current chain)")
        try refuse(b3.frame, by: a, .replayed, "a replay of b3 (current chain)")
        let bIsOurs = !oursIsInitiator
        try refuse(a5.frame, by: b, bIsOurs ? .replayed : .decryptFailed, "a replay of a5 (skipped key used, chain replaced)")
        try refuse(a0.frame, by: b, bIsOurs ? .replayed : .decryptFailed, "a replay of a0 (replaced chain)")
        try refuse(b0.frame, by: a, bIsOurs ? .decryptFailed : .replayed, "a replay of b0 (replaced chain)")
        XCTAssertEqual(try b.state(), stateB, "refusals left B unchanged")
        XCTAssertEqual(try a.state(), stateA, "refusals left A unchanged")

        // Tampering: session id (in the AD), pn (in the AD), ciphertext, tag; then the genuine frame.
        let a8 = try send(a)
        for (index, field) in [(5, "session id"), (18 + 35, "pn"), (18 + 40 + 3, "ciphertext"), (a8.frame.count - 1, "tag")] {
            var bad = a8.frame
            bad[index] ^= 0x04
            try refuse(bad, by: b, .decryptFailed, "a8 with its \(field) changed")
        }
        let b4 = try send(b)
        var stranger = b4.frame
        stranger[2] ^= 0x01  // another session's id with the same keys: the AD differs
        try refuse(stranger, by: a, .decryptFailed, "b4 under another session id")
        XCTAssertEqual(try b.state(), stateB.with(ns: stateB.ns + 1), "B only sent b4")
        try deliver(a8, to: b, "the genuine a8 after its tampered copies")
        try deliver(b4, to: a, "the genuine b4 after its tampered copy")

        // MAX_SKIP = 1000. b4 made A step, so a9 opens a new chain at n = 1000: accepted.
        try a.advance(1000)
        let a9 = try send(a)
        try deliver(a9, to: b, "a9: n = 1000 in a new chain")
        XCTAssertEqual(try b.state().skipped, 1000)
        // 1001 keys to skip in the current chain: refused, from the header, with nothing changed.
        try a.advance(1001)
        let a10 = try send(a)
        let before = try b.state()
        try refuse(a10.frame, by: b, .skipLimit, "a10 after 1001 lost messages")
        XCTAssertEqual(try b.state(), before)

        // B still talks to A after every refusal.
        let b5 = try send(b)
        try deliver(b5, to: a, "b5 after the refusals")
    }

    /// The other two bounds of MAX_SKIP: exactly 1000 keys skipped in the current chain are
    /// accepted, and a new chain whose first message has n = 1001 is refused (ours from the
    /// header before any DH; Syndace after a trial DH step it then discards).
    func testMaxSkipBounds() throws {
        for oursIsInitiator in [true, false] {
            let (a, b) = try makePair(oursIsInitiator: oursIsInitiator, id: "bounds-\(oursIsInitiator)")
            try deliver(try send(a), to: b, "a0")
            try a.advance(1000)
            try deliver(try send(a), to: b, "n = 1001 after nr = 1: 1000 skipped")
            XCTAssertEqual(try b.state().skipped, 1000)
            XCTAssertEqual(try b.state().nr, 1002)

            try deliver(try send(b), to: a, "b0 (A's DH step)")
            try a.advance(1001)
            let late = try send(a)
            let before = try b.state()
            try refuse(late.frame, by: b, .skipLimit, "n = 1001 in a new chain")
            XCTAssertEqual(try b.state(), before)
        }
    }

    /// Fixed keys: Syndace's ratchet, one process per party fed the party's `ratchet_keys`,
    /// replays every ratchet step of both scripts in the published vectors
    /// (`Tests/Fixtures/pigeon/conversations.json`): each `send` must produce the vector's message
    /// frame byte for byte, each delivered message frame must open to the vector's content
    /// (held frames when their handshake3 releases them), `advance` steps the sending chain, and
    /// each `state` step must match Ns, Nr, PN, the skipped-key count, DHs, DHr and the root key. Handshake frames are
    /// not Syndace's business: the session's root and binding come from the vector's
    /// `session_keys` (which `PigeonNoiseInteropTests` reproduces with noiseprotocol).
    func testSyndaceReplaysThePublishedConversations() throws {
        let json = try JSONSerialization.jsonObject(with: try Fixtures.data("pigeon/conversations.json"))
        guard let cases = (json as? [String: Any])?["cases"] as? [[String: Any]] else { throw ConversationVector.Malformed(field: "cases") }
        XCTAssertEqual(cases.count, 2)
        var checkedSends = 0, checkedDelivers = 0, checkedStates = 0
        for vector in cases {
            let name = vector["name"] as? String ?? "?"
            guard let parties = vector["parties"] as? [String: [String: Any]], let steps = vector["steps"] as? [[String: Any]] else {
                throw ConversationVector.Malformed(field: "\(name): parties/steps")
            }
            var peers: [String: PythonPeer] = [:]
            defer { for peer in peers.values { peer.terminate() } }
            for (party, fields) in parties {
                let peer = try PythonPeer(script: Fixtures.peerScript("ratchet_peer.py"))
                peers[party] = peer
                guard let keys = fields["ratchet_keys"] as? [String] else { throw ConversationVector.Malformed(field: "\(name): ratchet_keys") }
                try peer.request("queue_keys", ["keys": keys])
            }
            func peer(_ party: String) throws -> PythonPeer {
                guard let peer = peers[party] else { throw ConversationVector.Malformed(field: "\(name): party \(party)") }
                return peer
            }
            var ratchetPublic: [String: String] = [:]   // R_r of the responder, R_i of the initiator
            var binding = ""
            var held: [(party: String, frame: String)] = []

            func open(_ party: String, _ frame: String, expect content: String, _ what: String) throws {
                let r = try peer(party).request("decrypt", ["id": party, "binding": binding, "frame": frame])
                let padded = try Hex.decode(try r.string("plaintext"))
                XCTAssertEqual(Hex.encode(try Padding.unpad(padded)), content, "\(name): \(what)")
                checkedDelivers += 1
            }

            for (index, step) in steps.enumerated() {
                let what = "step \(index) (\(step["op"] as? String ?? "?"))"
                let party = step["party"] as? String ?? ""
                let expect = step["expect"] as? [String: Any] ?? [:]
                switch step["op"] as? String {
                case "deliver":
                    guard let frame = step["frame"] as? String, frame.count > 4 else { throw ConversationVector.Malformed(field: "\(name): \(what)") }
                    let type = frame.dropFirst(2).prefix(2)
                    let duplicate = expect["duplicate"] as? Bool ?? false
                    if type == "01", !duplicate {
                        ratchetPublic[party] = try peer(party).request("ratchet_key", ["id": party]).string("public")
                    } else if type == "02", !duplicate {
                        guard let keys = expect["session_keys"] as? [String: Any], let root = keys["ratchet_root"] as? String,
                              let bind = keys["binding"] as? String, let remote = ratchetPublic.first(where: { $0.key != party })?.value
                        else { throw ConversationVector.Malformed(field: "\(name): \(what) session_keys") }
                        binding = bind
                        ratchetPublic[party] = try peer(party).request("init_initiator", ["id": party, "root": root, "remote": remote]).string("public")
                    } else if type == "03", !duplicate {
                        guard let keys = expect["session_keys"] as? [String: Any], let root = keys["ratchet_root"] as? String,
                              let remote = ratchetPublic.first(where: { $0.key != party })?.value
                        else { throw ConversationVector.Malformed(field: "\(name): \(what) session_keys") }
                        _ = try peer(party).request("init_responder", ["id": party, "root": root, "remote": remote])
                        let released = expect["released"] as? [[String: Any]] ?? []
                        let mine = held.filter { $0.party == party }
                        XCTAssertEqual(mine.count, released.count, "\(name): \(what) released")
                        for (heldFrame, release) in zip(mine, released) {
                            guard let content = release["content"] as? String else { throw ConversationVector.Malformed(field: "\(name): released content") }
                            try open(party, heldFrame.frame, expect: content, "\(what), released")
                        }
                        held.removeAll { $0.party == party }
                    } else if type == "04" {
                        if expect["held"] as? Bool == true {
                            held.append((party, frame))
                        } else {
                            guard let content = expect["content"] as? String else { throw ConversationVector.Malformed(field: "\(name): \(what) content") }
                            try open(party, frame, expect: content, what)
                        }
                    }
                case "send":
                    guard let content = expect["content"] as? String, let paddedLength = expect["padded_length"] as? Int,
                          let frame = (expect["frames"] as? [String])?.last
                    else { throw ConversationVector.Malformed(field: "\(name): \(what)") }
                    let padded = try Padding.pad(try Hex.decode(content))
                    XCTAssertEqual(padded.count, paddedLength)
                    let session = String(frame.dropFirst(4).prefix(32))
                    let made = try peer(party).request("encrypt", ["id": party, "session": session, "binding": binding, "plaintext": Hex.encode(padded)])
                    XCTAssertEqual(try made.string("frame"), frame, "\(name): \(what): Syndace's frame")
                    checkedSends += 1
                case "advance":
                    guard let count = step["count"] as? Int else { throw ConversationVector.Malformed(field: "\(name): \(what)") }
                    try peer(party).request("advance", ["id": party, "count": count])
                case "state":
                    let r = try peer(party).request("state", ["id": party])
                    XCTAssertEqual(r["sending_chain_length"] as? Int, expect["ns"] as? Int, "\(name): \(what) ns")
                    XCTAssertEqual(r["receiving_chain_length"] as? Int, expect["nr"] as? Int, "\(name): \(what) nr")
                    XCTAssertEqual((r["previous_sending_chain_length"] as? Int) ?? 0, expect["pn"] as? Int, "\(name): \(what) pn")
                    XCTAssertEqual(r["skipped"] as? Int, expect["skipped"] as? Int, "\(name): \(what) skipped")
                    XCTAssertEqual(try r.string("dhs"), expect["dhs_pub"] as? String, "\(name): \(what) DHs")
                    XCTAssertEqual(try r.string("dhr"), expect["dhr"] as? String, "\(name): \(what) DHr")
                    XCTAssertEqual(SecretBytes(try Hex.decode(try r.string("root_key"))),
                                   SecretBytes(try Hex.decode(expect["root_key"] as? String ?? "")), "\(name): \(what) root key")
                    checkedStates += 1
                default:
                    continue
                }
            }
            XCTAssertTrue(held.isEmpty, "\(name): frames still held")
        }
        XCTAssertEqual(checkedSends, 25)
        XCTAssertEqual(checkedStates, 7)
        XCTAssertEqual(checkedDelivers, 24)
    }

    /// The one policy where the library and the profile part: a new chain whose `pn` skips more
    /// than 1000 keys of the old chain. The profile refuses it (`skip_limit`); Syndace warns,
    /// stores none of those keys and accepts the message. Pinned in both role assignments so a
    /// change on either side shows.
    func testPnBeyondMaxSkipIsTheOneDivergence() throws {
        for oursIsInitiator in [true, false] {
            let (a, b) = try makePair(oursIsInitiator: oursIsInitiator, id: "pn-\(oursIsInitiator)")
            try deliver(try send(a), to: b, "a0")
            try a.advance(1001)       // a1 … a1001 lost in A's first chain
            try deliver(try send(b), to: a, "b0 (A's DH step)")
            let next = try send(a)    // new chain, pn = 1002, while B's Nr is 1
            XCTAssertEqual(try a.state().pn, 1002)
            if let syndace = b as? SyndaceParty {
                try deliver(next, to: b, "Syndace accepts a pn over MAX_SKIP")
                XCTAssertEqual(syndace.lastWarnings, ["UserWarning"])
                XCTAssertEqual(try b.state().skipped, 0, "Syndace stored none of the 1001 keys")
            } else {
                try refuse(next.frame, by: b, .skipLimit, "a pn over MAX_SKIP")
            }
        }
    }
}

extension PigeonRatchetInteropTests.State {
    func with(ns: Int) -> Self {
        var copy = self
        copy.ns = ns
        return copy
    }
}
