import Foundation

/// The Nostr identity as stored: the 32-byte secret key and when it was created.
/// Descriptions and mirrors are redacted so the key cannot reach logs by accident.
public struct StoredIdentity: Equatable, Sendable {
    public let secretKey: [UInt8]
    public let createdAt: Int64

    public init(secretKey: [UInt8], createdAt: Int64) {
        self.secretKey = secretKey
        self.createdAt = createdAt
    }
}

extension StoredIdentity: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "StoredIdentity(secretKey: redacted, createdAt: \(createdAt))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["createdAt": createdAt]) }
}

/// A configured relay.
public struct StoredRelay: Equatable, Sendable {
    public let url: String
    public let read: Bool
    public let write: Bool
    public let addedAt: Int64

    public init(url: String, read: Bool = true, write: Bool = true, addedAt: Int64) {
        self.url = url
        self.read = read
        self.write = write
        self.addedAt = addedAt
    }
}

/// A raw Nostr event as received. The store cannot check signatures (it knows no Nostr), so
/// callers hand it only events whose id and signature they have verified.
public struct StoredEvent: Equatable, Sendable {
    /// The event id (32 bytes).
    public let id: [UInt8]
    public let kind: Int
    /// The author's x-only public key (32 bytes).
    public let pubkey: [UInt8]
    public let createdAt: Int64
    /// The event's NIP-01 JSON exactly as verified.
    public let json: String
    /// When this node received it.
    public let receivedAt: Int64

    public init(id: [UInt8], kind: Int, pubkey: [UInt8], createdAt: Int64, json: String, receivedAt: Int64) {
        self.id = id
        self.kind = kind
        self.pubkey = pubkey
        self.createdAt = createdAt
        self.json = json
        self.receivedAt = receivedAt
    }
}

/// The record that the pipeline has handled an event, and what became of it
/// (e.g. "applied", "duplicate", "rejected: …" — the caller's vocabulary).
public struct ProcessedEvent: Equatable, Sendable {
    public let eventID: [UInt8]
    public let outcome: String
    public let processedAt: Int64

    public init(eventID: [UInt8], outcome: String, processedAt: Int64) {
        self.eventID = eventID
        self.outcome = outcome
        self.processedAt = processedAt
    }
}

/// The wall clock of the store (an I/O edge may read it), used only for the `at:` defaults of
/// the repositories; callers that need determinism pass their own time.
public enum StoreClock {
    /// The current time in Unix seconds.
    public static func now() -> Int64 { Int64(time(nil)) }
}

/// Checks a 32-byte identifier before it reaches SQL (the schema enforces it too).
func require32(_ bytes: [UInt8], _ what: String) throws {
    guard bytes.count == 32 else { throw StoreError.invalidInput("\(what) must be 32 bytes, not \(bytes.count)") }
}
