import Nostr

/// A join request received over relays that passed every check that does not need the
/// inviter's groups: the rumor is a kind-1080 join request sealed by its `pubkey`, and the
/// KeyPackage is valid under MIP-00. Whether the group is ours to administer is the node's call.
public struct VerifiedJoinRequest: Sendable, Hashable {
    public let rumor: Rumor
    public let request: JoinRequest
    /// The request's KeyPackage, verified as `KeyPackageEvent.verify` does before any add.
    public let keyPackage: VerifiedKeyPackageEvent
    /// The group the joiner asks for (the request's `groupId`, decoded).
    public let mlsGroupID: [UInt8]

    /// The rumor's id: the same request wrapped twice has one id.
    public var id: EventID { rumor.id }
    /// The joiner, authenticated by the NIP-59 seal.
    public var requester: PublicKey { request.pubkey }
}

/// Whistle's kind-1080 rumor (Docs/join-requests.md): the join-request object as content,
/// authored by the joiner, gift-wrapped to the inviter outside MLS. It carries no code, so the
/// inviter approves it by hand (Docs/protocols/mesh.md 10.4, the relay twin of a nearby invite).
public enum JoinRequestRumor {
    public static let kind = MarmotKind.joinRequest

    /// The rumor for `request`, authored by its `pubkey` (the seal must be signed by that key).
    /// Whistle's rumor has no tags; none are added.
    public static func build(_ request: JoinRequest, createdAt: Int64) throws -> Rumor {
        try Rumor(pubkey: request.pubkey, createdAt: createdAt, kind: kind, tags: [],
                  content: String(decoding: request.json, as: UTF8.self))
    }

    /// Checks an unwrapped gift as a join request, cheapest first: the kind; the object's
    /// shape; its KeyPackage envelope; that the seal's signer is the rumor's author and the
    /// request's `pubkey`; that `groupId` is hex; then the KeyPackage under MIP-00 at `now`.
    public static func open(_ gift: UnwrappedGift, now: Int64) throws(JoinRequestError) -> VerifiedJoinRequest {
        let rumor = gift.rumor
        guard rumor.kind == kind else { throw .wrongKind(rumor.kind) }
        let request = try UnverifiedJoinRequest.decode(Array(rumor.content.utf8)).verified()
        guard gift.sender == rumor.pubkey, request.pubkey == rumor.pubkey else { throw .authorMismatch }
        guard let groupID = request.groupIDBytes else { throw .malformed("groupId") }
        let keyPackage: VerifiedKeyPackageEvent
        do { keyPackage = try KeyPackageEvent.verify(request.keyPackage, now: now) } catch {
            throw .keyPackageInvalid(String(describing: error))
        }
        return VerifiedJoinRequest(rumor: rumor, request: request, keyPackage: keyPackage, mlsGroupID: groupID)
    }
}
