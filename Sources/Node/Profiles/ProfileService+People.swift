import Foundation
import Nostr
import RelayClient
import Store

/// A person's kind-0 profile as Burrow shows it (issue 22: people are names, not hex keys).
public struct ProfileView: Sendable, Equatable {
    public let pubkey: String
    public let name: String?
    public let about: String?
    public let picture: String?
    /// created_at of the profile event; nil when we hold none.
    public let updatedAt: Int64?
}

/// Kind-0 profiles (NIP-01 metadata): our own set with `profile set`, others' fetched for the
/// people we share a group, an invite or a DM with, and shown by name wherever a person appears.
extension ProfileService {
    /// Profile contents larger than this are not kept (NIP-01 sets no limit; names fit easily).
    public static let maximumProfileContent = 8 * 1024
    /// Longest name kept; a longer one is cut (it labels a line of human output or a map pin).
    public static let maximumProfileName = 64

    /// Publishes a new kind-0 with the given fields over the ones we already had (a field left
    /// nil keeps its value, an empty string removes it), stores it, and returns it.
    public func setProfile(name: String?, about: String?, picture: String?, timeout: Duration)
        async throws -> (ProfileView, Event, [PublishResult]) {
        if let name, name.count > Self.maximumProfileName {
            throw NodeError.invalidInput("a name is at most \(Self.maximumProfileName) characters")
        }
        let held = try store.transaction { try $0.profiles.get(pubkey: publicKey.bytes) }
        var members = (held.flatMap { try? JSONValue.parse($0.content) }?.objectValue) ?? []
        for (key, value) in [("name", name), ("about", about), ("picture", picture)] {
            guard let value else { continue }
            members.removeAll { $0.key == key }
            if !value.isEmpty { members.append(JSONMember(key, .string(value))) }
        }
        let content = JSONValue.object(members).jsonString
        guard content.utf8.count <= Self.maximumProfileContent else {
            throw NodeError.invalidInput("the profile is larger than \(Self.maximumProfileContent) bytes")
        }
        // Later than the one it replaces even within the same second: relays keep the lowest id
        // of equal times (NIP-01), which could be the older profile.
        let createdAt = max(Self.now(), (held?.createdAt ?? 0) + 1)
        let (event, results) = try await gateway.publish(kind: 0, content: content, tags: [], createdAt: createdAt, timeout: timeout)
        _ = try store.transaction { try keepProfile(event, tx: $0) }
        return (Self.profileView(publicKey.bytes, content: content, createdAt: event.createdAt), event, results)
    }

    /// The profile of `who` (a key, an npub, a contact's or a group member's name; nil: ours),
    /// fetched from the relays first when `sync`.
    public func profile(_ who: String?, sync: Bool, timeout: Duration) async throws -> ProfileView {
        let key = try who.map(resolvePerson) ?? publicKey
        if sync { await fetchProfiles(of: [key], timeout: timeout) }
        return try store.transaction { tx in
            guard let stored = try tx.profiles.get(pubkey: key.bytes) else {
                return ProfileView(pubkey: key.hex, name: try tx.memberNames.name(pubkey: key.bytes, mlsGroupID: []), about: nil,
                                   picture: nil, updatedAt: nil)
            }
            return Self.profileView(key.bytes, content: stored.content, createdAt: stored.createdAt)
        }
    }

    /// A person named on the command line: hex key, npub, or a unique display name among the
    /// members of our groups.
    func resolvePerson(_ text: String) throws -> PublicKey {
        if let key = try? PublicKey(hex: text) { return key }
        if text.hasPrefix("npub1"), let key = try? PublicKey(npub: text) { return key }
        let wanted = text.lowercased()
        let matches = try store.transaction { tx -> Set<PublicKey> in
            var found: Set<PublicKey> = []
            for row in try tx.groups.list() where row.state.isReadable {
                let group = try LoadedGroup(row)
                for member in group.group.members
                where try tx.memberNames.name(pubkey: member.bytes, mlsGroupID: row.mlsGroupID)?.lowercased() == wanted {
                    found.insert(member)
                }
            }
            return found
        }
        guard matches.count == 1, let key = matches.first else {
            throw NodeError.invalidInput(matches.isEmpty ? "nobody called \(text) in our groups; give their npub"
                                                         : "\(matches.count) people are called \(text); give their npub")
        }
        return key
    }

