import Foundation
import Marmot
import Node
import Nostr

/// JSON and text forms of the Marmot views (Docs/cli.md field names).
enum MarmotOutput {
    static func group(_ g: GroupView) -> JSONOutput {
        .object([
            ("nostr_group_id", .string(g.nostrGroupID)), ("mls_group_id", .string(g.mlsGroupID)), ("name", .string(g.name)),
            ("description", .string(g.description)), ("epoch", .int(Int64(clamping: g.epoch))),
            ("members", .array(g.members.map { .string($0) })), ("admins", .array(g.admins.map { .string($0) })),
            ("relays", .array(g.relays.map { .string($0) })), ("state", .string(g.state)),
            ("member_names", .object(g.members.compactMap { key in g.memberNames[key].map { (key, .string($0)) } })),
        ] + (g.joined.isEmpty && g.left.isEmpty ? [] : [
            ("joined", .array(g.joined.map { .string($0) })), ("left", .array(g.left.map { .string($0) })),
        ]))
    }

    /// A person for people: the display name, else the start of the npub.
    static func person(_ hex: String, _ names: [String: String]) -> String {
        if let name = names[hex] { return TerminalText.sanitized(name) }
        return npubPrefix(hex)
    }

    static func npubPrefix(_ hex: String) -> String {
        guard let key = try? PublicKey(hex: hex) else { return String(hex.prefix(12)) }
        return String(key.npub.prefix(16)) + "…"
    }

    /// A `run` line for a group update: who joined or left, else the group's new epoch.
    static func groupChangeText(_ g: GroupView) -> String {
        let name = TerminalText.sanitized(g.name.isEmpty ? "(unnamed)" : g.name)
        var lines = g.joined.map { "\(person($0, g.memberNames)) joined \(name)" } + g.left.map { "\(person($0, g.memberNames)) left \(name)" }
        if lines.isEmpty { lines = ["\(name) is now at epoch \(g.epoch) [\(g.state)]"] }
        return lines.joined(separator: "\n")
    }

    static func groupText(_ g: GroupView) -> String {
        """
        \(g.name.isEmpty ? "(unnamed)" : g.name) [\(g.state)] epoch \(g.epoch)
          nostr_group_id \(g.nostrGroupID)
          mls_group_id   \(g.mlsGroupID)
          members        \(g.members.map { person($0, g.memberNames) }.joined(separator: ", "))
          admins         \(g.admins.map { person($0, g.memberNames) }.joined(separator: ", "))
          relays         \(g.relays.joined(separator: ", "))
        """ + (g.description.isEmpty ? "" : "\n  description    \(g.description)")
    }

    static func invite(_ i: InviteView) -> JSONOutput {
        .object([
            ("id", .string(i.id)), ("group_name", .string(i.groupName)), ("nostr_group_id", .string(i.nostrGroupID)),
            ("from", .string(i.from)), ("members", .array(i.members.map { .string($0) })),
        ] + (i.fromName.map { [("from_name", JSONOutput.string($0))] } ?? []))
    }

    static func inviteText(_ i: InviteView) -> String {
        "invite \(i.id.prefix(12)): \"\(TerminalText.sanitized(i.groupName))\" from \(i.fromName.map(TerminalText.sanitized) ?? npubPrefix(i.from)), "
            + "\(i.members.count) members"
    }

    static func location(_ p: LocationPayload) -> JSONOutput {
        var fields: [(String, JSONOutput)] = [
            ("type", .string(LocationPayload.type)), ("lat", .double(p.latitude)), ("lon", .double(p.longitude)),
            ("alt", .double(p.altitude)), ("acc", .double(p.accuracy)), ("ts", .int(p.timestamp)),
        ]
        if let battery = p.battery { fields.append(("batt", .int(battery))) }
        if let interval = p.interval { fields.append(("interval", .int(interval))) }
        if let stationary = p.stationary { fields.append(("stationary", .bool(stationary))) }
        fields.append(("v", .int(p.version)))
        return .object(fields)
    }

    static func message(_ m: MessageView) -> JSONOutput {
        var fields: [(String, JSONOutput)] = [
            ("id", .string(m.id)), ("event_id", .string(m.eventID)), ("kind", .int(m.kind)), ("sender", .string(m.sender)),
            ("sender_name", m.senderName.map { .string($0) } ?? .null), ("created_at", .int(m.createdAt)),
            ("content", .string(m.content)),
        ]
        if let text = m.text { fields.append(("text", .string(text))) }
        if let payload = m.location { fields.append(("location", Self.location(payload))) }
        if let reaction = m.reaction {
            fields.append(("reaction", .object([("emoji", .string(reaction.emoji)), ("target", .string(reaction.target.hex))])))
        }
        if let deleted = m.deleted { fields.append(("deleted", .array(deleted.map { .string($0) }))) }
        return .object(fields)
    }

