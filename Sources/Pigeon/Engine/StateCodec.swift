/// The stable, versioned byte encoding of the engine's state, one record per
/// `PigeonRecordKey` so the store writes only what a transition changed.
///
/// Every record starts with its format version (1). Integers are big-endian; variable fields
/// carry a length prefix; optional fields a presence byte. Decoding checks every length and
/// value and throws `PigeonStateError`, never traps: a damaged row is refused, not trusted.
/// These records hold private keys and chain keys: they belong in the encrypted store only.
public enum PigeonStateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A record of a format version this code does not know.
    case unsupportedVersion(record: String, version: UInt8)
    /// A record that does not decode; `record` names it and `field` what was wrong (never a value).
    case malformed(record: String, field: String)
    /// A record stored under a key that does not match its content.
    case keyMismatch(record: String)

    public var description: String {
        switch self {
        case .unsupportedVersion(let record, let version): return "\(record): unsupported version \(version)"
        case .malformed(let record, let field): return "\(record): malformed \(field)"
        case .keyMismatch(let record): return "\(record): stored under another key"
        }
    }
}

public enum PigeonStateCodec {
    public static let version: UInt8 = 1
}

struct RecordWriter {
    var bytes: [UInt8] = [PigeonStateCodec.version]

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: Int) { bytes.appendBigEndian(UInt16(clamping: v)) }
    mutating func u32(_ v: UInt32) { bytes.appendBigEndian(v) }
    mutating func u64(_ v: UInt64) { bytes.appendBigEndian(v) }
    mutating func raw(_ v: [UInt8]) { bytes += v }
    mutating func blob(_ v: [UInt8]) {
        bytes.appendBigEndian(UInt32(clamping: v.count))
        bytes += v
    }
    mutating func optionalU64(_ v: UInt64?) {
        if let v { u8(1); u64(v) } else { u8(0) }
    }
    mutating func optionalRaw(_ v: [UInt8]?) {
        if let v { u8(1); raw(v) } else { u8(0) }
    }
}

struct RecordReader {
    let record: String
    var reader: ByteReader

    init(_ bytes: [UInt8], record: String) throws(PigeonStateError) {
        self.record = record
        reader = ByteReader(bytes)
        guard let version = try? reader.readByte() else { throw .malformed(record: record, field: "version") }
        guard version == PigeonStateCodec.version else { throw .unsupportedVersion(record: record, version: version) }
    }

    func fail(_ field: String) -> PigeonStateError { .malformed(record: record, field: field) }

    mutating func u8(_ field: String) throws(PigeonStateError) -> UInt8 {
        do { return try reader.readByte() } catch { throw fail(field) }
    }
    mutating func u16(_ field: String) throws(PigeonStateError) -> Int {
        do { return Int(try reader.readInteger(UInt16.self)) } catch { throw fail(field) }
    }
    mutating func u32(_ field: String) throws(PigeonStateError) -> UInt32 {
        do { return try reader.readInteger(UInt32.self) } catch { throw fail(field) }
    }
    mutating func u64(_ field: String) throws(PigeonStateError) -> UInt64 {
        do { return try reader.readInteger(UInt64.self) } catch { throw fail(field) }
    }
    mutating func raw(_ count: Int, _ field: String) throws(PigeonStateError) -> [UInt8] {
        do { return try reader.read(count) } catch { throw fail(field) }
    }
    mutating func blob(_ field: String, max: Int) throws(PigeonStateError) -> [UInt8] {
        let count = Int(try u32(field))
        guard count <= max else { throw fail(field) }
        return try raw(count, field)
    }
    mutating func flag(_ field: String) throws(PigeonStateError) -> Bool {
        switch try u8(field) {
        case 0: return false
        case 1: return true
        default: throw fail(field)
        }
    }
    mutating func optionalU64(_ field: String) throws(PigeonStateError) -> UInt64? {
        try flag(field) ? try u64(field) : nil
    }
    mutating func optionalRaw(_ count: Int, _ field: String) throws(PigeonStateError) -> [UInt8]? {
        try flag(field) ? try raw(count, field) : nil
    }
    mutating func x25519Private(_ field: String) throws(PigeonStateError) -> X25519PrivateKey {
        do { return try X25519PrivateKey(bytes: try raw(32, field)) } catch { throw fail(field) }
    }
    mutating func x25519Public(_ field: String) throws(PigeonStateError) -> X25519PublicKey {
        X25519PublicKey(validBytes: try raw(32, field))
    }
    mutating func identity(_ field: String) throws(PigeonStateError) -> Ed25519PublicKey {
        do { return try Ed25519PublicKey(bytes: try raw(32, field)) } catch { throw fail(field) }
    }
    mutating func sessionID(_ field: String) throws(PigeonStateError) -> SessionID {
        SessionID(valid: try raw(SessionID.length, field))
    }
    mutating func card(_ field: String) throws(PigeonStateError) -> ContactCard {
        do { return try ContactCard(bytes: try blob(field, max: ContactCard.maximumLength)) } catch { throw fail(field) }
    }
    mutating func frame(_ field: String, type: FrameType) throws(PigeonStateError) -> [UInt8] {
        let bytes = try blob(field, max: Frame.maximumLength)
        guard let frame = try? Frame(bytes: bytes), frame.type == type else { throw fail(field) }
        return bytes
    }
    func end() throws(PigeonStateError) {
        guard reader.isAtEnd else { throw fail("trailing bytes") }
    }
    var isAtEnd: Bool { reader.isAtEnd }
}

