import Nostr

/// Why a join request is refused. Cases name the rule that failed and never quote the input
/// (a request carries nothing secret, but refusals stay short and uniform).
public enum JoinRequestError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not the join-request object: not JSON, another `type` or `v`, or a member missing or
    /// mistyped (the member is named).
    case malformed(String)
    /// `pubkey` is not an x-only public key in hex.
    case invalidPubkey
    /// The KeyPackage is not a signed 443/30443 event by `pubkey`, or breaks MIP-00; says which.
    case keyPackageInvalid(String)
    /// The rumor is not of kind 1080.
    case wrongKind(Int)
    /// The rumor's author (the seal's signer) is not the request's `pubkey`: someone asks on
    /// another's behalf.
    case authorMismatch
    /// The request names another group than the one it was answered for.
    case groupMismatch

    public var description: String {
        switch self {
        case .malformed(let member): return "not a join request: \(member)"
        case .invalidPubkey: return "the request's pubkey is not a public key"
        case .keyPackageInvalid(let reason): return "the request's KeyPackage is invalid: \(reason)"
        case .wrongKind(let kind): return "a rumor of kind \(kind) is not a join request (kind \(MarmotKind.joinRequest))"
        case .authorMismatch: return "the request's pubkey is not the key that sealed it"
        case .groupMismatch: return "the request names another group"
        }
    }
}

/// A join request as it arrived: the JSON object's members, typed but unchecked. Only
/// `verified()` yields the `JoinRequest` the rest of the program accepts.
public struct UnverifiedJoinRequest: Sendable, Hashable {
    public let groupID: String
    public let pubkey: String
    public let keyPackageJSON: String
    public let name: String?

    /// Whistle's object (`JoinRequest.swift` @0345c21c, Docs/join-requests.md; Docs/protocols/mesh.md 10.4):
    /// `{"type":"join-request","v":1,"groupId","pubkey","keyPackage":<event JSON string>,"name"?}`.
    public static func decode(_ bytes: [UInt8]) throws(JoinRequestError) -> UnverifiedJoinRequest {
        guard let value = try? JSONValue.parse(bytes), value.objectValue != nil else { throw .malformed("not a JSON object") }
        guard value["type"]?.stringValue == "join-request" else { throw .malformed("type") }
        guard value["v"]?.integerValue == 1 else { throw .malformed("v") }
        guard let groupID = value["groupId"]?.stringValue else { throw .malformed("groupId") }
        guard let pubkey = value["pubkey"]?.stringValue else { throw .malformed("pubkey") }
        guard let keyPackage = value["keyPackage"]?.stringValue else { throw .malformed("keyPackage") }
        let name: String?
        switch value["name"] {
        case nil, .null?: name = nil
        case .string(let text)?: name = text
        default: throw .malformed("name")
        }
        return UnverifiedJoinRequest(groupID: groupID, pubkey: pubkey, keyPackageJSON: keyPackage, name: name)
    }

    /// The envelope checks both transports make: `pubkey` is a key, and the KeyPackage is an
    /// event of kind 443 or 30443 whose signature verifies and whose author is `pubkey`. The
    /// KeyPackage's own rules (MIP-00) are the receiver's next step (`KeyPackageEvent.verify`),
    /// since the mesh carries the request before anyone can judge the package.
    public func verified() throws(JoinRequestError) -> JoinRequest {
        guard let key = try? PublicKey(hex: pubkey) else { throw .invalidPubkey }
        let unverified: UnverifiedEvent
        do { unverified = try UnverifiedEvent(json: keyPackageJSON) } catch {
            throw .keyPackageInvalid("not an event")
        }
        let kinds = [MarmotKind.keyPackage, MarmotKind.legacyKeyPackage]
        guard kinds.contains(unverified.kind) else { throw .keyPackageInvalid("kind \(unverified.kind) is not a KeyPackage") }
        let event: Event
        do { event = try unverified.verified() } catch { throw .keyPackageInvalid("its signature does not verify") }
        guard event.pubkey == key else { throw .keyPackageInvalid("signed by another key than the request's pubkey") }
        return JoinRequest(groupID: groupID, pubkey: key, keyPackage: event, name: name)
    }
}

/// A join request whose KeyPackage is a signed 443/30443 event by the joiner (`pubkey`). That
/// the package itself is valid, that the group is ours to administer and that the welcome fits
/// are the inviter's checks.
public struct JoinRequest: Sendable, Hashable {
    /// The MLS group id, hex, as the joiner was told it.
    public let groupID: String
    /// The joiner's Nostr key.
    public let pubkey: PublicKey
    /// The KeyPackage event (signature verified, by `pubkey`).
    public let keyPackage: Event
    /// What the joiner calls itself, if it said.
    public let name: String?

    public init(groupID: String, pubkey: PublicKey, keyPackage: Event, name: String?) {
        self.groupID = groupID
        self.pubkey = pubkey
        self.keyPackage = keyPackage
        self.name = name
    }

    /// The object in Whistle's member order; `name` only when given.
    public var json: [UInt8] {
        var members = [
            JSONMember("type", .string("join-request")), JSONMember("v", .integer(1)),
            JSONMember("groupId", .string(groupID)), JSONMember("pubkey", .string(pubkey.hex)),
            JSONMember("keyPackage", .string(keyPackage.jsonString)),
        ]
        if let name { members.append(JSONMember("name", .string(name))) }
        return JSONValue.object(members).jsonBytes
    }

    /// Decodes and verifies in one step (`UnverifiedJoinRequest.decode`, then `verified()`).
    public static func decode(_ bytes: [UInt8]) throws(JoinRequestError) -> JoinRequest {
        try UnverifiedJoinRequest.decode(bytes).verified()
    }

    /// The group id as bytes, or nil when `groupID` is not hex naming at least one byte.
    public var groupIDBytes: [UInt8]? {
        guard !groupID.isEmpty, let bytes = try? Hex.decode(groupID.lowercased()), !bytes.isEmpty else { return nil }
        return bytes
    }

    /// Refuses a request for another group than `expected` (hex; case does not matter).
    public func require(groupID expected: String) throws(JoinRequestError) {
        guard groupID.lowercased() == expected.lowercased() else { throw .groupMismatch }
    }
}
