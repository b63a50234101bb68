import MLS
import Marmot
import Nostr
import SeededRandom

/// The Marmot readers of Nostr events and rumors (MIP-00..03), fed JSON the way the event
/// pipeline would hand them over. An input's fields are taken with NIP-01's rules, then made
/// into what the reader expects so the fuzzer needs no hashes or signatures: a rumor with its
/// id computed, or an event signed here by a fixed key.
///
/// - rumors: inner events (`InnerEvent.verify`, `InnerContent`: chat, location, reaction,
///   deletion), join requests (kind 1080, `JoinRequest`) and Welcome rumors (kind 444; a Welcome addressed to the fixed KeyPackage of
///   `WelcomeFixture` goes on to a join);
/// - events of kinds 30443/443 (`KeyPackageEvent.verify`), 10051 (`KeyPackageRelayList`) and
///   445 (`GroupEvent.validate`, then decryption under a fixed exporter secret).
///
/// Properties: a rumor's JSON is accepted as an inner event from its author; a parsed location
/// payload survives its own serializer.
public enum MarmotEventTarget: FuzzTarget {
    public static let name = "marmot-event"

    /// The key events are signed with here; KeyPackage seeds name it as their identity.
    public static let keys: Keys? = (try? SecretKey(bytes: [UInt8](repeating: 0x55, count: 32))).map(Keys.init)
    /// The exporter secret 445 seeds are sealed with.
    public static let exporterSecret = Secret([UInt8](repeating: 0x66, count: 32))

    static let signedKinds: Set<Int> = [
        MarmotKind.keyPackage, MarmotKind.legacyKeyPackage, MarmotKind.keyPackageRelayList, MarmotKind.groupEvent,
    ]

    public static func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        guard let fields = eventFields(bytes) else { return .rejected("fields") }
        var outcome = FuzzOutcome.rejected("marmot")
        if let rumor = try? Rumor(pubkey: fields.pubkey, createdAt: fields.createdAt, kind: fields.kind, tags: fields.tags,
                                  content: fields.content) {
            outcome = try examine(rumor)
        }
        if signedKinds.contains(fields.kind), let keys {
            var rng = SplitMix64(seedingFrom: bytes)
            if let event = try? Event.sign(kind: fields.kind, content: fields.content, tags: fields.tags,
                                           createdAt: fields.createdAt, keys: keys, rng: &rng) {
                let signed = examine(event)
                if signed.isAccepted || !outcome.isAccepted { outcome = signed }
            }
        }
        return outcome
    }

    /// The NIP-01 fields of a JSON object, whatever its id and sig say.
    static func eventFields(_ bytes: [UInt8]) -> UnverifiedEvent? {
        guard case .object(let members)? = try? JSONValue.parse(bytes) else { return nil }
        var fields = members.filter { $0.key != "id" && $0.key != "sig" }
        fields.append(JSONMember("id", .string(String(repeating: "0", count: 64))))
        fields.append(JSONMember("sig", .string(String(repeating: "0", count: 128))))
        return try? UnverifiedEvent(jsonValue: .object(fields))
    }

    static func examine(_ rumor: Rumor) throws -> FuzzOutcome {
        guard (try? InnerEvent.verify(applicationData: rumor.jsonBytes, senderIdentity: rumor.pubkey.bytes)) != nil else {
            throw PropertyViolation(name, "a rumor's own JSON is refused as an inner event from its author")
        }
        if rumor.kind == MarmotKind.welcome {
            guard let welcome = try? WelcomeRumor.verify(rumor) else { return .rejected("WelcomeRumor") }
            let joined = MLSMessageTarget.examine(welcome.welcome)
            return joined.isAccepted ? joined : .accepted("WelcomeRumor")
        }
        if rumor.kind == MarmotKind.joinRequest { return try examineJoinRequest(rumor) }
        guard let content = try? InnerContent(parsing: rumor) else { return .rejected("InnerContent") }
        if case .location(let payload) = content {
            guard (try? LocationPayload(json: payload.json)) == payload else {
                throw PropertyViolation(name, "a location payload does not survive its own serializer")
            }
        }
        return .accepted("InnerContent")
    }

    /// A kind-1080 join request: the object, its KeyPackage envelope and then MIP-00. Property:
    /// a request that verifies survives its own serializer.
    static func examineJoinRequest(_ rumor: Rumor) throws -> FuzzOutcome {
        guard let request = try? UnverifiedJoinRequest.decode(Array(rumor.content.utf8)).verified() else {
            return .rejected("JoinRequest")
        }
        guard (try? JoinRequest.decode(request.json)) == request else {
            throw PropertyViolation(name, "a join request does not survive its own serializer")
        }
        guard (try? KeyPackageEvent.verify(request.keyPackage, now: FuzzClock.now)) != nil else { return .rejected("JoinRequest.keyPackage") }
        return .accepted("JoinRequest")
    }

    static func examine(_ event: Event) -> FuzzOutcome {
        switch event.kind {
        case MarmotKind.keyPackage, MarmotKind.legacyKeyPackage:
            guard let verified = try? KeyPackageEvent.verify(event, now: FuzzClock.now) else { return .rejected("KeyPackageEvent") }
            _ = verified.keyPackage.reference
            return .accepted("KeyPackageEvent")
        case MarmotKind.keyPackageRelayList:
            guard let list = try? KeyPackageRelayList(event) else { return .rejected("KeyPackageRelayList") }
            _ = KeyPackageRelayList.tags(relays: list.relays)
            return .accepted("KeyPackageRelayList")
        default:
            guard let validated = try? GroupEvent.validate(event, now: FuzzClock.now) else { return .rejected("GroupEvent.validate") }
            guard let decrypted = try? validated.decrypt(using: [exporterSecret]) else { return .rejected("GroupEvent.decrypt") }
            _ = try? ProtectedMessage(decrypted.message)
            return .accepted("GroupEvent")
        }
    }
}
