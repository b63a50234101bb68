import Foundation
import Nostr

/// Fresh keys and signed events for relay tests (system randomness: every run differs).
public enum TestEvents {
    public static func keys() -> Keys {
        var rng = SystemRandomNumberGenerator()
        return Keys.generate(using: &rng)
    }

    public static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    public static func sign(
        kind: Int = 1, content: String = "hello", tags: [[String]] = [], createdAt: Int64? = nil, keys: Keys
    ) throws -> Event {
        var rng = SystemRandomNumberGenerator()
        return try Event.sign(kind: kind, content: content, tags: tags, createdAt: createdAt ?? now(), keys: keys, rng: &rng)
    }
}
