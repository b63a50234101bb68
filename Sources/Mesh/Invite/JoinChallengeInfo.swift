import Nostr

/// The challenge plaintext (10.4): `{"groupId": MLS group id hex, "name": group name}`.
public struct JoinChallengeInfo: Sendable, Hashable {
    public let groupID: String
    public let name: String

    public init(groupID: String, name: String) {
        self.groupID = groupID
        self.name = name
    }

    public var json: [UInt8] {
        JSONValue.object([JSONMember("groupId", .string(groupID)), JSONMember("name", .string(name))]).jsonBytes
    }

    public static func decode(_ bytes: [UInt8]) throws(MeshError) -> JoinChallengeInfo {
        guard let value = try? JSONValue.parse(bytes), let groupID = value["groupId"]?.stringValue,
              let name = value["name"]?.stringValue
        else { throw .badPayload }
        return JoinChallengeInfo(groupID: groupID, name: name)
    }
}
