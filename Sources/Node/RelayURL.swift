import Foundation

/// A relay address as the node stores it (internal: RelayClient has its own for connections): `ws://` or `wss://`, a host, lowercase scheme and host,
/// no trailing slash on an empty path. Users type URLs by hand, so they are validated here once.
struct RelayURL: Hashable, Sendable, CustomStringConvertible {
    let string: String

    init(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let components = URLComponents(string: trimmed),
              let scheme = components.scheme?.lowercased(), scheme == "ws" || scheme == "wss",
              let host = components.host, !host.isEmpty,
              components.user == nil, components.password == nil
        else { throw NodeError.invalidInput("not a relay URL (ws:// or wss://): \(text)") }
        var normalized = URLComponents()
        normalized.scheme = scheme
        normalized.host = host.lowercased()
        normalized.port = components.port
        normalized.path = components.path == "/" ? "" : components.path
        normalized.query = components.query
        guard let result = normalized.string else { throw NodeError.invalidInput("not a relay URL: \(text)") }
        string = result
    }

    var description: String { string }
}
