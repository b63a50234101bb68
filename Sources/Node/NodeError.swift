/// Errors surfaced by the node to the CLI, each naming one of the CLI contract's error codes.
public enum NodeError: Error, Equatable, Sendable {
    case invalidInput(String)
    case relayRejected(String)
    case relayUnreachable(String)
    case timeout(String)
    case internalError(String)
    /// GROUP names no group (`unknown_group`) or several (`ambiguous_group`).
    case unknownGroup(String)
    case ambiguousGroup(String)
    /// No pending invite has this id.
    case unknownInvite(String)
    /// The operation needs an admin (`not_admin`), or would leave no admin (`last_admin`).
    case notAdmin(String)
    case lastAdmin(String)
    /// An invitee has no valid KeyPackage on the relays.
    case noKeyPackage(String)
    /// A welcome cannot fit in a gift wrap (NIP-44's 65,535-byte plaintext cap).
    case welcomeTooLarge(String)
}