extension RecordWriter {
    /// A stranger's origin, written after a record's older fields. A contact's is written as
    /// nothing at all, as every record from before strangers had budgets: one encoding each.
    mutating func trailingOrigin(_ origin: FrameOrigin) {
        guard case .stranger(let key) = origin else { return }
        u8(1)
        blob(key)
    }
}

extension RecordReader {
    /// The trailing origin `RecordWriter.trailingOrigin` wrote (none: a contact's).
    mutating func trailingOrigin() throws(PigeonStateError) -> FrameOrigin {
        guard !isAtEnd else { return .contact }
        guard try u8("origin") == 1 else { throw fail("origin") }
        return .stranger(budgetKey: try blob("origin key", max: FrameOriginLimits.maxBudgetKeyLength))
    }
}

enum FrameOriginLimits {
    /// A seal's `N` or a mesh id: 32 bytes at most.
    static let maxBudgetKeyLength = 32
}

// MARK: - Records

extension LocalIdentity {
    public var encoded: [UInt8] {
        var w = RecordWriter()
        w.raw(identityKey.seedBytes)
        w.raw(staticKey.rawBytes)
        w.blob(card.bytes)
        return w.bytes
    }

    public init(encoded bytes: [UInt8]) throws(PigeonStateError) {
        var r = try RecordReader(bytes, record: "local")
        let seed = try r.raw(32, "identity key")
        let identity: Ed25519PrivateKey
        do { identity = try Ed25519PrivateKey(seed: seed) } catch { throw r.fail("identity key") }
        let staticKey = try r.x25519Private("static key")
        let card = try r.card("card")
        try r.end()
        do { try self.init(identityKey: identity, staticKey: staticKey, card: card) } catch { throw r.fail("card of another identity") }
    }
}

extension Contact {
    public var encoded: [UInt8] {
        var w = RecordWriter()
        w.blob(card.bytes)
        w.u8(state.rawValue)
        w.optionalU64(verifiedAt)
        w.optionalU64(lastRecoveryHandshakeAt)
        return w.bytes
    }

    public init(encoded bytes: [UInt8]) throws(PigeonStateError) {
        var r = try RecordReader(bytes, record: "contact")
        let card = try r.card("card")
        guard let state = State(rawValue: try r.u8("state")) else { throw r.fail("state") }
        let verifiedAt = try r.optionalU64("verified_at")
        let recovery = try r.optionalU64("last recovery handshake")
        try r.end()
        self.init(card: card, state: state, verifiedAt: verifiedAt, lastRecoveryHandshakeAt: recovery)
    }
}

extension DoubleRatchet {
    func write(to w: inout RecordWriter) {
        w.raw(dhs.rawBytes)
        w.optionalRaw(dhr?.bytes)
        w.raw(rootKey.bytes)
        w.optionalRaw(sendingChain?.bytes)
        w.optionalRaw(receivingChain?.bytes)
        w.u32(ns)
        w.u32(nr)
        w.u32(pn)
        w.u16(skipped.count)
        for key in skipped {
            w.raw(key.dh.bytes)
            w.u32(key.n)
            w.raw(key.messageKey.bytes)
            w.u64(key.storedAt)
        }
        w.u8(UInt8(clamping: retired.count))
        for key in retired { w.raw(key.bytes) }
    }

