/// What processing an incoming framed message did (OpenMLS `ProcessedMessageContent`, with
/// commits already merged).
public enum ProcessedMessage: Sendable {
    /// Application data, decrypted and authenticated.
    case application(ApplicationMessage)
    /// A proposal, verified and stored for a later commit of this epoch. Marmot decides
    /// whether to commit it (it auto-commits SelfRemove and ignores Update and
    /// GroupContextExtensions proposals).
    case proposal(StoredProposal)
    /// A commit, verified and applied: the group is now in `summary.epoch` (or inactive when
    /// `summary.removedSelf`).
    case commit(CommitSummary)
}

/// A decrypted application message and who sent it.
public struct ApplicationMessage: Sendable, Equatable {
    public let data: [UInt8]
    /// The sender as it was in `epoch` (it may have left since).
    public let sender: Member
    /// The epoch the message was sent in (the current one or a retained past epoch).
    public let epoch: UInt64
    public let authenticatedData: [UInt8]
    /// The sender ratchet generation it used.
    public let generation: UInt32
}
