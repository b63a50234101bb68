import Nostr

/// Whistle's invite deep link (Docs/join-requests.md, Docs/cli.md): `whistle://invite/<base64 JSON>` with
/// `{"relay", "inviterNpub", "groupId"}`. It names whom to send a join request and for which
/// group; it proves nothing, so the request it leads to still waits for the inviter's approval.
public struct WhistleInviteLink: Sendable, Hashable {
    public static let prefix = "whistle://invite/"

    /// A relay the inviter reads, if the link names a usable one.
    public let relay: RelayURL?
    public let inviter: PublicKey
    /// The MLS group id, hex.
    public let groupID: String

    public init(relay: RelayURL?, inviter: PublicKey, groupID: String) {
        self.relay = relay
        self.inviter = inviter
        self.groupID = groupID
    }

    /// Whether `text` is meant as a link (then `parse` says what is wrong with it, if anything).
    public static func looksLikeLink(_ text: String) -> Bool { text.lowercased().hasPrefix(prefix) }

    /// Parses a link. The payload may be standard or URL-safe base64, padded or not. The
    /// inviter may be an npub or hex; the group id must be hex. A relay that does not parse
    /// is an error (a link that names one means the joiner should use it).
    public static func parse(_ text: String) throws(JoinRequestError) -> WhistleInviteLink {
        let trimmed = text.trimmingWhitespace
        guard looksLikeLink(trimmed) else { throw .malformed("not a whistle://invite/ link") }
        var payload = String(trimmed.dropFirst(prefix.count))
        if let end = payload.firstIndex(where: { $0 == "?" || $0 == "#" }) { payload = String(payload[..<end]) }
        payload = String(payload.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        payload = payload.replacingPercentPadding
        while payload.utf8.count % 4 != 0 { payload += "=" }
        guard let bytes = StrictBase64.decode(payload), let value = try? JSONValue.parse(bytes), value.objectValue != nil else {
            throw .malformed("the link's payload is not base64 JSON")
        }
        guard let inviterText = value["inviterNpub"]?.stringValue else { throw .malformed("inviterNpub") }
        let inviter: PublicKey
        do { inviter = try inviterText.hasPrefix("npub1") ? PublicKey(npub: inviterText) : PublicKey(hex: inviterText) } catch {
            throw .malformed("inviterNpub")
        }
        guard let groupID = value["groupId"]?.stringValue, !groupID.isEmpty, (try? Hex.decode(groupID.lowercased())) != nil else {
            throw .malformed("groupId")
        }
        var relay: RelayURL?
        switch value["relay"] {
        case nil, .null?: relay = nil
        case .string(let text)? where text.isEmpty: relay = nil
        case .string(let text)?:
            guard let url = try? RelayURL(text) else { throw .malformed("relay") }
            relay = url
        default: throw .malformed("relay")
        }
        return WhistleInviteLink(relay: relay, inviter: inviter, groupID: groupID.lowercased())
    }

    /// The link as Whistle writes it (standard base64 of the JSON object).
    public var url: String {
        let object = JSONValue.object([
            JSONMember("relay", relay.map { .string($0.string) } ?? .null),
            JSONMember("inviterNpub", .string(inviter.npub)),
            JSONMember("groupId", .string(groupID)),
        ])
        return Self.prefix + StrictBase64.encode(object.jsonBytes)
    }
}

private extension String {
    var trimmingWhitespace: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars = scalars.dropFirst() }
        while let last = scalars.last, last.isWhitespace { scalars = scalars.dropLast() }
        return String(scalars)
    }

    /// `%3D` (an escaped `=`) back to `=`, as links pasted from a browser may carry it.
    var replacingPercentPadding: String {
        var out: [Character] = []
        var characters = Array(self)[...]
        while let first = characters.first {
            if first == "%", characters.count >= 3, characters.dropFirst().prefix(2).map({ $0.uppercased() }).joined() == "3D" {
                out.append("=")
                characters = characters.dropFirst(3)
            } else {
                out.append(first)
                characters = characters.dropFirst()
            }
        }
        return String(out)
    }
}
