import Nostr

/// The kind-10051 list of relays where a user's KeyPackages live (MIP-00): a replaceable event
/// signed by the identity key, empty content, one `["relay", url]` tag per relay (NIP-51 style,
/// like kind 10050). Inviters look for KeyPackages there first.
public struct KeyPackageRelayList: Hashable, Sendable {
    public let author: PublicKey
    public let createdAt: Int64
    /// Distinct relays in tag order.
    public let relays: [RelayURL]

    /// Reads a (signature-checked) kind-10051 event. As White Noise does, tags that are not
    /// `relay` tags or whose URL does not parse are skipped; an empty list is valid (callers
    /// fall back to the user's other relay lists).
    public init(_ event: Event) throws {
        guard event.kind == MarmotKind.keyPackageRelayList else {
            throw MarmotError.wrongKind(expected: [MarmotKind.keyPackageRelayList], actual: event.kind)
        }
        var seen = Set<RelayURL>()
        var relays: [RelayURL] = []
        for tag in event.tags where tag.first == "relay" {
            guard let value = TagRules.content(tag), let url = try? RelayURL(value) else { continue }
            if seen.insert(url).inserted { relays.append(url) }
        }
        self.author = event.pubkey
        self.createdAt = event.createdAt
        self.relays = relays
    }

    /// `["relay", url]` for each relay, in order, duplicates removed.
    public static func tags(relays: [RelayURL]) -> [[String]] {
        var seen = Set<RelayURL>()
        return relays.filter { seen.insert($0).inserted }.map { ["relay", $0.string] }
    }

    /// Signs the list with the identity key.
    public static func sign<R: RandomNumberGenerator>(relays: [RelayURL], keys: Keys, createdAt: Int64, rng: inout R) throws -> Event {
        try Event.sign(kind: MarmotKind.keyPackageRelayList, content: "", tags: tags(relays: relays),
                       createdAt: createdAt, keys: keys, rng: &rng)
    }
}
