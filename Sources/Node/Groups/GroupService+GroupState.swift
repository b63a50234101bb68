import Foundation
import MLS
import Marmot
import Nostr
import Store

extension LoadedGroup {
    var view: GroupView { view(stale: false) }

    func view(stale: Bool) -> GroupView {
        GroupView(
            nostrGroupID: group.nostrGroupID.hex, mlsGroupID: group.mlsGroupID.hex, name: group.data.name,
            description: group.data.description, epoch: group.epoch, members: group.members.map(\.hex),
            admins: group.admins.map(\.hex), relays: group.data.relays.map(\.string),
            state: stale && row.state == .active ? "stale" : row.state.rawValue)
    }

    /// The view with each member's display name (group nickname, else profile name).
    func namedView(stale: Bool = false, tx: StoreTransaction) throws -> GroupView {
        var view = view(stale: stale)
        for member in group.members {
            if let name = try tx.memberNames.name(pubkey: member.bytes, mlsGroupID: row.mlsGroupID) { view.memberNames[member.hex] = name }
        }
        return view
    }
}

extension GroupService {
    /// Resolves GROUP (Docs/cli.md): a nostr_group_id or mls_group_id, a unique prefix of
    /// either (at least 8 hex digits), or an exact unique name.
    func resolveGroup(_ text: String, in tx: StoreTransaction) throws -> LoadedGroup {
        let groups = try tx.groups.list().filter { $0.state != .declined }.map { try LoadedGroup($0) }
        let lower = text.lowercased()
        let isHex = lower.count >= 8 && lower.allSatisfy(\.isHexDigit)
        if isHex {
            let exact = groups.filter { Hex.encode($0.row.nostrGroupID) == lower || Hex.encode($0.row.mlsGroupID) == lower }
            if exact.count == 1 { return exact[0] }
            let prefixed = groups.filter {
                Hex.encode($0.row.nostrGroupID).hasPrefix(lower) || Hex.encode($0.row.mlsGroupID).hasPrefix(lower)
            }
            if prefixed.count == 1 { return prefixed[0] }
            if prefixed.count > 1 { throw NodeError.ambiguousGroup("\(text) matches \(prefixed.count) groups") }
        }
        let named = groups.filter { $0.group.data.name == text }
        if named.count == 1 { return named[0] }
        if named.count > 1 { throw NodeError.ambiguousGroup(Self.candidates(named, "\(named.count) groups are named \(text)")) }
        // Names are for people: case does not matter when it leaves one group.
        let folded = groups.filter { $0.group.data.name.lowercased() == lower }
        if folded.count == 1 { return folded[0] }
        if folded.count > 1 { throw NodeError.ambiguousGroup(Self.candidates(folded, "\(folded.count) groups are named \(text)")) }
        let near = groups.filter { Self.isNear($0.group.data.name.lowercased(), lower) }.map { "\"\($0.group.data.name)\"" }
        throw NodeError.unknownGroup("no group matches \(text)" + (near.isEmpty ? "" : "; did you mean \(near.joined(separator: " or "))?"))
    }

    /// "N groups are named X: give the id (Family ab12cd34…, Family 9f8e7d6c…)".
    static func candidates(_ groups: [LoadedGroup], _ lead: String) -> String {
        lead + "; give one's id: " + groups.map { "\($0.group.data.name) \(Hex.encode($0.row.nostrGroupID).prefix(12))" }.joined(separator: ", ")
    }

    /// A name one typo away (edit distance ≤ 2) or one that starts with what was typed.
    static func isNear(_ name: String, _ typed: String) -> Bool {
        guard !typed.isEmpty, !name.isEmpty else { return false }
        if name.hasPrefix(typed) || typed.hasPrefix(name) { return true }
        let a = Array(name), b = Array(typed)
        guard abs(a.count - b.count) <= 2, a.count <= 64 else { return false }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where j <= b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count] <= 2
    }

    /// The mls_group_id of GROUP.
    public func groupID(_ text: String) throws -> MLSGroupID {
        try store.transaction { try resolveGroup(text, in: $0).group.mlsGroupID }
    }

    public func list() throws -> [GroupView] {
        try store.transaction { tx in
            try tx.groups.list().filter { $0.state != .declined }.map {
                try LoadedGroup($0).namedView(stale: try isStale(MLSGroupID($0.mlsGroupID), tx), tx: tx)
            }
        }
    }

    public func group(_ text: String) throws -> GroupView {
        try store.transaction { tx in
            let loaded = try resolveGroup(text, in: tx)
            return try loaded.namedView(stale: try isStale(loaded.group.mlsGroupID, tx), tx: tx)
        }
    }

    func isStale(_ mlsGroupID: MLSGroupID, _ tx: StoreTransaction) throws -> Bool {
        try tx.settings.get(Settings.needsReAdd(mlsGroupID)) != nil
    }

    /// The public ratchet tree of GROUP at its current epoch.
    public func ratchetTree(_ text: String) throws -> RatchetTreeView {
        try store.transaction { tx in
            let mls = try resolveGroup(text, in: tx).group.mls
            return RatchetTreeView(epoch: mls.epoch, treeHash: Hex.encode(mls.ratchetTree.treeHash),
                                   ratchetTree: Hex.encode(mls.ratchetTree.tlsSerialized))
        }
    }

    func loadGroup(mlsGroupID: MLSGroupID, in tx: StoreTransaction) throws -> LoadedGroup {
        guard let row = try tx.groups.get(mlsGroupID: mlsGroupID.bytes) else { throw NodeError.unknownGroup(mlsGroupID.hex) }
        return try LoadedGroup(row, tx: tx)
    }

    /// The relays of the readable group an event's `h` tag names (where a group event the
    /// mesh carried is passed on); none when it names no group we read.
    func relayURLs(forEventOf event: Event) -> [String] {
        guard let hTag = BurrowNode.hTag(event), let ours = try? relays(),
              let urls = try? store.transaction({ tx -> [String]? in
                  guard let row = try tx.groups.readable().first(where: { Hex.encode($0.nostrGroupID) == hTag }) else { return nil }
                  return relayURLs(for: try LoadedGroup(row).group, ours: ours)
              }) ?? nil
        else { return [] }
        return urls
    }

    /// Where a group's events go and come from: its own relays and ours.
    func relayURLs(for group: MarmotGroup, ours: [String]) -> [String] {
        var urls = ours
        for relay in group.data.relays.map(\.string) where !urls.contains(relay) { urls.append(relay) }
        return urls
    }
}