    static func read(from r: inout RecordReader) throws(PigeonStateError) -> DoubleRatchet {
        let dhs = try r.x25519Private("DHs")
        let dhr = try r.optionalRaw(32, "DHr").map(X25519PublicKey.init(validBytes:))
        let rk = SecretBytes(try r.raw(32, "RK"))
        let cks = try r.optionalRaw(32, "CKs").map(SecretBytes.init)
        let ckr = try r.optionalRaw(32, "CKr").map(SecretBytes.init)
        var state = DoubleRatchet(dhs: dhs, dhr: dhr, rootKey: rk, sendingChain: cks, receivingChain: ckr)
        state.ns = try r.u32("Ns")
        state.nr = try r.u32("Nr")
        state.pn = try r.u32("PN")
        let skippedCount = try r.u16("skipped count")
        guard skippedCount <= maxStoredSkippedKeys else { throw r.fail("skipped count") }
        for _ in 0..<skippedCount {
            let dh = try r.x25519Public("skipped DH")
            let n = try r.u32("skipped n")
            let mk = SecretBytes(try r.raw(32, "skipped mk"))
            let storedAt = try r.u64("skipped stored_at")
            state.skipped.append(SkippedKey(dh: dh, n: n, messageKey: mk, storedAt: storedAt))
        }
        let retiredCount = Int(try r.u8("retired count"))
        guard retiredCount <= retiredKeyCount else { throw r.fail("retired count") }
        for _ in 0..<retiredCount { state.retired.append(try r.x25519Public("retired key")) }
        return state
    }
}

extension Session {
    public var encoded: [UInt8] {
        var w = RecordWriter()
        w.raw(id.bytes)
        w.raw(contact.bytes)
        w.u8(role.rawValue)
        w.u64(handshakeTimestamp)
        w.raw(binding)
        w.u64(establishedAt)
        w.blob(handshake3)
        w.u8(confirmed ? 1 : 0)
        switch standing {
        case .current: w.u8(0)
        case .previous(let since): w.u8(1); w.u64(since)
        }
        ratchet.write(to: &w)
        return w.bytes
    }

    public init(encoded bytes: [UInt8]) throws(PigeonStateError) {
        var r = try RecordReader(bytes, record: "session")
        id = try r.sessionID("id")
        contact = try r.identity("contact")
        guard let role = SessionRole(rawValue: try r.u8("role")) else { throw r.fail("role") }
        self.role = role
        handshakeTimestamp = try r.u64("handshake ts")
        binding = try r.raw(96, "binding")
        establishedAt = try r.u64("established_at")
        handshake3 = try r.frame("handshake3", type: .handshake3)
        confirmed = try r.flag("confirmed")
        standing = try r.flag("standing") ? .previous(since: try r.u64("previous since")) : .current
        ratchet = try DoubleRatchet.read(from: &r)
        try r.end()
        guard Frame.header(.handshake3, id) == Array(handshake3.prefix(Frame.headerLength)) else { throw r.fail("handshake3 session") }
    }
}

extension PendingHandshake {
    public var encoded: [UInt8] {
        var w = RecordWriter()
        switch self {
        case .initiator(let p):
            w.u8(SessionRole.initiator.rawValue)
            w.raw(p.contact.bytes)
            w.raw(p.ephemeral.rawBytes)
            w.u64(p.timestamp)
            w.blob(p.handshake1)
        case .responder(let p):
            w.u8(SessionRole.responder.rawValue)
            w.raw(p.noise.symmetric.chainingKeyBytes)
            w.raw(p.noise.symmetric.handshakeHash)
            w.optionalRaw(p.noise.symmetric.cipher.key?.bytes)
            w.u64(p.noise.symmetric.cipher.nonce)
            w.raw(p.noise.ephemeral.rawBytes)
            w.raw(p.ratchetKey.rawBytes)
            w.u64(p.timestamp)
            w.blob(p.handshake1)
            w.blob(p.handshake2)
            w.trailingOrigin(p.origin)
        }
        return w.bytes
    }

    public init(encoded bytes: [UInt8]) throws(PigeonStateError) {
        var r = try RecordReader(bytes, record: "pending")
        switch SessionRole(rawValue: try r.u8("role")) {
        case .initiator:
            let contact = try r.identity("contact")
            let ephemeral = try r.x25519Private("e")
            let ts = try r.u64("ts")
            let h1 = try r.frame("handshake1", type: .handshake1)
            try r.end()
            self = .initiator(InitiatorPending(contact: contact, ephemeral: ephemeral, timestamp: ts, handshake1: h1))
        case .responder:
            let ck = try r.raw(32, "ck")
            let h = try r.raw(32, "h")
            let key = try r.optionalRaw(32, "k")
            let nonce = try r.u64("n")
            var cipher = NoiseCipherState(key: key)
            cipher.nonce = nonce
            let ephemeral = try r.x25519Private("e")
            let ratchetKey = try r.x25519Private("r")
            let ts = try r.u64("ts")
            let h1 = try r.frame("handshake1", type: .handshake1)
            let h2 = try r.frame("handshake2", type: .handshake2)
            let origin = try r.trailingOrigin()
            try r.end()
            let noise = NoiseXXResponderSentResponse(
                symmetric: NoiseSymmetricState(chainingKey: ck, handshakeHash: h, cipher: cipher), ephemeral: ephemeral)
            self = .responder(ResponderPending(noise: noise, ratchetKey: ratchetKey, timestamp: ts, handshake1: h1, handshake2: h2,
                                               origin: origin))
        case nil:
            throw r.fail("role")
        }
    }

