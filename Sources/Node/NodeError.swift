/// Errors surfaced by the node to the CLI, each naming one of the CLI contract's error codes.
public enum NodeError: Error, Equatable, Sendable {
    case invalidInput(String)
    case relayRejected(String)
    case relayUnreachable(String)
    case timeout(String)
    case internalError(String)
}
