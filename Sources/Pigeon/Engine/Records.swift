/// The records the engine's state is made of, one per row the store keeps (section 7). Each is
/// a value; the engine replaces whole records, and a transition reports which ones it touched.

/// The node's own DM identity: the private `I` and `S` and the current own card.
public struct LocalIdentity: Sendable, Equatable {
    public let identityKey: Ed25519PrivateKey
    public let staticKey: X25519PrivateKey
    public internal(set) var card: ContactCard

    /// `card` must be a valid card of this `I` and `S`.
    public init(identityKey: Ed25519PrivateKey, staticKey: X25519PrivateKey, card: ContactCard) throws(PigeonError) {
        guard card.identityKey == identityKey.publicKey, card.staticKey == staticKey.publicKey else { throw .identityMismatch }
        self.identityKey = identityKey
        self.staticKey = staticKey
        self.card = card
    }
}

/// A contact: its card (the newest seen), how it came (added by the user, or a request from an
/// unknown initiator) and the user's verification of its safety number.
public struct Contact: Sendable, Equatable {
    public enum State: UInt8, Sendable {
        case added = 1
        case request = 2
    }

    public internal(set) var card: ContactCard
    public internal(set) var state: State
    /// Cleared whenever a new card changes `N` (section 2.3).
    public internal(set) var verifiedAt: UInt64?
    /// When this node last started a recovery handshake for a frame of an unknown session
    /// (section 4.6: at most once per 24 h per contact).
    public internal(set) var lastRecoveryHandshakeAt: UInt64?

    public var identityKey: Ed25519PublicKey { card.identityKey }
    public var isVerified: Bool { verifiedAt != nil }

    public init(card: ContactCard, state: State, verifiedAt: UInt64? = nil, lastRecoveryHandshakeAt: UInt64? = nil) {
        self.card = card
        self.state = state
        self.verifiedAt = verifiedAt
        self.lastRecoveryHandshakeAt = lastRecoveryHandshakeAt
    }

    /// Section 2.3: a valid card of the same `I` with a larger created_at replaces the stored
    /// one (a changed `N` clears the verified mark); an older one is `card_outdated`; the same
    /// created_at keeps the stored card.
    mutating func apply(_ newCard: ContactCard) throws(PigeonError) {
        guard newCard.identityKey == card.identityKey else { throw .identityMismatch }
        guard newCard.createdAt >= card.createdAt else { throw .cardOutdated }
        guard newCard.createdAt > card.createdAt else { return }
        if newCard.nostrKey != card.nostrKey { verifiedAt = nil }
        card = newCard
    }
}

public enum SessionRole: UInt8, Sendable {
    case initiator = 1
    case responder = 2
}

/// An established session (section 4.6 and 7): its ratchet and where it stands for its contact.
public struct Session: Sendable, Equatable {
    public enum Standing: Sendable, Equatable {
        /// The one used to send.
        case current
        /// Receive only, since the given time (deleted 7 days later).
        case previous(since: UInt64)
    }

    public let id: SessionID
    public let contact: Ed25519PublicKey
    public let role: SessionRole
    /// The handshake1 ts: decides which of two sessions is current.
    public let handshakeTimestamp: UInt64
    /// I_initiator ‖ I_responder ‖ h (96 bytes), in every message's AD.
    public let binding: [UInt8]
    public let establishedAt: UInt64
    /// Initiator: the handshake3 it sent (resent before messages while unconfirmed, and for a
    /// duplicate handshake2). Responder: the handshake3 it accepted (to recognise copies).
    public let handshake3: [UInt8]
    /// The initiator's session is unconfirmed until a frame decrypts in it.
    public internal(set) var confirmed: Bool
    public internal(set) var standing: Standing
    var ratchet: DoubleRatchet

    public var isCurrent: Bool { standing == .current }
    public var ratchetSnapshot: RatchetSnapshot { ratchet.snapshot }
}

/// A handshake this node has started or answered and not finished (section 4.2, 4.3).
public enum PendingHandshake: Sendable, Equatable {
    case initiator(InitiatorPending)
    case responder(ResponderPending)

    /// The handshake1 ts: the pending state lives until ts + 24 h.
    public var timestamp: UInt64 {
        switch self {
        case .initiator(let p): return p.timestamp
        case .responder(let p): return p.timestamp
        }
    }
}

/// Initiator side: `e_i` (deleted on use), the contact called, ts and the handshake1 sent.
/// The Noise state after message 1 is recomputed from these (it is deterministic).
public struct InitiatorPending: Sendable, Equatable {
    public let contact: Ed25519PublicKey
    let ephemeral: X25519PrivateKey
    public let timestamp: UInt64
    public let handshake1: [UInt8]
}

/// Responder side: the Noise state after message 2 (with `e_r`), `r_r`, ts, and the frames
/// received and sent (a copy of the handshake1 is answered with the same handshake2).
public struct ResponderPending: Sendable, Equatable {
    let noise: NoiseXXResponderSentResponse
    let ratchetKey: X25519PrivateKey
    public let timestamp: UInt64
    public let handshake1: [UInt8]
    public let handshake2: [UInt8]
    /// Whose budget the state counts against.
    public var origin: FrameOrigin = .contact
}