    /// Fetches and keeps the newest kind-0 of each of `keys` (their names then show everywhere).
    func fetchProfiles(of keys: [PublicKey], timeout: Duration) async {
        let keys = unique(keys)
        guard !keys.isEmpty, let urls = try? relays(),
              let events = try? await gateway.fetchEvents(Filter(authors: keys, kinds: [0]), from: urls, timeout: timeout, leavingStragglers: true) else { return }
        let wanted = Set(keys)
        _ = try? store.transaction { tx in
            for event in events.sorted(by: BurrowNode.createdAtOrder) where wanted.contains(event.pubkey) { try keepProfile(event, tx: tx) }
        }
    }

    /// Keeps a kind-0 event we asked for (or saw live for a key we know) if it is the newest we
    /// hold and within the size bound; its name becomes the key's display name.
    @discardableResult
    func keepProfile(_ event: Event, tx: StoreTransaction) throws -> Bool {
        guard event.kind == 0, event.content.utf8.count <= Self.maximumProfileContent,
              let parsed = try? JSONValue.parse(event.content), parsed.objectValue != nil else { return false }
        let stored = try tx.profiles.offer(StoredProfile(pubkey: event.pubkey.bytes, content: event.content, createdAt: event.createdAt,
                                                         eventID: event.id.bytes))
        if stored, let name = Self.displayName(parsed) {
            try tx.memberNames.set(pubkey: event.pubkey.bytes, mlsGroupID: [], name: name, at: event.createdAt)
        }
        return stored
    }

    /// NIP-24's `display_name` when set, else `name`; cut to `maximumProfileName`.
    static func displayName(_ profile: JSONValue) -> String? {
        let name = profile["display_name"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? profile["name"]?.stringValue
        guard let name, !name.isEmpty else { return nil }
        return String(name.prefix(maximumProfileName))
    }

    static func profileView(_ pubkey: [UInt8], content: String, createdAt: Int64) -> ProfileView {
        let parsed = try? JSONValue.parse(content)
        return ProfileView(pubkey: Hex.encode(pubkey), name: parsed.flatMap(displayName), about: parsed?["about"]?.stringValue,
                           picture: parsed?["picture"]?.stringValue, updatedAt: createdAt)
    }

    /// The people whose names we show: members of our groups and of pending invites, inviters,
    /// and ourselves.
    func peopleWeShow() -> [PublicKey] {
        (try? store.transaction { tx -> [PublicKey] in
            var keys: [PublicKey] = [publicKey]
            for row in try tx.groups.list() where row.state.isReadable || row.state == .pending {
                keys += try LoadedGroup(row).group.members
            }
            for invite in try tx.invites.list(state: .pending) { if let key = try? PublicKey(bytes: invite.inviter) { keys.append(key) } }
            return keys
        }) ?? [publicKey]
    }

    /// A person for a sentence: "Carol (npub1abc…)" when we hold a name, else the npub's start.
    func label(for key: PublicKey) -> String {
        let short = String(key.npub.prefix(16)) + "…"
        guard let name = try? store.transaction({ try $0.memberNames.name(pubkey: key.bytes, mlsGroupID: []) }) else { return short }
        return "\(name) (\(short))"
    }

    /// How long a command waits for profiles it fetches only to show names: a silent relay
    /// must not hold up the answer.
    static func profileWait(_ timeout: Duration) -> Duration { min(timeout, .seconds(3)) }

    /// `view` with the stored display names (group nickname, else profile name) of those of
    /// `keys` (hex) it has no name for yet.
    func withStoredNames(_ view: GroupView, for keys: [String]) -> GroupView {
        guard let id = try? Hex.decode(view.mlsGroupID) else { return view }
        var named = view
        for key in keys where named.memberNames[key] == nil {
            if let bytes = try? Hex.decode(key), let name = try? store.transaction({ try $0.memberNames.name(pubkey: bytes, mlsGroupID: id) }) {
                named.memberNames[key] = name
            }
        }
        return named
    }

    /// Fetches the profiles of members who just joined, so the update says "Dave joined
    /// Family" rather than a key (a short wait: the line is not held up by a silent relay).
    func nameNewMembers(in report: inout SyncReport, timeout: Duration) async {
        var unnamed: [PublicKey] = []
        for case .group(let view) in report.updates {
            for key in view.joined where view.memberNames[key] == nil { if let k = try? PublicKey(hex: key) { unnamed.append(k) } }
        }
        guard !unnamed.isEmpty else { return }
        await fetchProfiles(of: unnamed, timeout: ProfileService.profileWait(timeout))
        report.updates = report.updates.map { update in
            guard case .group(let view) = update else { return update }
            return .group(withStoredNames(view, for: view.joined))
        }
    }
}
