import Nostr

/// The content of an inner kind-9 event. White Noise and Burrow send plain text; Whistle sends
/// a JSON family discriminated by `type` (WhistleCore ChatPayload, NicknamePayload,
/// AvatarPayload, GroupAvatarPayload), each `{…,"ts":<unix s>,"v":1}`.
///
/// Classification follows Whistle's receiver: a JSON object with a string `type` is a Whistle
/// payload (an unknown type is not chat text); anything else is plain text.
public enum ChatContent: Equatable, Sendable {
    /// Plain text, shown as is.
    case text(String)
    /// `{"type":"chat","text":…}`.
    case chat(WhistleText)
    /// `{"type":"nickname","name":…}`: the sender's display name in this group.
    case nickname(WhistleText)
    /// `{"type":"avatar","img":…}`: the sender's base64 JPEG avatar; empty removes it.
    case avatar(WhistleText)
    /// `{"type":"group_avatar","img":…}`: the group photo; receivers accept it from admins only.
    case groupAvatar(WhistleText)
    /// A Whistle `type` this version does not know (not shown as chat).
    case unknownType(String)

    /// One string-valued Whistle payload with its timestamp and schema version.
    public struct WhistleText: Equatable, Sendable {
        /// `text`, `name` or `img`, by payload type.
        public var value: String
        /// `ts`: unix seconds at the sender.
        public var timestamp: Int64
        /// `v`.
        public var version: Int64

        public init(value: String, timestamp: Int64, version: Int64 = 1) {
            self.value = value
            self.timestamp = timestamp
            self.version = version
        }
    }

    /// Classifies `content`. A known Whistle type with a missing or mistyped member throws
    /// `invalidPayload` (Whistle then shows a "chat" payload's raw content; other types are
    /// dropped).
    public init(parsing content: String) throws {
        guard let fields = PayloadFields(kind: MarmotKind.chat, content: content),
              case .string(let type)? = fields.object["type"]
        else {
            self = .text(content)
            return
        }
        func payload(_ member: String) throws -> WhistleText {
            WhistleText(value: try fields.string(member), timestamp: try fields.integer("ts"), version: try fields.integer("v"))
        }
        switch type {
        case "chat": self = .chat(try payload("text"))
        case "nickname": self = .nickname(try payload("name"))
        case "avatar": self = .avatar(try payload("img"))
        case "group_avatar": self = .groupAvatar(try payload("img"))
        default: self = .unknownType(type)
        }
    }

    /// The text to show as a chat line: plain text or a Whistle chat payload's text; nil for
    /// the payloads that are not chat lines.
    public var chatText: String? {
        switch self {
        case .text(let text): return text
        case .chat(let payload): return payload.value
        case .nickname, .avatar, .groupAvatar, .unknownType: return nil
        }
    }

    /// The content string for this value (plain text as is; Whistle payloads as JSON with
    /// members `type`, the value, `ts`, `v`).
    public var content: String {
        func json(_ type: String, _ key: String, _ payload: WhistleText) -> String {
            JSONValue.object([
                JSONMember("type", .string(type)), JSONMember(key, .string(payload.value)),
                JSONMember("ts", .integer(payload.timestamp)), JSONMember("v", .integer(payload.version)),
            ]).jsonString
        }
        switch self {
        case .text(let text): return text
        case .chat(let payload): return json("chat", "text", payload)
        case .nickname(let payload): return json("nickname", "name", payload)
        case .avatar(let payload): return json("avatar", "img", payload)
        case .groupAvatar(let payload): return json("group_avatar", "img", payload)
        case .unknownType(let type): return JSONValue.object([JSONMember("type", .string(type))]).jsonString
        }
    }
}