/// Section 4.5: `e_i` of every answered handshake1 until ts + 24 h, at most 16,384; when full,
/// the soonest-expiring entry leaves and the floor rises to its ts — but never past the time of
/// that insertion, so future-dated handshake1s (ts up to now + 5 min) cannot make every honest
/// one stale. Strangers' handshake1s have their own entries and floor (`StrangerLimits`).
///
/// Each entry is its own store record (`PigeonRecordKey.seenEntry`) and the floors another
/// (`.seenCache`): a full cache is ~20,000 entries, and rewriting it whole after every
/// handshake1 cost ~820 KB of writes each (issue 19, finding 5). The cache notes which entries
/// a transition touched (`touched`, not part of its value) so only those are written.
public struct SeenEphemeralCache: Sendable {
    public static let capacity = 16_384

    /// e_i → handshake1 ts, for contacts' handshake1s.
    var entries: [X25519PublicKey: UInt64] = [:]
    /// A contact's handshake1 with ts ≤ floor is stale.
    public internal(set) var floor: UInt64 = 0
    /// e_i → handshake1 ts, for strangers' handshake1s.
    var strangerEntries: [X25519PublicKey: UInt64] = [:]
    /// A stranger's handshake1 with ts ≤ strangerFloor is stale.
    public internal(set) var strangerFloor: UInt64 = 0
    /// Entries inserted or removed since the last transition ended (records to write).
    var touched: Set<X25519PublicKey> = []
    /// Decoded from the single record of earlier versions: every entry is to be written as its
    /// own record, and the old record rewritten with the floors only.
    var fromSingleRecord = false

    public var count: Int { entries.count + strangerEntries.count }

    func contains(_ e: X25519PublicKey) -> Bool { entries[e] != nil || strangerEntries[e] != nil }

    func staleFloor(for origin: FrameOrigin) -> UInt64 { origin.isStranger ? strangerFloor : floor }

    /// The stored form of one entry: its ts and whether a stranger's handshake1 put it there.
    func entry(_ e: X25519PublicKey) -> (timestamp: UInt64, stranger: Bool)? {
        if let ts = entries[e] { return (ts, false) }
        if let ts = strangerEntries[e] { return (ts, true) }
        return nil
    }

    mutating func expire(now: UInt64) {
        for (e, ts) in entries where ts + PigeonLimits.handshakeWindowMs < now {
            entries[e] = nil
            touched.insert(e)
        }
        for (e, ts) in strangerEntries where ts + PigeonLimits.handshakeWindowMs < now {
            strangerEntries[e] = nil
            touched.insert(e)
        }
    }

    mutating func insert(_ e: X25519PublicKey, timestamp: UInt64, origin: FrameOrigin = .contact, now: UInt64) {
        if origin.isStranger {
            Self.insert(e, timestamp: timestamp, into: &strangerEntries, floor: &strangerFloor, capacity: StrangerLimits.seenCapacity,
                        now: now, touched: &touched)
        } else {
            Self.insert(e, timestamp: timestamp, into: &entries, floor: &floor, capacity: Self.capacity, now: now, touched: &touched)
        }
    }

    /// Restores one stored entry (decoding); false when its part of the cache is already full.
    mutating func restore(_ e: X25519PublicKey, timestamp: UInt64, stranger: Bool) -> Bool {
        if stranger {
            guard strangerEntries.count < StrangerLimits.seenCapacity, entries[e] == nil else { return false }
            strangerEntries[e] = timestamp
        } else {
            guard entries.count < Self.capacity, strangerEntries[e] == nil else { return false }
            entries[e] = timestamp
        }
        return true
    }

    private static func insert(_ e: X25519PublicKey, timestamp: UInt64, into entries: inout [X25519PublicKey: UInt64],
                               floor: inout UInt64, capacity: Int, now: UInt64, touched: inout Set<X25519PublicKey>) {
        while entries.count >= capacity, let soonest = entries.min(by: {
            $0.value < $1.value || ($0.value == $1.value && $0.key.bytes.lexicographicallyPrecedes($1.key.bytes))
        }) {
            floor = max(floor, min(soonest.value, now))
            entries[soonest.key] = nil
            touched.insert(soonest.key)
        }
        entries[e] = timestamp
        touched.insert(e)
    }
}

extension SeenEphemeralCache: Equatable {
    /// The cache's value: entries and floors, not the bookkeeping of what to write.
    public static func == (a: Self, b: Self) -> Bool {
        a.floor == b.floor && a.strangerFloor == b.strangerFloor && a.entries == b.entries && a.strangerEntries == b.strangerEntries
    }
}

/// A message frame for a pending responder state, waiting for its handshake3.
public struct HeldFrame: Sendable, Equatable {
    public let frame: [UInt8]
    public let receivedAt: UInt64
}

/// The profile's bounds and lifetimes, in one place.
public enum PigeonLimits {
    /// 24 h: handshake1 freshness, pending states, the seen cache (the mesh's packet lifetime).
    public static let handshakeWindowMs: UInt64 = 24 * 3600 * 1000
    /// A handshake1 from up to 5 min in the future is accepted.
    public static let clockSkewMs: UInt64 = 5 * 60 * 1000
    public static let maxResponderPending = 64
    public static let maxHeldPerSession = 32
    public static let maxHeldTotal = 256
    public static let maxPreviousSessions = 3
    /// Previous sessions are deleted 7 days after they stop being current.
    public static let previousSessionLifetimeMs: UInt64 = 7 * 24 * 3600 * 1000
}
