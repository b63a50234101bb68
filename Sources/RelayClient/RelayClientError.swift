/// Failures of talking to relays. Every wait is bounded, so `timeout` is a normal outcome.
public enum RelayClientError: Error, Equatable, Sendable {
    case invalidURL(String)
    case unreachable(String)
    case timeout(String)
    case closed(String)
    case rejected(String)
    case frameTooLarge(Int)
    case malformedMessage(String)
}
