import Nostr

/// MDK's order between competing commits of one epoch (MIP-03): the earlier kind-445
/// `created_at` wins, then the lexicographically smaller event id.
public struct CommitOrder: Comparable, Hashable, Sendable {
    public let createdAt: Int64
    public let eventID: EventID

    public init(createdAt: Int64, eventID: EventID) {
        self.createdAt = createdAt
        self.eventID = eventID
    }

    public init(_ event: Event) { self.init(createdAt: event.createdAt, eventID: event.id) }

    public static func < (lhs: CommitOrder, rhs: CommitOrder) -> Bool {
        if lhs.createdAt != rhs.createdAt { return lhs.createdAt < rhs.createdAt }
        return lhs.eventID.hex < rhs.eventID.hex
    }
}
