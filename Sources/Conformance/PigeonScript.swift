import Nostr
import Pigeon

/// One `script` case of the Pigeon vectors: parties with fixed keys run `start`, `send`,
/// `advance`, `deliver` and `state` steps in order, each engine transition compared with the
/// vector byte for byte.
struct PigeonScript {
    struct Party {
        var state: PigeonState
        var keys: ScriptedKeySource
        let identity: Ed25519PublicKey
    }

    let entry: JSONValue
    var parties: [String: Party] = [:]

    init(_ entry: JSONValue) throws {
        self.entry = entry
        guard let members = try PigeonConformance.field(entry, "parties").objectValue else { throw CaseFailure("parties is not an object") }
        for member in members {
            parties[member.key] = try Self.party(member.value, name: member.key)
        }
    }

    static func party(_ p: JSONValue, name: String) throws -> Party {
        let identity = try Ed25519PrivateKey(seed: PigeonConformance.hex(p, "identity_seed", 32))
        let staticKey = try X25519PrivateKey(bytes: PigeonConformance.hex(p, "static_private", 32))
        guard identity.publicKey.bytes == (try PigeonConformance.hex(p, "identity_key", 32)) else {
            throw CaseFailure("\(name): identity_key differs from the seed's")
        }
        let card = try ContactCard(bytes: PigeonConformance.hex(p, "card"))
        var state = PigeonState(local: try LocalIdentity(identityKey: identity, staticKey: staticKey, card: card))
        for (i, value) in (p["contacts"]?.arrayValue ?? []).enumerated() {
            state = try state.addContact(ContactCard(bytes: PigeonConformance.hexValue(value, "\(name).contacts[\(i)]"))).state
        }
        func keys(_ field: String) throws -> [X25519PrivateKey] {
            try (p[field]?.arrayValue ?? []).enumerated().map { i, value in
                try X25519PrivateKey(bytes: PigeonConformance.hexValue(value, "\(name).\(field)[\(i)]"))
            }
        }
        return Party(state: state, keys: ScriptedKeySource(ephemeralKeys: try keys("ephemeral_keys"), ratchetKeys: try keys("ratchet_keys")),
                     identity: identity.publicKey)
    }

    mutating func run() throws {
        guard let steps = try PigeonConformance.field(entry, "steps").arrayValue, !steps.isEmpty else { throw CaseFailure("no steps") }
        for (i, step) in steps.enumerated() {
            let op = step["op"]?.stringValue ?? "?"
            do {
                try runStep(op, step)
            } catch let failure as CaseFailure {
                throw CaseFailure("step \(i) (\(op)): \(failure.description)")
            } catch {
                throw CaseFailure("step \(i) (\(op)): \(error)")
            }
        }
    }

    func party(_ step: JSONValue) throws -> (String, Party) {
        let name = try PigeonConformance.string(step, "party")
        guard let party = parties[name] else { throw CaseFailure("no party \(name)") }
        return (name, party)
    }

    func peer(_ step: JSONValue) throws -> Ed25519PublicKey {
        let name = try PigeonConformance.string(step, "peer")
        guard let party = parties[name] else { throw CaseFailure("no party \(name)") }
        return party.identity
    }

    /// Stores a party's new state after checking it survives its byte encoding.
    mutating func commit(_ name: String, _ state: PigeonState, _ keys: ScriptedKeySource) throws {
        guard !keys.exhausted else { throw CaseFailure("\(name) needed more keys than the vector lists") }
        let decoded: PigeonState
        do { decoded = try PigeonState(encoded: state.encoded) } catch { throw CaseFailure("state does not decode: \(error)") }
        guard decoded == state else { throw CaseFailure("state changed through its encoding") }
        let fromRecords = try PigeonState(records: state.records)
        guard fromRecords == state else { throw CaseFailure("state changed through its records") }
        parties[name]?.state = state
        parties[name]?.keys = keys
    }

