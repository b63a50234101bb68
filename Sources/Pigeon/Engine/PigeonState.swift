import Nostr

/// Everything one node knows about its direct messages (section 7), as one value: the own
/// identity, contacts, sessions, pending handshakes, the seen-ephemeral cache and held frames.
///
/// The engine's transitions (`start`, `deliver`, `send`, …, in the `PigeonState+*` files) are
/// pure: `(state, input, now, keys) → PigeonTransition` with the new state, the outputs and the
/// records that changed, or a thrown `PigeonError` and nothing changed. The store persists the
/// records of `changes` (see `PigeonRecordKey`) in the transaction section 7 asks for, before
/// any output frame leaves.
public struct PigeonState: Sendable, Equatable {
    public internal(set) var local: LocalIdentity
    public internal(set) var contacts: [Ed25519PublicKey: Contact]
    public internal(set) var sessions: [SessionID: Session]
    public internal(set) var pending: [SessionID: PendingHandshake]
    public internal(set) var seen: SeenEphemeralCache
    /// Held message frames per pending responder session id, in arrival order.
    public internal(set) var held: [SessionID: [HeldFrame]]

    /// A node with no contacts yet.
    public init(local: LocalIdentity) {
        self.local = local
        contacts = [:]
        sessions = [:]
        pending = [:]
        seen = SeenEphemeralCache()
        held = [:]
    }

    init(local: LocalIdentity, contacts: [Ed25519PublicKey: Contact], sessions: [SessionID: Session],
         pending: [SessionID: PendingHandshake], seen: SeenEphemeralCache, held: [SessionID: [HeldFrame]]) {
        self.local = local
        self.contacts = contacts
        self.sessions = sessions
        self.pending = pending
        self.seen = seen
        self.held = held
    }

    /// The Noise prologue: "burrow-pigeon-v1:prologue" ‖ 0x01.
    static let prologue: [UInt8] = Domain.prologue + [ProfileVersion.v1]

    // MARK: Queries

    /// The contact's current session (the one used to send), if any.
    public func currentSession(with contact: Ed25519PublicKey) -> Session? {
        sessions.values.first { $0.contact == contact && $0.isCurrent }
    }

    /// All sessions with `contact`, current first, then previous by recency.
    public func sessions(with contact: Ed25519PublicKey) -> [Session] {
        sessions.values.filter { $0.contact == contact }.sorted { a, b in
            switch (a.standing, b.standing) {
            case (.current, _): return true
            case (_, .current): return false
            case (.previous(let x), .previous(let y)): return x > y || (x == y && a.id < b.id)
            }
        }
    }

    public var heldFrameCount: Int { held.values.reduce(0) { $0 + $1.count } }

    /// Held frames of strangers' pending states (`strangers`), or of contacts'.
    func heldFrameCount(strangers: Bool) -> Int {
        held.reduce(0) { sum, entry in
            guard case .responder(let p)? = pending[entry.key], p.origin.isStranger == strangers else { return sum }
            return sum + entry.value.count
        }
    }

    /// The safety number with `contact`.
    public func safetyNumber(with contact: Ed25519PublicKey) -> SafetyNumber? {
        guard let card = contacts[contact]?.card else { return nil }
        return SafetyNumber(local.card, card)
    }
}

/// The result of a transition: the new state, what it produced, and the records that changed.
public struct PigeonTransition<Output: Sendable>: Sendable {
    public let state: PigeonState
    public let output: Output
    /// Records to write (present in `state`) or delete (absent from it), in one transaction.
    public let changes: Set<PigeonRecordKey>
}

extension PigeonTransition: Equatable where Output: Equatable {}

/// One persisted record of the engine's state, as the store keys it.
public enum PigeonRecordKey: Sendable, Hashable, CustomStringConvertible {
    case local
    /// The seen-ephemeral cache's floors (and, in records of earlier versions, its entries).
    case seenCache
    /// One entry of the seen-ephemeral cache.
    case seenEntry(X25519PublicKey)
    case contact(Ed25519PublicKey)
    case session(SessionID)
    case pending(SessionID)
    case held(SessionID)

