/// What became of a content once its envelope was accepted (feed.md 7.2).
public enum ContentStatus: Equatable, Sendable {
    case ok(canonical: [UInt8])
    case noKey, opaque, decryptFailed, badContent, typeMismatch, tombstoned

    public var name: String {
        switch self {
        case .ok: return "ok"
        case .noKey: return "no_key"
        case .opaque: return "opaque"
        case .decryptFailed: return "decrypt_failed"
        case .badContent: return "bad_content"
        case .typeMismatch: return "type_mismatch"
        case .tombstoned: return "tombstoned"
        }
    }
}

/// The outcome of one envelope offered to a chain (7.1): its own status, or the refusal, and
/// what the cascade it set off accepted or dropped.
public struct ChainOutcome: Equatable, Sendable {
    public enum Status: String, Sendable { case accepted, held, duplicate, belowWindow = "below_window" }
    public struct Release: Equatable, Sendable {
        public let sequence: UInt32
        /// Accepted, or dropped with `broken_chain`.
        public let result: Result<Status, FeedError>
    }
    public let result: Result<Status, FeedError>
    public let released: [Release]
}

/// One followed feed (or the journal) as feed.md 7.1 keeps it, sans-I/O: an accepted contiguous
/// range, held envelopes outside it, the window, forks and broken links kept as evidence, and
/// each accepted entry's content opened with what `reader` holds.
public struct FeedChain: Sendable {
    public struct Entry: Sendable {
        public let envelope: Envelope
        public var accepted: Bool
        public var content: ContentStatus?
    }

    public static let defaultMaximumPerFeed = 10_000

    public let identityKey: [UInt8]
    /// Nil for the own feed and the journal, which have no window.
    public let maximumPerFeed: Int?
    public let origin: EnvelopeOrigin
    public private(set) var entries: [UInt32: Entry] = [:]
    public private(set) var range: ClosedRange<UInt32>?
    public private(set) var evidence: [(sequence: UInt32, envelope: [UInt8], reason: FeedError)] = []
    public private(set) var flagged = false
    /// Message ids a readable tombstone named (its target is tombstoned on arrival).
    public private(set) var tombstones: Set<[UInt8]> = []
    public var reader: FeedReader?
    /// What changed since the last `takeChanges()`, in order: a store applies them in the
    /// transaction that records the envelope's outcome (7.3).
    public private(set) var changes: [Change] = []

    public enum Change: Equatable, Sendable {
        /// Stored held at this sequence.
        case stored(UInt32)
        /// Accepted, with its content opened (or re-marked, e.g. tombstoned).
        case accepted(UInt32)
        case content(UInt32)
        /// Deleted: below the window, or dropped as a broken link (its evidence follows).
        case deleted(UInt32)
        case evidence(sequence: UInt32, envelope: [UInt8], reason: FeedError)
        case tombstone(target: [UInt8])
    }

    public mutating func takeChanges() -> [Change] {
        defer { changes = [] }
        return changes
    }

    /// Opens again the accepted entries still `no_key` with the current reader (a new pair
    /// key or epoch secret), marking tombstoned targets as on arrival.
    public mutating func reopen() {
        guard let reader else { return }
        for (sequence, entry) in entries.sorted(by: { $0.key < $1.key }) where entry.accepted && entry.content == .noKey {
            var status = reader.open(entry.envelope, authorIdentityKey: identityKey)
            if tombstones.contains(entry.envelope.messageID), case .ok = status { status = .tombstoned }
            entries[sequence]?.content = status
            changes.append(.content(sequence))
            noteTombstone(sequence)
        }
    }

    public init(identityKey: [UInt8], maximumPerFeed: Int? = defaultMaximumPerFeed, origin: EnvelopeOrigin = .peer, reader: FeedReader? = nil) {
        self.identityKey = identityKey
        self.maximumPerFeed = maximumPerFeed
        self.origin = origin
        self.reader = reader
    }

    public var held: [UInt32] { entries.filter { !$0.value.accepted }.keys.sorted() }
    /// The message id of the highest accepted entry.
    public var head: [UInt8]? { range.flatMap { entries[$0.upperBound]?.envelope.messageID } }

    /// Steps 1–10 of 4.4 for `bytes`, then the chain rules.
    public mutating func receive(_ bytes: [UInt8]) -> ChainOutcome {
        do {
            let envelope = try UnverifiedEnvelope.decode(bytes, origin: origin).verify(identityKey: identityKey)
            return receive(envelope)
        } catch {
            return ChainOutcome(result: .failure(error), released: [])
        }
    }

