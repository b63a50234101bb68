import Node

/// Failures of the control socket (`<home>/burrow.sock`), through which commands reach
/// `burrow run`. None quotes a frame's content, which may hold a passphrase.
public enum ControlError: Error, Equatable, Sendable {
    /// Nothing answers on the home's control socket: no socket file, or no process accepting
    /// on it (a stale file). The CLI reports `busy`: the home is locked and nobody serves it.
    case notAnswering(String)
    /// The control socket cannot be served: the path is too long for a Unix socket, another
    /// process is listening on it, something that is not a socket is in the way, or binding failed.
    case socketUnavailable(String)
    /// A frame announced a payload of `announced` bytes, more than the `limit` of its direction.
    case frameTooLarge(announced: Int, limit: Int)
    /// The connection ended inside a frame, or before one: `received` of the `expected` bytes
    /// known so far (4 while the length prefix itself is incomplete).
    case frameTruncated(expected: Int, received: Int)
    /// A complete frame that is not a valid request or response; says what was wrong.
    case frameMalformed(String)
}

extension ControlError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .notAnswering(let m): return "the running node does not answer: \(m)"
        case .socketUnavailable(let m): return "the control socket cannot be served: \(m)"
        case .frameTooLarge(let announced, let limit):
            return "a control frame announced \(announced) bytes, more than the limit of \(limit)"
        case .frameTruncated(let expected, let received):
            return "the control connection ended after \(received) of \(expected) bytes"
        case .frameMalformed(let m): return "a control frame is malformed: \(m)"
        }
    }
}

extension ControlError: BurrowFailureConvertible {
    /// Nobody answering is `busy` (the home is locked by a node that does not serve it); the
    /// rest are faults of the local plumbing, `internal`.
    public var failure: BurrowFailure {
        switch self {
        case .notAnswering: return BurrowFailure(.busy, description)
        case .socketUnavailable, .frameTooLarge, .frameTruncated, .frameMalformed: return BurrowFailure(.internal, description)
        }
    }
}
