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

/// The join request (10.4): the content of Whistle's kind-1080 join request, carrying the
/// joiner's KeyPackage event. Decoding checks the shape and that the KeyPackage is a valid
/// 443/30443 event signed by `pubkey`; that the inviter still administers the group and that
/// the welcome fits are the node's checks.
public struct JoinRequest: Sendable, Hashable {
    public let groupID: String
    /// The joiner's Nostr key.
    public let pubkey: PublicKey
    /// The KeyPackage event, verified.
    public let keyPackage: Event
    public let name: String?

    public init(groupID: String, pubkey: PublicKey, keyPackage: Event, name: String?) {
        self.groupID = groupID
        self.pubkey = pubkey
        self.keyPackage = keyPackage
        self.name = name
    }

    public var json: [UInt8] {
        var members = [
            JSONMember("type", .string("join-request")), JSONMember("v", .integer(1)),
            JSONMember("groupId", .string(groupID)), JSONMember("pubkey", .string(pubkey.hex)),
            JSONMember("keyPackage", .string(keyPackage.jsonString)),
        ]
        if let name { members.append(JSONMember("name", .string(name))) }
        return JSONValue.object(members).jsonBytes
    }

    /// The request's shape (`bad_payload`), then its KeyPackage (`key_package_invalid`).
    public static func decode(_ bytes: [UInt8]) throws(MeshError) -> JoinRequest {
        guard let value = try? JSONValue.parse(bytes), value["type"]?.stringValue == "join-request",
              value["v"]?.integerValue == 1, let groupID = value["groupId"]?.stringValue,
              let pubkeyHex = value["pubkey"]?.stringValue, let keyPackageJSON = value["keyPackage"]?.stringValue
        else { throw .badPayload }
        let name = value["name"]?.stringValue
        guard let pubkey = try? PublicKey(hex: pubkeyHex), let unverified = try? UnverifiedEvent(json: keyPackageJSON),
              [443, 30443].contains(unverified.kind), let keyPackage = try? unverified.verified(), keyPackage.pubkey == pubkey
        else { throw .keyPackageInvalid }
        return JoinRequest(groupID: groupID, pubkey: pubkey, keyPackage: keyPackage, name: name)
    }
}
