import Nostr

/// The payload of a nostr-event packet (8.4): the UTF-8 JSON of a signed NIP-01 event with
/// exactly the seven NIP-01 members, of a kind the mesh carries (445 group events, 1059 gift
/// wraps, 443/30443 KeyPackages), whose id and BIP-340 signature verify. Every node checks this
/// before storing or forwarding, so one node cannot spread forged events N-fold.
public enum CarriedEvent {
    public static let carriedKinds: Set<Int> = [445, 1059, 443, 30443]
    private static let members: Set<String> = ["id", "pubkey", "created_at", "kind", "tags", "content", "sig"]

    /// The verified event, or `bad_event`.
    public static func verify(_ payload: [UInt8]) throws(MeshError) -> Event {
        guard let value = try? JSONValue.parse(payload), let object = value.objectValue,
              object.count == members.count, Set(object.map(\.key)) == members,
              let unverified = try? UnverifiedEvent(jsonValue: value),
              carriedKinds.contains(unverified.kind),
              let event = try? unverified.verified()
        else { throw .badEvent }
        return event
    }
}
