import Nostr

/// The rumor inside an MLS application message, checked as MDK does
/// (`process_application_message`): UTF-8 JSON of an unsigned NIP-01 event whose `pubkey` is the
/// MLS sender's BasicCredential identity. The id is required and must be the NIP-01 hash, as
/// MDK after 0.8.0 (White Noise) requires; MDK-made rumors always carry it.
public struct VerifiedInnerEvent: Hashable, Sendable {
    public let rumor: Rumor
    /// The MLS sender ratchet generation that carried it (received messages): the sender's
    /// order within its epoch.
    public internal(set) var generation: UInt32?

    /// The sender (equal to the MLS sender's identity).
    public var sender: PublicKey { rumor.pubkey }

    /// The typed content of the known inner kinds; `.other` for the rest.
    public func content() throws -> InnerContent { try InnerContent(parsing: rumor) }

    /// The same inner event whichever message carried it: equality is the rumor's.
    public static func == (a: Self, b: Self) -> Bool { a.rumor == b.rumor }
    public func hash(into hasher: inout Hasher) { hasher.combine(rumor) }
}

extension InnerContent {
    /// Parses a rumor's content by kind (no authentication: use on stored, already verified rumors).
    public init(parsing rumor: Rumor) throws {
        self = try Self.parse(rumor)
    }

    private static func parse(_ rumor: Rumor) throws -> InnerContent {
        switch rumor.kind {
        case MarmotKind.chat: return .chat(try ChatContent(parsing: rumor.content))
        case MarmotKind.location: return .location(try LocationPayload(json: rumor.content))
        case MarmotKind.leaveRequest: return .leaveRequest
        case MarmotKind.reaction: return .reaction(try Reaction(rumor))
        case MarmotKind.deletion: return .deletion(try Deletion(rumor))
        default: return .other(kind: rumor.kind)
        }
    }
}

/// What an inner event says, by kind.
public enum InnerContent: Equatable, Sendable {
    /// Kind 9.
    case chat(ChatContent)
    /// Kind 1 (Whistle).
    case location(LocationPayload)
    /// Kind 2 (Whistle): the sender asks the admins to remove them.
    case leaveRequest
    /// Kind 7.
    case reaction(Reaction)
    /// Kind 5.
    case deletion(Deletion)
    /// Any other kind, kept as the rumor says.
    case other(kind: Int)
}

/// A NIP-25 reaction as White Noise sends it inside a group: content (an emoji, "+", "-") and
/// the reacted-to message in the first `e` tag.
public struct Reaction: Equatable, Sendable {
    public let emoji: String
    public let target: EventID

    init(_ rumor: Rumor) throws {
        guard let tag = TagRules.first(rumor.tags, "e") else {
            throw MarmotError.invalidPayload(kind: MarmotKind.reaction, field: "e", reason: "missing")
        }
        guard let value = TagRules.content(tag), value.utf8.count == 64, let id = try? EventID(hex: value) else {
            throw MarmotError.invalidPayload(kind: MarmotKind.reaction, field: "e", reason: "not an event id")
        }
        emoji = rumor.content
        target = id
    }
}

/// A NIP-09 deletion of the sender's own messages: every `e` tag names one.
public struct Deletion: Equatable, Sendable {
    public let targets: [EventID]
    public let reason: String

    init(_ rumor: Rumor) throws {
        let tags = TagRules.all(rumor.tags, "e")
        guard !tags.isEmpty else { throw MarmotError.invalidPayload(kind: MarmotKind.deletion, field: "e", reason: "missing") }
        targets = try tags.map { tag in
            guard let value = TagRules.content(tag), value.utf8.count == 64, let id = try? EventID(hex: value) else {
                throw MarmotError.invalidPayload(kind: MarmotKind.deletion, field: "e", reason: "not an event id")
            }
            return id
        }
        reason = rumor.content
    }
}

/// Inner events (MIP-03 application messages): verifying what a member sent and building what
/// we send. The MLS application data is `rumor.jsonBytes` (rust-nostr's member order, NIP-01
/// escaping); inner events never carry `h` tags.
public enum InnerEvent {
    /// Checks decrypted application data against the MLS sender's BasicCredential identity.
    public static func verify(applicationData: [UInt8], senderIdentity: [UInt8]) throws -> VerifiedInnerEvent {
        let rumor: Rumor
        do {
            rumor = try Rumor(json: applicationData)
        } catch let error as NostrError {
            throw MarmotError.innerEventInvalid(error)
        }
        guard rumor.pubkey.bytes == senderIdentity else { throw MarmotError.innerEventAuthorMismatch }
        return VerifiedInnerEvent(rumor: rumor)
    }

    /// A kind-9 chat message with plain-text content (what White Noise and Whistle both show).
    public static func chat(_ text: String, author: PublicKey, createdAt: Int64) throws -> Rumor {
        try rumor(author: author, createdAt: createdAt, kind: MarmotKind.chat, content: text)
    }

    /// A kind-1 location update with Whistle's payload.
    public static func location(_ payload: LocationPayload, author: PublicKey, createdAt: Int64) throws -> Rumor {
        try rumor(author: author, createdAt: createdAt, kind: MarmotKind.location, content: payload.json)
    }

    /// A kind-2 leave request (empty content, as Whistle sends it).
    public static func leaveRequest(author: PublicKey, createdAt: Int64) throws -> Rumor {
        try rumor(author: author, createdAt: createdAt, kind: MarmotKind.leaveRequest, content: "")
    }

    private static func rumor(author: PublicKey, createdAt: Int64, kind: Int, content: String) throws -> Rumor {
        do {
            return try Rumor(pubkey: author, createdAt: createdAt, kind: kind, tags: [], content: content)
        } catch let error as NostrError {
            throw MarmotError.innerEventInvalid(error)
        }
    }
}