    mutating func runStep(_ op: String, _ step: JSONValue) throws {
        let expect = step["expect"]
        switch op {
        case "note":
            return
        case "start":
            let (name, party) = try party(step)
            var keys = party.keys
            let t = try party.state.start(with: peer(step), now: UInt64(PigeonConformance.integer(step, "now_ms")), keys: &keys)
            try expectBytes(t.output.frame, expect, "frame")
            try commit(name, t.state, keys)
        case "send":
            let (name, party) = try party(step)
            let c = try PigeonConformance.field(step, "content")
            let content = try MessageContent(
                kind: UInt8(PigeonConformance.integer(c, "kind")), msgID: PigeonConformance.hex(c, "msg_id", 16),
                sentAt: UInt64(PigeonConformance.integer(c, "sent_at")), body: PigeonConformance.hex(c, "body"))
            let t = try party.state.send(to: peer(step), content: content, now: UInt64(PigeonConformance.integer(step, "now_ms")))
            try expectBytes(t.output.content, expect, "content")
            guard t.output.paddedLength == (try PigeonConformance.integer(expect, "padded_length")) else {
                throw CaseFailure("padded_length \(t.output.paddedLength)")
            }
            try expectFrames(t.output.frames, expect, "frames")
            try commit(name, t.state, party.keys)
        case "advance":
            let (name, party) = try party(step)
            let t = try party.state.advanceSendingChain(with: peer(step), count: Int(PigeonConformance.integer(step, "count")))
            try commit(name, t.state, party.keys)
        case "deliver":
            try deliver(step, expect)
        case "state":
            let (_, party) = try party(step)
            guard let (id, snapshot) = party.state.ratchetSnapshot(with: try peer(step)) else { throw CaseFailure("no current session") }
            try expectBytes(id.bytes, expect, "session")
            try expectBytes(snapshot.rootKey.bytes, expect, "root_key")
            try expectBytes(snapshot.dhsPublic.bytes, expect, "dhs_pub")
            try expectBytes(snapshot.dhr?.bytes ?? [], expect, "dhr")
            guard Int64(snapshot.ns) == (try PigeonConformance.integer(expect, "ns")),
                  Int64(snapshot.nr) == (try PigeonConformance.integer(expect, "nr")),
                  Int64(snapshot.pn) == (try PigeonConformance.integer(expect, "pn")),
                  Int64(snapshot.skippedCount) == (try PigeonConformance.integer(expect, "skipped"))
            else { throw CaseFailure("counters ns=\(snapshot.ns) nr=\(snapshot.nr) pn=\(snapshot.pn) skipped=\(snapshot.skippedCount)") }
        default:
            throw CaseFailure("unknown op \(op)")
        }
    }

    mutating func deliver(_ step: JSONValue, _ expect: JSONValue?) throws {
        let (name, party) = try party(step)
        let frame = try PigeonConformance.hex(step, "frame")
        let now = UInt64(try PigeonConformance.integer(step, "now_ms"))
        var keys = party.keys
        if let code = expect?["error"]?.stringValue {
            do {
                _ = try party.state.deliver(frame: frame, now: now, keys: &keys)
            } catch {
                guard error.code == code else { throw CaseFailure("refused with \(error.code), expected \(code)") }
                guard keys.ephemeralIndex == party.keys.ephemeralIndex, keys.ratchetIndex == party.keys.ratchetIndex else {
                    throw CaseFailure("a refusal consumed keys")
                }
                return
            }
            throw CaseFailure("accepted, expected \(code)")
        }
        let t = try party.state.deliver(frame: frame, now: now, keys: &keys)
        let out = t.output
        try expectFrames(out.outputs, expect, "outputs")
        try expectFlag(out.duplicate, expect, "duplicate")
        try expectFlag(out.contactRequest, expect, "contact_request")
        try expectFlag(out.held, expect, "held")
        if expect?["session"] != nil {
            guard let established = out.established else { throw CaseFailure("no session established") }
            try expectBytes(established.id.bytes, expect, "session")
            if let keysExpect = expect?["session_keys"] {
                try expectBytes(established.keys.handshakeHash, keysExpect, "handshake_hash")
                try expectBytes(established.keys.chainingKey.bytes, keysExpect, "chaining_key")
                try expectBytes(established.keys.ratchetRoot.bytes, keysExpect, "ratchet_root")
                try expectBytes(established.keys.binding, keysExpect, "binding")
            }
        } else if out.established != nil {
            throw CaseFailure("a session was established")
        }
        if expect?["content"] != nil {
            guard let message = out.message, let content = message.content, message.refusal == nil else {
                throw CaseFailure("no content (refusal: \(out.message?.refusal?.code ?? "none"))")
            }
            try expectBytes(content.bytes, expect, "content")
        } else if out.message != nil {
            throw CaseFailure("a message was received")
        }
        let released = expect?["released"]?.arrayValue ?? []
        guard released.count == out.released.count else { throw CaseFailure("\(out.released.count) frames released, expected \(released.count)") }
        for (expected, actual) in zip(released, out.released) {
            switch actual.result {
            case .success(let message):
                guard let content = message.content, message.refusal == nil else { throw CaseFailure("released frame refused") }
                try expectBytes(content.bytes, expected, "content")
            case .failure(let error):
                guard expected["error"]?.stringValue == error.code else { throw CaseFailure("released frame refused with \(error.code)") }
            }
        }
        try commit(name, t.state, keys)
    }

    func expectBytes(_ actual: [UInt8], _ expect: JSONValue?, _ key: String) throws {
        guard actual == (try PigeonConformance.hex(expect, key)) else { throw CaseFailure("\(key) differs") }
    }

    func expectFrames(_ actual: [[UInt8]], _ expect: JSONValue?, _ key: String) throws {
        guard let list = expect?[key]?.arrayValue else { throw CaseFailure("\(key) missing") }
        let expected = try list.map { try PigeonConformance.hexValue($0, key) }
        guard actual.count == expected.count else { throw CaseFailure("\(actual.count) \(key), expected \(expected.count)") }
        for (i, (a, e)) in zip(actual, expected).enumerated() where a != e {
            throw CaseFailure("\(key)[\(i)] differs (\(a.count) bytes, expected \(e.count))")
        }
    }

    func expectFlag(_ actual: Bool, _ expect: JSONValue?, _ key: String) throws {
        let expected = expect?[key]?.boolValue ?? false
        guard actual == expected else { throw CaseFailure("\(key) is \(actual), expected \(expected)") }
    }
}
