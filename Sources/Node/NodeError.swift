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

    // The control socket (`<home>/burrow.sock`), through which commands reach `burrow run`.

    /// Nothing answers on the home's control socket: no socket file, or no process accepting
    /// on it (a stale file). The CLI reports `busy`: the home is locked and nobody serves it.
    case controlNotAnswering(String)
    /// The control socket cannot be served: the path is too long for a Unix socket, another
    /// process is listening on it, something that is not a socket is in the way, or binding failed.
    case controlSocketUnavailable(String)
    /// A frame announced a payload of `announced` bytes, more than the `limit` of its direction.
    case controlFrameTooLarge(announced: Int, limit: Int)
    /// The connection ended inside a frame, or before one: `received` of the `expected` bytes
    /// known so far (4 while the length prefix itself is incomplete).
    case controlFrameTruncated(expected: Int, received: Int)
    /// A complete frame that is not a valid request or response; says what was wrong (never
    /// quoting the content, which may hold a passphrase).
    case controlFrameMalformed(String)
}

extension NodeError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidInput(let m), .relayRejected(let m), .relayUnreachable(let m), .timeout(let m), .internalError(let m),
             .unknownGroup(let m), .ambiguousGroup(let m), .unknownInvite(let m), .notAdmin(let m), .lastAdmin(let m),
             .noKeyPackage(let m), .welcomeTooLarge(let m), .unknownContact(let m), .ambiguousContact(let m),
             .safetyNumberMismatch(let m), .noRoute(let m), .messageTooLarge(let m):
            return m
        case .controlNotAnswering(let m): return "the running node does not answer: \(m)"
        case .controlSocketUnavailable(let m): return "the control socket cannot be served: \(m)"
        case .controlFrameTooLarge(let announced, let limit):
            return "a control frame announced \(announced) bytes, more than the limit of \(limit)"
        case .controlFrameTruncated(let expected, let received):
            return "the control connection ended after \(received) of \(expected) bytes"
        case .controlFrameMalformed(let m): return "a control frame is malformed: \(m)"
        }
    }
}
