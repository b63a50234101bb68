/// A relay address we are willing to dial: `ws://` or `wss://`, a host, an optional port and
/// path. Parsed once so every later layer can trust it; the text form is what NIP-42's
/// `relay` tag and every report use.
public struct RelayURL: Hashable, Sendable, CustomStringConvertible {
    public enum Scheme: String, Sendable {
        case ws, wss
    }

    public let scheme: Scheme
    /// Host as written (lowercased); IPv6 literals keep their brackets.
    public let host: String
    public let port: Int
    /// Path and query, at least "/".
    public let path: String
    /// The normalized text form, e.g. `wss://relay.example.com` or `ws://127.0.0.1:7000/nostr`.
    public let description: String

    public var isTLS: Bool { scheme == .wss }

    public init(_ text: String) throws {
        let trimmed = text.trimmingWhitespace()
        guard let schemeEnd = trimmed.range(of: "://") else { throw RelayClientError.invalidURL(text) }
        guard let scheme = Scheme(rawValue: trimmed[..<schemeEnd.lowerBound].lowercased()) else {
            throw RelayClientError.invalidURL(text)
        }
        let rest = trimmed[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = String(rest[authorityEnd...])
        if let fragment = path.firstIndex(of: "#") { path = String(path[..<fragment]) }
        if path.isEmpty || path.first == "?" { path = "/" + path }
        guard !authority.isEmpty, !authority.contains("@"),
              !path.contains(where: { $0.isWhitespace || $0.isNewline }) else {
            throw RelayClientError.invalidURL(text)
        }

        var host: Substring
        var portText: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { throw RelayClientError.invalidURL(text) }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw RelayClientError.invalidURL(text) }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        let allowed: (Character) -> Bool = { $0.isLetter || $0.isNumber || "-._[]:".contains($0) }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && allowed($0) }) else {
            throw RelayClientError.invalidURL(text)
        }
        let defaultPort = scheme == .wss ? 443 : 80
        var port = defaultPort
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else { throw RelayClientError.invalidURL(text) }
            port = value
        }

        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
        self.path = path
        let portPart = port == defaultPort ? "" : ":\(port)"
        let pathPart = path == "/" ? "" : path
        self.description = "\(scheme.rawValue)://\(self.host)\(portPart)\(pathPart)"
    }

    /// Whether the host is this machine (`localhost`, 127.0.0.0/8, `[::1]`): reachable from
    /// nowhere else.
    public var isLoopback: Bool { host == "localhost" || host.hasPrefix("127.") || host == "[::1]" }

    /// The host without IPv6 brackets, as a socket address or TLS server name wants it.
    var bareHost: String {
        host.first == "[" ? String(host.dropFirst().dropLast()) : host
    }
}

extension StringProtocol {
    fileprivate func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let first = s.first, first.isWhitespace { s = s.dropFirst() }
        while let last = s.last, last.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