    /// The session id the record's handshake1 names.
    var sessionID: SessionID {
        switch self {
        case .initiator(let p): return SessionID(valid: Array(p.handshake1[2..<18]))
        case .responder(let p): return SessionID(valid: Array(p.handshake1[2..<18]))
        }
    }
}

enum HeldFramesCodec {
    static func encode(_ frames: [HeldFrame]) -> [UInt8] {
        var w = RecordWriter()
        w.u16(frames.count)
        for frame in frames {
            w.u64(frame.receivedAt)
            w.blob(frame.frame)
        }
        return w.bytes
    }

    static func decode(_ bytes: [UInt8], session: SessionID) throws(PigeonStateError) -> [HeldFrame] {
        var r = try RecordReader(bytes, record: "held")
        let count = try r.u16("count")
        guard count <= PigeonLimits.maxHeldPerSession else { throw r.fail("count") }
        var out: [HeldFrame] = []
        for _ in 0..<count {
            let at = try r.u64("received_at")
            let frame = try r.frame("frame", type: .message)
            guard Array(frame[2..<18]) == session.bytes else { throw PigeonStateError.keyMismatch(record: "held") }
            out.append(HeldFrame(frame: frame, receivedAt: at))
        }
        try r.end()
        return out
    }
}

extension SeenEphemeralCache {
    /// The floors record: floor ‖ 0 ‖ (strangerFloor ‖ 0, only when non-zero). The entries are
    /// records of their own (`entryRecord`); records of earlier versions carried them here, in
    /// place of the zero counts, and still decode.
    public var encoded: [UInt8] {
        var w = RecordWriter()
        w.u64(floor)
        w.u32(0)
        if strangerFloor != 0 {
            w.u64(strangerFloor)
            w.u32(0)
        }
        return w.bytes
    }

    public init(encoded bytes: [UInt8]) throws(PigeonStateError) {
        var r = try RecordReader(bytes, record: "seen")
        (entries, floor) = try Self.read(&r, capacity: Self.capacity)
        if !r.isAtEnd {
            (strangerEntries, strangerFloor) = try Self.read(&r, capacity: StrangerLimits.seenCapacity)
            // An empty strangers' part is written as none: one encoding for each state.
            guard !strangerEntries.isEmpty || strangerFloor != 0 else { throw r.fail("empty strangers' part") }
        }
        try r.end()
        if !entries.isEmpty || !strangerEntries.isEmpty {
            fromSingleRecord = true
            touched = Set(entries.keys).union(strangerEntries.keys)
        }
    }

    private static func read(_ r: inout RecordReader, capacity: Int) throws(PigeonStateError) -> ([X25519PublicKey: UInt64], UInt64) {
        let floor = try r.u64("floor")
        let count = Int(try r.u32("count"))
        guard count <= capacity else { throw r.fail("count") }
        var entries: [X25519PublicKey: UInt64] = [:]
        for _ in 0..<count {
            let key = try r.x25519Public("e")
            entries[key] = try r.u64("ts")
        }
        guard entries.count == count else { throw r.fail("duplicate entry") }
        return (entries, floor)
    }

    /// One entry's record: ts ‖ origin (0 a contact's handshake1, 1 a stranger's).
    func entryRecord(_ e: X25519PublicKey) -> [UInt8]? {
        guard let (timestamp, stranger) = entry(e) else { return nil }
        var w = RecordWriter()
        w.u64(timestamp)
        w.u8(stranger ? 1 : 0)
        return w.bytes
    }

    /// Adds an entry read from its record.
    mutating func restoreEntry(_ e: X25519PublicKey, record bytes: [UInt8]) throws(PigeonStateError) {
        var r = try RecordReader(bytes, record: "seen entry")
        let timestamp = try r.u64("ts")
        let origin = try r.u8("origin")
        guard origin <= 1 else { throw r.fail("origin") }
        try r.end()
        guard restore(e, timestamp: timestamp, stranger: origin == 1) else { throw r.fail("count") }
    }
}

