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
    /// CONTACT names no DM contact (`unknown_contact`) or several (`ambiguous_contact`).
    case unknownContact(String)
    case ambiguousContact(String)
    /// `contact verify --match` was given other digits than the safety number.
    case safetyNumberMismatch(String)
    /// Neither a relay nor the mesh reaches the contact.
    case noRoute(String)
    /// A DM's text is over the 16,357 bytes a frame carries.
    case messageTooLarge(String)
}

extension NodeError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidInput(let m), .relayRejected(let m), .relayUnreachable(let m), .timeout(let m), .internalError(let m),
             .unknownGroup(let m), .ambiguousGroup(let m), .unknownInvite(let m), .notAdmin(let m), .lastAdmin(let m),
             .noKeyPackage(let m), .welcomeTooLarge(let m), .unknownContact(let m), .ambiguousContact(let m),
             .safetyNumberMismatch(let m), .noRoute(let m), .messageTooLarge(let m):
            return m
        }
    }
}