    /// A stable text key, e.g. `session:<hex>`.
    public var description: String {
        switch self {
        case .local: return "local"
        case .seenCache: return "seen"
        case .seenEntry(let e): return "seen:\(e.description)"
        case .contact(let key): return "contact:\(key.hex)"
        case .session(let id): return "session:\(id.hex)"
        case .pending(let id): return "pending:\(id.hex)"
        case .held(let id): return "held:\(id.hex)"
        }
    }

    /// Parses the text key `description` wrote (what the store reads back); nil for anything else.
    public init?(storeKey text: String) {
        switch text {
        case "local": self = .local; return
        case "seen": self = .seenCache; return
        default: break
        }
        guard let colon = text.firstIndex(of: ":"), let bytes = try? Hex.decode(String(text[text.index(after: colon)...])) else { return nil }
        switch text[..<colon] {
        case "seen":
            guard let e = try? X25519PublicKey(bytes: bytes) else { return nil }
            self = .seenEntry(e)
        case "contact":
            guard let key = try? Ed25519PublicKey(bytes: bytes) else { return nil }
            self = .contact(key)
        case "session", "pending", "held":
            guard let id = try? SessionID(bytes: bytes) else { return nil }
            switch text[..<colon] {
            case "session": self = .session(id)
            case "pending": self = .pending(id)
            default: self = .held(id)
            }
        default:
            return nil
        }
    }

    /// The session id a session, pending or held record belongs to.
    public var sessionID: SessionID? {
        switch self {
        case .session(let id), .pending(let id), .held(let id): return id
        default: return nil
        }
    }
}

extension PigeonState {
    /// The records that differ between `self` and `other` (written or deleted). The seen
    /// cache's entries are the ones `other` touched since `self`, not a comparison of ~20,000.
    func changes(to other: PigeonState) -> Set<PigeonRecordKey> {
        var out: Set<PigeonRecordKey> = []
        if local != other.local { out.insert(.local) }
        if seen.floor != other.seen.floor || seen.strangerFloor != other.seen.strangerFloor || other.seen.fromSingleRecord {
            out.insert(.seenCache)
        }
        for e in other.seen.touched { out.insert(.seenEntry(e)) }
        for key in Set(contacts.keys).union(other.contacts.keys) where contacts[key] != other.contacts[key] { out.insert(.contact(key)) }
        for key in Set(sessions.keys).union(other.sessions.keys) where sessions[key] != other.sessions[key] { out.insert(.session(key)) }
        for key in Set(pending.keys).union(other.pending.keys) where pending[key] != other.pending[key] { out.insert(.pending(key)) }
        for key in Set(held.keys).union(other.held.keys) where held[key] != other.held[key] { out.insert(.held(key)) }
        return out
    }

    /// The transition from `self` to `state`: its changes, and `state` with the seen cache's
    /// bookkeeping cleared (what it noted is in `changes` now).
    func transition<Output>(to state: PigeonState, output: Output) -> PigeonTransition<Output> {
        let changes = changes(to: state)
        var settled = state
        settled.seen.touched = []
        settled.seen.fromSingleRecord = false
        return PigeonTransition(state: settled, output: output, changes: changes)
    }

    /// Runs `body` on a copy of the state and of the key source; commits both only if it
    /// returns. This is what makes every transition all-or-nothing.
    func transition<K: PigeonKeySource, Output>(
        keys: inout K, _ body: (inout PigeonState, inout K) throws(PigeonError) -> Output
    ) throws(PigeonError) -> PigeonTransition<Output> {
        var state = self
        var scratchKeys = keys
        let output = try body(&state, &scratchKeys)
        keys = scratchKeys
        return transition(to: state, output: output)
    }

    func transition<Output>(_ body: (inout PigeonState) throws(PigeonError) -> Output) throws(PigeonError) -> PigeonTransition<Output> {
        var state = self
        let output = try body(&state)
        return transition(to: state, output: output)
    }
}
