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
    /// Not placeable yet: the caller keeps the event until what comes before it arrives.
    case hold(HoldReason)
    /// A commit of an epoch already left that loses MDK's race rule to the applied one (or is
    /// older than the kept snapshots): nothing to do, ever.
    case stale(epoch: UInt64)
    /// The applied commit of that epoch again, re-wrapped in another event: not a competitor.
    case duplicate(epoch: UInt64)
    /// Our own message or proposal coming back from a relay.
    case ownEcho

    /// Why an event waits.
    public enum HoldReason: Sendable, Equatable, CustomStringConvertible {
        /// It belongs to a later epoch than ours.
        case epochAhead(epoch: UInt64, current: UInt64)
        /// It commits a proposal we have not received.
        case unknownProposal

        public var description: String {
            switch self {
            case .epochAhead(let epoch, let current): return "epoch \(epoch) is ahead of ours (\(current))"
            case .unknownProposal: return "it commits a proposal not seen yet"
            }
        }
    }
}