    public mutating func receive(_ envelope: Envelope) -> ChainOutcome {
        let s = envelope.fields.sequence
        let id = envelope.messageID
        // 1. Duplicate or fork.
        if let existing = entries[s] {
            if existing.envelope.messageID == id { return ChainOutcome(result: .success(.duplicate), released: []) }
            return refuse(envelope, .fork)
        }
        // 2. A broken link to the accepted range.
        if let range {
            if range.upperBound < UInt32.max, s == range.upperBound + 1, envelope.fields.previous != entries[range.upperBound]?.envelope.messageID {
                return refuse(envelope, .brokenChain)
            }
            if range.lowerBound > 0, s == range.lowerBound - 1, entries[range.lowerBound]?.envelope.fields.previous != id {
                return refuse(envelope, .brokenChain)
            }
        }
        // 3. The window.
        if let maximumPerFeed {
            let top = max(entries.keys.max() ?? s, s)
            let floor = Int64(top) - Int64(maximumPerFeed) + 1
            if Int64(s) < floor { return ChainOutcome(result: .success(.belowWindow), released: []) }
            for sequence in entries.keys.sorted() where Int64(sequence) < floor {
                entries[sequence] = nil
                changes.append(.deleted(sequence))
            }
            if let current = range {
                if Int64(current.upperBound) < floor {
                    range = nil
                } else if Int64(current.lowerBound) < floor {
                    range = UInt32(floor)...current.upperBound
                }
            }
        }
        entries[s] = Entry(envelope: envelope, accepted: false, content: nil)
        changes.append(.stored(s))
        // 4. The anchor.
        var released: [ChainOutcome.Release] = []
        if range == nil, let lowest = entries.keys.min() {
            accept(lowest)
            if lowest != s { released.append(.init(sequence: lowest, result: .success(.accepted))) }
        }
        // 5. The cascade.
        var moved = true
        while moved, let current = range {
            moved = false
            if current.upperBound < UInt32.max, let next = entries[current.upperBound + 1], !next.accepted {
                let sequence = current.upperBound + 1
                if next.envelope.fields.previous == entries[current.upperBound]?.envelope.messageID {
                    accept(sequence)
                    if sequence != s { released.append(.init(sequence: sequence, result: .success(.accepted))) }
                } else {
                    drop(sequence)
                    if sequence != s { released.append(.init(sequence: sequence, result: .failure(.brokenChain))) }
                }
                moved = true
            } else if current.lowerBound > 0, let below = entries[current.lowerBound - 1], !below.accepted {
                let sequence = current.lowerBound - 1
                if below.envelope.messageID == entries[current.lowerBound]?.envelope.fields.previous {
                    accept(sequence)
                    if sequence != s { released.append(.init(sequence: sequence, result: .success(.accepted))) }
                } else {
                    drop(sequence)
                    if sequence != s { released.append(.init(sequence: sequence, result: .failure(.brokenChain))) }
                }
                moved = true
            }
        }
        let ordered = released.sorted { $0.sequence < $1.sequence }
        guard let entry = entries[s] else { return ChainOutcome(result: .failure(.brokenChain), released: ordered) }
        let status: ChainOutcome.Status = entry.accepted ? .accepted : .held
        return ChainOutcome(result: .success(status), released: ordered)
    }

    private mutating func refuse(_ envelope: Envelope, _ reason: FeedError) -> ChainOutcome {
        evidence.append((envelope.fields.sequence, envelope.bytes, reason))
        changes.append(.evidence(sequence: envelope.fields.sequence, envelope: envelope.bytes, reason: reason))
        flagged = true
        return ChainOutcome(result: .failure(reason), released: [])
    }

    private mutating func drop(_ sequence: UInt32) {
        if let entry = entries[sequence] {
            evidence.append((sequence, entry.envelope.bytes, .brokenChain))
            changes.append(.deleted(sequence))
            changes.append(.evidence(sequence: sequence, envelope: entry.envelope.bytes, reason: .brokenChain))
        }
        entries[sequence] = nil
        flagged = true
    }

    /// Accepts `sequence` (adjacent to the range, or the anchor) and opens its content.
    private mutating func accept(_ sequence: UInt32) {
        guard var entry = entries[sequence] else { return }
        entry.accepted = true
        if let current = range {
            range = min(current.lowerBound, sequence)...max(current.upperBound, sequence)
        } else {
            range = sequence...sequence
        }
        var status = reader.map { $0.open(entry.envelope, authorIdentityKey: identityKey) } ?? .noKey
        if tombstones.contains(entry.envelope.messageID), case .ok = status { status = .tombstoned }
        entry.content = status
        entries[sequence] = entry
        changes.append(.accepted(sequence))
        noteTombstone(sequence)
    }

    /// A readable tombstone marks its target in this feed, now or when it arrives.
    private mutating func noteTombstone(_ sequence: UInt32) {
        guard let entry = entries[sequence], case .ok(let canonical)? = entry.content, entry.envelope.fields.type == "tombstone",
              let value = try? CanonicalJSON.parse(canonical), let text = value["target_message"]?.string,
              let target = Base64URL.decode(text, count: 32) else { return }
        tombstones.insert(target)
        changes.append(.tombstone(target: target))
        for (key, other) in entries where other.envelope.messageID == target && other.accepted {
            if case .ok = other.content {
                entries[key]?.content = .tombstoned
                changes.append(.content(key))
            }
        }
    }
}