    static func messageText(_ m: MessageView) -> String {
        let who = m.senderName.map(TerminalText.sanitized) ?? npubPrefix(m.sender)
        let at = "[\(time(m.createdAt))]"
        if let text = m.text { return "\(at) \(who): \(text)" }
        if let l = m.location {
            let accuracy = l.accuracy > 0 ? String(format: " ±%.0f m", l.accuracy) : ""
            return "\(at) \(who) is at " + String(format: "%.5f, %.5f", l.latitude, l.longitude) + accuracy
        }
        if m.kind == MarmotKind.leaveRequest { return "\(at) \(who) asks to leave the group" }
        if let r = m.reaction { return "\(at) \(who) reacted \(r.emoji) to \(r.target.hex.prefix(12))" }
        return "\(at) \(who) kind \(m.kind): \(m.content)"
    }

    /// Unix seconds for people (`HumanTime`: local, the date only when not today).
    static func time(_ seconds: Int64) -> String { HumanTime.format(seconds: seconds) }

    static func locationEntry(_ l: LocationView) -> JSONOutput {
        .object([
            ("member", .string(l.member)), ("name", l.name.map { .string($0) } ?? .null), ("lat", .double(l.payload.latitude)),
            ("lon", .double(l.payload.longitude)), ("acc", .double(l.payload.accuracy)), ("ts", .int(l.payload.timestamp)),
            ("stale", .bool(l.stale)), ("batt", l.payload.battery.map { .int($0) } ?? .null),
            ("interval", l.payload.interval.map { .int($0) } ?? .null), ("stationary", l.payload.stationary.map { .bool($0) } ?? .null),
        ])
    }

    static func issue(_ i: SyncIssue) -> JSONOutput {
        .object([("event_id", .string(i.eventID)), ("reason", .string(i.reason))])
    }

    /// One `run` line.
    static func update(_ u: NodeUpdate) -> JSONOutput {
        switch u {
        case .message(let m):
            guard case .object(let fields) = message(m) else { return .null }
            return .object([("type", .string("message")), ("group", .string(m.groupID))] + fields)
        case .group(let g):
            guard case .object(let fields) = group(g) else { return .null }
            return .object([("type", .string("group"))] + fields)
        case .invite(let i):
            guard case .object(let fields) = invite(i) else { return .null }
            return .object([("type", .string("invite"))] + fields)
        case .joinRequest(let r):
            guard case .object(let fields) = JoinRequestOutput.request(r) else { return .null }
            return .object([("type", .string("join_request"))] + fields)
        case .dm(let m):
            guard case .object(let fields) = DMOutput.message(m) else { return .null }
            return .object([("type", .string("dm"))] + fields)
        case .contact(let c):
            guard case .object(let fields) = DMOutput.contact(c) else { return .null }
            return .object([("type", .string("contact"))] + fields)
        case .error(let e):
            return .object([("type", .string("error")), ("event_id", .string(e.eventID)), ("reason", .string(e.reason))])
        case .location(let group, let l):
            guard case .object(let fields) = locationEntry(l) else { return .null }
            return .object([("type", .string("location")), ("group", .string(group))] + fields)
        case .alert(let a):
            return .object([("type", .string("alert")), ("alert", .string(a.kind.rawValue)), ("group", .string(a.group)),
                            ("group_name", .string(a.groupName)), ("member", .string(a.member)), ("name", a.name.map { .string($0) } ?? .null),
                            ("batt", a.battery.map { .int($0) } ?? .null), ("last_seen", .int(a.lastSeen))])
        case .feed(let e):
            // The line's `type` is `feed`; the entry's own type is `entry_type`.
            guard case .object(let fields) = FeedOutput.entry(e) else { return .null }
            return .object([("type", .string("feed")), ("entry_type", .string(e.type))] + fields.filter { $0.0 != "type" })
        case .lock(let locked, let reason):
            return .object([("type", .string("lock")), ("locked", .bool(locked)), ("reason", .string(reason))])
        case .ready(let pubkey, let socket, let relay):
            return .object([("type", .string("ready")), ("pubkey", .string(pubkey)), ("socket", .string(socket)),
                            ("embedded_relay", relay.map { .string($0) } ?? .null)])
        }
    }
}
