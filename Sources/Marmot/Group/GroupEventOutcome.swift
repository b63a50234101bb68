import MLS
import Nostr

/// What one kind-445 event did to a group (MDK's `MessageProcessingResult`, Marmot-side).
public enum GroupEventOutcome: Sendable {
    /// An inner event (chat, location, leave request, …), authenticated as from `sender`.
    case application(VerifiedInnerEvent, epoch: UInt64)
    /// A SelfRemove (or legacy self-Remove) proposal this member should commit now, as every
    /// MDK member does on receipt.
    case proposalToCommit(StoredProposal, from: Member)
    /// A proposal kept for a later commit by someone else (a non-admin's leave request, for
    /// an admin to commit).
    case proposalKept(StoredProposal, from: Member, reason: String)
    /// A proposal Marmot ignores (Update, GroupContextExtensions, Add, Remove of another member,
    /// a SelfRemove from an admin): not stored, so no commit can include it; `reason` says why.
    case proposalIgnored(StoredProposal, from: Member, reason: String)
    /// A commit applied: the group is now in `summary.epoch + 1` (or we were removed).
    /// `replaced` is set when it won the epoch's race and displaced the commit applied before.
    case commit(CommitSummary, replaced: CommitOrder?)
}
