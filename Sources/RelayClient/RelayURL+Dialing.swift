import Foundation
import Nostr

extension RelayURL {
    /// A relay address the pool will dial: Nostr's `RelayURL` (rust-nostr's rules), surrounding
    /// whitespace forgiven, with a port a socket can reach. Reported as the client's error.
    public static func dialable(_ text: String) throws(RelayClientError) -> RelayURL {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let url = try? RelayURL(trimmed), url.port != 0 else { throw .invalidURL(text) }
        return url
    }
}
