/// What a node can do (section 8.1), announced to its neighbours.
public struct Capabilities: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Forwards others' packets (7.1).
    public static let relay = Capabilities(rawValue: 0x0001)
    /// Keeps carried packets for others and answers sync (9).
    public static let store = Capabilities(rawValue: 0x0002)
    /// Reaches Nostr relays.
    public static let bridge = Capabilities(rawValue: 0x0004)
    /// Takes Pigeon DMs.
    public static let dm = Capabilities(rawValue: 0x0008)
}

/// An announce payload (8.1): TLVs in strictly increasing type order. Unknown types are
/// skipped (room for later versions); duplicates, disorder, truncation or a missing required
/// TLV are `bad_payload`.
public struct Announce: Sendable, Hashable {
    public static let maxNeighbours = 8
    public static let maxNicknameBytes = 32

    /// Off by default: a nickname is a long-term identifier.
    public var nickname: String?
    public var capabilities: Capabilities
    /// Up to 8 neighbour ids, most recently heard first.
    public var neighbours: [MeshID]
    /// A node with feeds on: `HMAC-SHA256(P, "burrow-feed-v1:presence" ‖ mesh_key)[0..8)` (feed.md
    /// 8.2, TLV 0x04); only its contacts, who hold `P`, can recognise it.
    public var presenceTag: [UInt8]?

    public init(nickname: String? = nil, capabilities: Capabilities, neighbours: [MeshID], presenceTag: [UInt8]? = nil) {
        self.nickname = nickname
        self.capabilities = capabilities
        self.neighbours = neighbours
        self.presenceTag = presenceTag
    }

    public static func decode(_ payload: [UInt8]) throws(MeshError) -> Announce {
        var reader = ByteReader(payload)
        var lastType: UInt8?
        var nickname: String?, capabilities: Capabilities?, neighbours: [MeshID]?, presenceTag: [UInt8]?
        while !reader.isAtEnd {
            guard let type = try? reader.u8(), let length = try? reader.u8(), let value = try? reader.take(Int(length)) else {
                throw .badPayload
            }
            if let lastType, type <= lastType { throw .badPayload }
            lastType = type
            switch type {
            case 0x01:
                guard (1...maxNicknameBytes).contains(value.count), let text = String(validatingUTF8: value) else {
                    throw .badPayload
                }
                nickname = text
            case 0x02:
                guard value.count == 2 else { throw .badPayload }
                capabilities = Capabilities(rawValue: UInt16(value[0]) << 8 | UInt16(value[1]))
            case 0x03:
                guard value.count % 8 == 0, value.count / 8 <= maxNeighbours else { throw .badPayload }
                neighbours = stride(from: 0, to: value.count, by: 8).compactMap { MeshID(bytes: value[$0..<($0 + 8)]) }
            case 0x04:
                guard value.count == 8 else { throw .badPayload }
                presenceTag = Array(value)
            default:
                continue
            }
        }
        guard let capabilities, let neighbours else { throw .badPayload }
        return Announce(nickname: nickname, capabilities: capabilities, neighbours: neighbours, presenceTag: presenceTag)
    }

    public func encoded() throws(MeshError) -> [UInt8] {
        var out: [UInt8] = []
        if let nickname {
            let bytes = Array(nickname.utf8)
            guard (1...Self.maxNicknameBytes).contains(bytes.count) else { throw .invalidArgument }
            out += [0x01, UInt8(bytes.count)] + bytes
        }
        out += [0x02, 2]
        out.appendU16(capabilities.rawValue)
        guard neighbours.count <= Self.maxNeighbours else { throw .invalidArgument }
        out += [0x03, UInt8(neighbours.count * 8)]
        for id in neighbours { out.appendU64(id.value) }
        if let presenceTag {
            guard presenceTag.count == 8 else { throw .invalidArgument }
            out += [0x04, 8] + presenceTag
        }
        return out
    }
}

extension String {
    /// Strict UTF-8 decoding: `nil` for invalid sequences rather than replacement characters.
    init?(validatingUTF8 bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        self = text
    }
}
