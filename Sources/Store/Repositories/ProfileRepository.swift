/// A kind-0 profile as stored: the event's content (JSON text), its time and id.
public struct StoredProfile: Sendable, Equatable {
    public let pubkey: [UInt8]
    public let content: String
    public let createdAt: Int64
    public let eventID: [UInt8]

    public init(pubkey: [UInt8], content: String, createdAt: Int64, eventID: [UInt8]) {
        self.pubkey = pubkey
        self.content = content
        self.createdAt = createdAt
        self.eventID = eventID
    }
}

/// The newest kind-0 profile per key.
public struct ProfileRepository {
    let transaction: StoreTransaction

    /// Stores `profile` unless a newer one (by created_at, then event id) is held; true if stored.
    @discardableResult
    public func offer(_ profile: StoredProfile) throws -> Bool {
        try require32(profile.pubkey, "the profile key")
        try require32(profile.eventID, "the profile event id")
        if let held = try get(pubkey: profile.pubkey),
           held.createdAt > profile.createdAt || (held.createdAt == profile.createdAt && !profile.eventID.lexicographicallyPrecedes(held.eventID)) {
            return false
        }
        try transaction.connection().execute(
            "INSERT OR REPLACE INTO profiles (pubkey, content, created_at, event_id) VALUES (?, ?, ?, ?)",
            [.blob(profile.pubkey), .text(profile.content), .integer(profile.createdAt), .blob(profile.eventID)])
        return true
    }

    public func get(pubkey: [UInt8]) throws -> StoredProfile? {
        try transaction.connection().queryFirst(
            "SELECT content, created_at, event_id FROM profiles WHERE pubkey = ?", [.blob(pubkey)]) {
            StoredProfile(pubkey: pubkey, content: $0.text(0) ?? "", createdAt: $0.int64(1), eventID: $0.blob(2) ?? [])
        }
    }
}
