/// What `contact card` shows: the own Pigeon card and what it says.
public struct CardView: Sendable, Equatable {
    /// The `burrowcard1…` text.
    public let card: String
    /// The same card upper-cased, as a QR code's alphanumeric text.
    public let qrText: String
    public let identity: String
    public let staticKey: String
    public let pubkey: String
    public let npub: String
    public let nickname: String
    public let relays: [String]
    /// Milliseconds, as the card holds it.
    public let createdAt: UInt64
}

/// A DM contact (Docs/protocols/pigeon-dm.md section 8).
public struct ContactView: Sendable, Equatable {
    public struct SessionSummary: Sendable, Equatable {
        public let id: String
        public let role: String
        public let establishedAt: UInt64
        public let confirmed: Bool
    }

    public let name: String
    public let identity: String
    public let pubkey: String
    public let npub: String
    public let nickname: String
    public let relays: [String]
    /// `added` or `request` (they wrote first).
    public let state: String
    public let verified: Bool
    public let verifiedAt: UInt64?
    public let cardCreatedAt: UInt64
    public let session: SessionSummary?
}

/// One direct message, either way (section 8).
public struct DMView: Sendable, Equatable {
    /// The msg_id, hex.
    public let id: String
    public let contact: String
    public let identity: String
    /// `in` or `out`.
    public let direction: String
    public let text: String
    public let sentAt: UInt64
    public let receivedAt: UInt64?
    /// `queued`, `sent`, `delivered` (a receipt came back) or `received`.
    public let status: String
    public let sessionID: String?
    /// Whether the contact is verified now.
    public let verified: Bool
}
