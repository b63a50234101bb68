/// Who handed us a frame, as far as the carrier can tell before the handshake reveals `I`:
/// a known contact (a gift wrap sealed by a contact's `N`) or a stranger (any other seal
/// signer, or a mesh sender). Only the budgets depend on it: a stranger's handshake1 gets a
/// pending state, a seen-cache entry and held frames from the strangers' own budgets, which
/// can never displace a contact's (issue 19: handshake floods must not block honest sessions).
public enum FrameOrigin: Sendable, Hashable {
    case contact
    /// `budgetKey` names the sender for the per-sender cap (a seal's `N`, a mesh id).
    case stranger(budgetKey: [UInt8])

    public var isStranger: Bool {
        if case .stranger = self { return true }
        return false
    }
}

/// The strangers' budgets, beside the profile's `PigeonLimits` (which stay the contacts').
public enum StrangerLimits {
    /// Pending responder states answering strangers, in all: a flood of fresh keys evicts only
    /// these (oldest first), never a contact's.
    public static let maxPending = 64
    /// Pending responder states per stranger sender: one sender cannot take the whole budget.
    public static let maxPendingPerSender = 4
    /// Seen-ephemeral entries of strangers' handshake1s; their own floor rises when full.
    public static let seenCapacity = 4_096
    /// Held message frames for strangers' pending states, in all and per session.
    public static let maxHeldTotal = 64
    public static let maxHeldPerSession = 8
}