// MARK: - The whole state

extension PigeonState {
    /// The bytes of one record, or nil when the state has none under `key` (delete it).
    public func record(_ key: PigeonRecordKey) -> [UInt8]? {
        switch key {
        case .local: return local.encoded
        case .seenCache: return seen.encoded
        case .seenEntry(let e): return seen.entryRecord(e)
        case .contact(let k): return contacts[k]?.encoded
        case .session(let id): return sessions[id]?.encoded
        case .pending(let id): return pending[id]?.encoded
        case .held(let id): return held[id].map(HeldFramesCodec.encode)
        }
    }

    /// Every record of the state.
    public var records: [PigeonRecordKey: [UInt8]] {
        var keys: [PigeonRecordKey] = [.local, .seenCache]
        keys += seen.entries.keys.map { .seenEntry($0) } + seen.strangerEntries.keys.map { .seenEntry($0) }
        keys += contacts.keys.map { .contact($0) }
        keys += sessions.keys.map { .session($0) }
        keys += pending.keys.map { .pending($0) }
        keys += held.keys.map { .held($0) }
        var out: [PigeonRecordKey: [UInt8]] = [:]
        for key in keys { out[key] = record(key) }
        return out
    }

    /// Rebuilds a state from its records (as the store reads them back). `local` is required;
    /// a missing seen cache is an empty one.
    public init(records: [PigeonRecordKey: [UInt8]]) throws(PigeonStateError) {
        guard let localBytes = records[.local] else { throw .malformed(record: "local", field: "missing") }
        self.init(local: try LocalIdentity(encoded: localBytes))
        if let seenBytes = records[.seenCache] { seen = try SeenEphemeralCache(encoded: seenBytes) }
        for (key, bytes) in records {
            switch key {
            case .local, .seenCache:
                continue
            case .seenEntry(let e):
                // An entry both as a record and in an earlier version's single record: the
                // record written last (its own) is the one a later transition kept.
                if seen.fromSingleRecord, seen.contains(e) { continue }
                try seen.restoreEntry(e, record: bytes)
            case .contact(let k):
                let contact = try Contact(encoded: bytes)
                guard contact.identityKey == k else { throw .keyMismatch(record: "contact") }
                contacts[k] = contact
            case .session(let id):
                let session = try Session(encoded: bytes)
                guard session.id == id else { throw .keyMismatch(record: "session") }
                sessions[id] = session
            case .pending(let id):
                let p = try PendingHandshake(encoded: bytes)
                guard p.sessionID == id else { throw .keyMismatch(record: "pending") }
                pending[id] = p
            case .held(let id):
                held[id] = try HeldFramesCodec.decode(bytes, session: id)
            }
        }
    }

    /// The whole state as one blob: version ‖ count ‖ (tag ‖ key ‖ record)*, records in a
    /// fixed order so equal states encode equally.
    public var encoded: [UInt8] {
        var w = RecordWriter()
        let all = records.sorted { $0.key.description < $1.key.description }
        w.u32(UInt32(all.count))
        for (key, bytes) in all {
            switch key {
            case .local: w.u8(0)
            case .seenCache: w.u8(1)
            case .contact(let k): w.u8(2); w.raw(k.bytes)
            case .session(let id): w.u8(3); w.raw(id.bytes)
            case .pending(let id): w.u8(4); w.raw(id.bytes)
            case .held(let id): w.u8(5); w.raw(id.bytes)
            case .seenEntry(let e): w.u8(6); w.raw(e.bytes)
            }
            w.blob(bytes)
        }
        return w.bytes
    }

    public init(encoded bytes: [UInt8]) throws(PigeonStateError) {
        var r = try RecordReader(bytes, record: "state")
        let count = Int(try r.u32("count"))
        var records: [PigeonRecordKey: [UInt8]] = [:]
        for _ in 0..<count {
            let key: PigeonRecordKey
            switch try r.u8("record tag") {
            case 0: key = .local
            case 1: key = .seenCache
            case 2: key = .contact(try r.identity("contact key"))
            case 3: key = .session(try r.sessionID("session key"))
            case 4: key = .pending(try r.sessionID("pending key"))
            case 5: key = .held(try r.sessionID("held key"))
            case 6: key = .seenEntry(try r.x25519Public("seen entry key"))
            default: throw r.fail("record tag")
            }
            guard records[key] == nil else { throw r.fail("duplicate record") }
            records[key] = try r.blob("record", max: 1 << 24)
        }
        try r.end()
        try self.init(records: records)
    }
}
