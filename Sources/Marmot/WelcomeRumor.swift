import MLS
import Nostr

/// A kind-444 Welcome rumor that passed MDK 0.8.0's receiver checks (`validate_welcome_event`)
/// and whose content decoded as an MLS Welcome. Joining still needs the group layer (and
/// consent); this only says the envelope is sound and what it refers to.
public struct VerifiedWelcomeRumor: Hashable, Sendable {
    public let rumor: Rumor
    /// The KeyPackage event (30443 or 443) the inviter consumed: match it against the
    /// KeyPackages we published before processing the Welcome.
    public let keyPackageEventID: EventID
    /// The group's relays, from every `relays` tag, in order, duplicates removed.
    public let relays: [RelayURL]
    /// The content as decoded (wire format `mls_welcome`).
    public let message: MLSMessage
    public let welcome: Welcome

    /// The admin who added us (the rumor's author, authenticated by the NIP-59 seal).
    public var inviter: PublicKey { rumor.pubkey }
}

/// MIP-02 Welcome rumors, as MDK 0.8.0 builds and checks them.
public enum WelcomeRumor {
    /// The rumor MDK's `build_welcome_rumors_for_key_packages` makes for one invitee: content =
    /// base64 of the TLS MLSMessage, tags `relays`, `e` (the consumed KeyPackage event),
    /// `client`, `encoding` in that order, authored by the committer. Gift-wrap it to the
    /// invitee only after the commit that added them is accepted by a relay.
    public static func build(welcome message: MLSMessage, keyPackageEventID: EventID, relays: [RelayURL],
                             committer: PublicKey, createdAt: Int64, client: String? = MarmotTag.defaultClient) throws -> Rumor {
        guard case .welcome = message.body else {
            throw MarmotError.welcomeNotWelcome(wireFormat: message.wireFormat.rawValue)
        }
        var tags: [[String]] = [["relays"] + relays.map(\.string), ["e", keyPackageEventID.hex]]
        if let client { tags.append(["client", client]) }
        tags.append(["encoding", MarmotTag.base64])
        do {
            return try Rumor(pubkey: committer, createdAt: createdAt, kind: MarmotKind.welcome, tags: tags,
                             content: StrictBase64.encode(message.tlsSerialized))
        } catch let error as NostrError {
            throw MarmotError.innerEventInvalid(error)
        }
    }

    /// MDK's receiver rules, order-free over the tags: kind 444; at least three tags; every
    /// non-empty `relays` tag holds parseable relay URLs and one exists; an `e` tag with a
    /// value; every `client` tag has a non-empty value; every `encoding` tag says exactly
    /// "base64" and one exists. Then the content must be base64 of exactly one MLSMessage
    /// carrying a Welcome.
    ///
    /// Stricter than MDK on two points, both of which MDK-made Welcomes meet: the `e` value
    /// must be an event id (64 hex), since it has to name a KeyPackage event we published; and
    /// bytes after the MLSMessage are rejected (MDK ignores them).
    public static func verify(_ rumor: Rumor) throws -> VerifiedWelcomeRumor {
        guard rumor.kind == MarmotKind.welcome else {
            throw MarmotError.wrongKind(expected: [MarmotKind.welcome], actual: rumor.kind)
        }
        guard rumor.tags.count >= 3 else { throw MarmotError.welcomeTooFewTags(rumor.tags.count) }

        var relays: [RelayURL] = []
        var seenRelays = Set<RelayURL>()
        var hasRelays = false
        var eventReference: String?
        var hasEncoding = false
        for tag in rumor.tags {
            switch tag.first {
            case "relays" where tag.count > 1:
                for value in tag.dropFirst() {
                    let url = try RelayURL.marmot(value)
                    if seenRelays.insert(url).inserted { relays.append(url) }
                }
                hasRelays = true
            case "e":
                if eventReference == nil, let value = TagRules.content(tag), !value.isEmpty { eventReference = value }
            case "client":
                guard let value = TagRules.content(tag), !value.isEmpty else {
                    throw MarmotError.invalidTag("client", reason: "empty")
                }
            case "encoding":
                guard TagRules.content(tag) == MarmotTag.base64 else {
                    throw MarmotError.invalidTag("encoding", reason: "must be base64")
                }
                hasEncoding = true
            default:
                break
            }
        }
        guard hasRelays else { throw MarmotError.missingTag("relays") }
        guard let eventReference else { throw MarmotError.missingTag("e") }
        guard hasEncoding else { throw MarmotError.missingTag("encoding") }
        guard eventReference.utf8.count == 64, let keyPackageEventID = try? EventID(hex: eventReference) else {
            throw MarmotError.invalidTag("e", reason: "not an event id")
        }

        let bytes = try StrictBase64.decode(rumor.content, field: "content")
        let message: MLSMessage
        do {
            message = try MLSMessage(tlsSerialized: bytes)
        } catch let error as TLSDecodingError {
            throw MarmotError.welcomeDecoding(error)
        }
        guard case .welcome(let welcome) = message.body else {
            throw MarmotError.welcomeNotWelcome(wireFormat: message.wireFormat.rawValue)
        }
        return VerifiedWelcomeRumor(rumor: rumor, keyPackageEventID: keyPackageEventID, relays: relays,
                                    message: message, welcome: welcome)
    }
}
