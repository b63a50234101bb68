import Foundation
import Marmot
import Node
import Nostr
import Store

/// What the page's API answers, as JSON. Every string here may come from a stranger (names,
/// chat, group names): the page renders them as text, never as HTML.
struct WebMe: Encodable {
    let pubkey: String
    let name: String?
    let csrf: String
    /// The tile URL template, or nil for a plain background.
    let tiles: String?
    let groups: [WebGroupSummary]
    let invites: [WebInvite]
}

struct WebGroupSummary: Encodable {
    let id: String
    let name: String
    let state: String
}

struct WebInvite: Encodable {
    let id: String
    let groupName: String
    let from: String
    let fromName: String?
    let who: String
}

struct WebGroup: Encodable {
    let id: String
    let name: String
    let epoch: UInt64
    let isAdmin: Bool
    let members: [WebMember]
    let pins: [WebPin]
    let messages: [WebMessage]
    let requests: [WebJoinRequest]
    let share: WebShare?
}

/// A person's label: their name, else the start of their npub (as the CLI shows them).
func displayName(_ name: String?, key: String) -> String {
    if let name, !name.isEmpty { return name }
    guard let parsed = try? PublicKey(hex: key) else { return String(key.prefix(12)) }
    return String(parsed.npub.prefix(16)) + "…"
}

struct WebMember: Encodable {
    let key: String
    let name: String?
    let who: String
    let admin: Bool
    let me: Bool
}

struct WebPin: Encodable {
    let member: String
    let name: String?
    let who: String
    let lat: Double
    let lon: Double
    /// Metres; 0 when unknown.
    let acc: Double
    let batt: Int64?
    let ts: Int64
    let stale: Bool
    let me: Bool
}

struct WebMessage: Encodable {
    let id: String
    let sender: String
    let name: String?
    let who: String
    let text: String
    let ts: Int64
    let me: Bool
    /// Emoji → how many members reacted with it.
    let reactions: [String: Int]
}

struct WebJoinRequest: Encodable {
    let id: String
    let from: String
    let name: String?
    let who: String
    let ts: Int64
}

struct WebShare: Encodable {
    let source: String
    let interval: Int64
    let paused: Bool
    let lastPublishAt: Int64?
    let error: String?
}

/// A nudge over the WebSocket: what changed, so the page fetches it again.
struct WebNudge: Encodable {
    let type: String
    let group: String?
    /// For alerts: the words to show.
    let text: String?

    var json: String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? #"{"type":"refresh"}"#
    }

    /// The nudge an update from the node gives the page, if any.
    init?(_ update: NodeUpdate) {
        switch update {
        case .message(let m): (type, group, text) = ("message", m.groupID, nil)
        case .location(let group, _): (type, self.group, text) = ("location", group, nil)
        case .group(let g): (type, group, text) = ("group", g.mlsGroupID, nil)
        case .invite: (type, group, text) = ("invite", nil, nil)
        case .joinRequest(let r): (type, group, text) = ("join_request", r.mlsGroupID, nil)
        case .alert(let a):
            let who = a.name ?? String(a.member.prefix(8))
            let words = a.kind == .batteryLow ? "\(who)'s battery is at \(a.battery ?? 0) %" : "\(who)'s location is out of date"
            (type, group, text) = ("alert", a.group, words)
        case .dm, .contact, .error, .ready, .lock, .feed: return nil
        }
    }
}

extension WebGroup {
    /// The page's view of one group: its members, their latest positions, the last messages
    /// with their reactions, pending join requests (for admins) and our share.
    init(_ view: GroupView, me: String, node: BurrowNode, messageLimit: Int) throws {
        let names = view.memberNames
        let isAdmin = view.admins.contains(me)
        let stored = try node.groups.messages(view.mlsGroupID, limit: messageLimit)
        var reactions: [String: [String: Set<String>]] = [:]
        for message in stored {
            guard let reaction = message.reaction else { continue }
            reactions[reaction.target.hex, default: [:]][reaction.emoji, default: []].insert(message.sender)
        }
        let deleted = Set(stored.flatMap { $0.deleted ?? [] })
        self.init(
            id: view.mlsGroupID, name: view.name, epoch: view.epoch, isAdmin: isAdmin,
            members: view.members.map {
                WebMember(key: $0, name: names[$0], who: displayName(names[$0], key: $0), admin: view.admins.contains($0), me: $0 == me)
            },
            // Only members' pins: someone who left is no longer on the family's map.
            pins: try node.groups.locations(view.mlsGroupID).filter { view.members.contains($0.member) }.map {
                WebPin(member: $0.member, name: $0.name, who: displayName($0.name, key: $0.member), lat: $0.payload.latitude, lon: $0.payload.longitude, acc: $0.payload.accuracy,
                       batt: $0.payload.battery, ts: $0.payload.timestamp, stale: $0.stale, me: $0.member == me)
            },
            messages: stored.compactMap { message in
                guard let text = message.text, !deleted.contains(message.eventID) else { return nil }
                return WebMessage(id: message.eventID, sender: message.sender, name: message.senderName,
                                  who: displayName(message.senderName, key: message.sender), text: text, ts: message.createdAt,
                                  me: message.sender == me, reactions: (reactions[message.eventID] ?? [:]).mapValues(\.count))
            },
            requests: isAdmin ? try node.groups.joinRequests(group: view.mlsGroupID).filter { $0.state == "pending" }.map {
                WebJoinRequest(id: $0.id, from: $0.from, name: $0.name, who: displayName($0.name, key: $0.from), ts: $0.createdAt)
            } : [],
            share: try node.groups.shares().first { $0.mlsGroupID == view.mlsGroupID }.map {
                WebShare(source: $0.source, interval: $0.interval, paused: $0.paused, lastPublishAt: $0.lastPublishAt, error: $0.lastError)
            })
    }
}
