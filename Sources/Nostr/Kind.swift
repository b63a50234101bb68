/// NIP-01 kind ranges: how relays store and replace an event.
public enum KindClass: Sendable, Equatable {
    /// Stored as is (1, 2, 4–44, 1000–9999, and every kind NIP-01 leaves unassigned).
    case regular
    /// Only the latest per (pubkey, kind) is kept (0, 3, 10000–19999).
    case replaceable
    /// Not stored (20000–29999).
    case ephemeral
    /// Only the latest per (pubkey, kind, `d` tag) is kept (30000–39999).
    case addressable

    public init(kind: Int) {
        switch kind {
        case 0, 3, 10_000..<20_000: self = .replaceable
        case 20_000..<30_000: self = .ephemeral
        case 30_000..<40_000: self = .addressable
        default: self = .regular
        }
    }
}

/// Kinds Burrow refers to by name.
public enum Kind {
    public static let metadata = 0
    public static let textNote = 1
    public static let deletion = 5
    public static let seal = 13
    public static let chatMessage = 9
    public static let giftWrap = 1059
    public static let clientAuthentication = 22242

    /// NIP-01 kinds are 0…65535.
    public static let validRange: ClosedRange<Int> = 0...65_535
}

/// Tag access shared by every event-shaped type.
public protocol TaggedEvent {
    var tags: [[String]] { get }
}

extension TaggedEvent {
    /// The tags whose name (first element) is `name`.
    public func tags(named name: String) -> [[String]] {
        tags.filter { $0.first == name }
    }

    /// The value (second element) of the first tag named `name`.
    public func firstTagValue(_ name: String) -> String? {
        for tag in tags where tag.count >= 2 && tag[0] == name { return tag[1] }
        return nil
    }

    /// The values (second elements) of every tag named `name`, in order.
    public func tagValues(_ name: String) -> [String] {
        tags.compactMap { $0.count >= 2 && $0[0] == name ? $0[1] : nil }
    }

    /// NIP-40: the `expiration` tag's unix time, when present and a valid integer.
    public var expiration: Int64? {
        guard let value = firstTagValue("expiration") else { return nil }
        return Int64(value)
    }

    /// NIP-40: true once `now` (unix seconds, passed in) is past the expiration.
    public func isExpired(now: Int64) -> Bool {
        guard let expiration else { return false }
        return now > expiration
    }

    /// NIP-01 `d` tag value of an addressable event ("" when absent, as NIP-01 specifies).
    public var identifier: String { firstTagValue("d") ?? "" }
}
