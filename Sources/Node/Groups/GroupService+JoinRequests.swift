import Foundation
import MLS
import Marmot
import Nostr
import Store

/// Join requests over relays: Whistle's kind-1080 rumor, the relay twin of a nearby invite
/// (Docs/protocols/mesh.md 10.4). A joiner who knows a group's id and its admin's key asks to be added; the
/// request carries no code, so the admin approves it by hand, and approving is the normal add
/// (commit, relay OK, merge, welcome).
extension GroupService {
    /// The longest `name` a request carries (the mesh's limit for a name on the air).
    public static let joinRequestNameLimit = 64
    /// The longest `name` accepted from others (Whistle sets no limit; this bounds what we store).
    static let receivedJoinRequestNameLimit = 256
    /// Join requests kept in all (pending and settled): beyond, the oldest settled ones go,
    /// then the oldest pending (issue 19, finding 10).
    static let maxStoredJoinRequests = 1_000

    // MARK: Joiner

    /// Publishes a fresh KeyPackage (as `keypackage publish` does) and gift-wraps a join request
    /// for group `groupID` (MLS group id, hex) carrying it to `inviter`: on the inviter's inbox
    /// relays (kind 10050), `extraRelays` (an invite link's relay) and ours.
    public func requestToJoin(groupID: String, inviter: PublicKey, name: String?, extraRelays: [String] = [],
                              timeout: Duration, rejoining: Bool = false) async throws -> JoinRequestSent {
        let hex = groupID.lowercased()
        guard !hex.isEmpty, let groupBytes = try? Hex.decode(hex), !groupBytes.isEmpty else {
            throw NodeError.invalidInput("not an MLS group id (hex): \(groupID)")
        }
        guard inviter != publicKey else { throw NodeError.invalidInput("the inviter is our own key: a join request goes to a group's admin") }
        if let name {
            guard !name.isEmpty, name.utf8.count <= Self.joinRequestNameLimit else {
                throw NodeError.invalidInput("--name must be 1 to \(Self.joinRequestNameLimit) bytes of UTF-8")
            }
        }
        // A restored node whose relays lost the group's history asks again for a group it holds.
        if !rejoining, let row = try store.transaction({ try $0.groups.get(mlsGroupID: groupBytes) }), row.state.isReadable {
            throw NodeError.invalidInput("we are already a member of group \(hex)")
        }
        let extras = try extraRelays.map { try BurrowNode.relayURL($0).string }
        let ours = try relays()
        guard !ours.isEmpty else { throw NodeError.invalidInput("no relays configured: add one with `burrow relay add URL`") }

        let published = try await publishKeyPackage(timeout: timeout)
        let request = JoinRequest(groupID: hex, pubkey: publicKey, keyPackage: published.keyPackageEvent, name: name)
        let now = Self.now()
        var rng = SystemRandomNumberGenerator()
        let rumor = try JoinRequestRumor.build(request, createdAt: now)
        let wrap: Event
        do { wrap = try GiftWrap.wrap(rumor: rumor, sender: keys, recipient: inviter, now: now, rng: &rng) } catch NostrError.nip44PlaintextLength(_) {
            throw NodeError.invalidInput("the join request does not fit a gift wrap")
        }
        let inbox = await inboxRelays(of: inviter, asking: Self.merged(ours, extras), timeout: timeout)
        let urls = Self.merged(Self.merged(inbox, extras), ours)
        let results = try await gateway.publishAccepted(wrap, to: urls, timeout: timeout)
        return JoinRequestSent(requestID: rumor.id.hex, groupID: hex, inviter: inviter.hex, keyPackage: published.keyPackage.hex,
                               relays: results.filter(\.accepted).map(\.url))
    }

    // MARK: Inviter

    /// Checks a kind-1080 rumor from a gift wrap and stores it as a pending request: valid
    /// (seal signer = author = `pubkey`, a MIP-00 KeyPackage by that key), for a group we hold
    /// and administer, from someone not yet a member. The same request again (by rumor id) is
    /// recorded and dropped; of two pending requests from one joiner for one group the newer
    /// stays. Anything else throws, and the caller records the reason.
    func admitJoinRequest(_ gift: UnwrappedGift, wrapID: EventID, report: inout SyncReport) throws {
        let now = Self.now()
        let verified: VerifiedJoinRequest
        do throws(JoinRequestError) { verified = try JoinRequestRumor.open(gift, now: now) } catch {
            if case .keyPackageInvalid = error { throw JoinRequestFailure.keyPackageInvalid("join request refused: \(error)") }
            throw NodeError.invalidInput("join request refused: \(error)")
        }
        if let name = verified.request.name, name.utf8.count > Self.receivedJoinRequestNameLimit {
            throw NodeError.invalidInput("join request refused: its name is over \(Self.receivedJoinRequestNameLimit) bytes")
        }
        let view = try store.transaction { tx -> JoinRequestView? in
            if try tx.joinRequests.get(id: verified.id.bytes) != nil {
                try tx.processedEvents.mark(eventID: wrapID.bytes, outcome: "join request already received", at: now)
                return nil
            }
            let groupHex = Hex.encode(verified.mlsGroupID)
            guard let row = try tx.groups.get(mlsGroupID: verified.mlsGroupID), row.state == .active else {
                throw JoinRequestFailure.joinRefused("join request refused: group \(groupHex) is not one of our active groups")
            }
            let loaded = try LoadedGroup(row)
            guard loaded.group.isAdmin(publicKey) else {
                throw JoinRequestFailure.joinRefused("join request refused: we do not administer group \(groupHex)")
            }
            // Another member asking is one that lost its state (a restore): kept, marked `rejoin`.
            guard verified.requester != publicKey else {
                throw JoinRequestFailure.joinRefused("join request refused: the requester is already a member of group \(groupHex)")
            }
            // One pending request per joiner and group: the newer stays, the older is deleted
            // (its wrap stays marked processed, so the same wrap is not read again).
            for older in try tx.joinRequests.list(state: .pending, mlsGroupID: verified.mlsGroupID)
            where older.requester == verified.requester.bytes {
                guard (older.createdAt, Hex.encode(older.id)) < (verified.rumor.createdAt, verified.id.hex) else {
                    try tx.processedEvents.mark(eventID: wrapID.bytes, outcome: "join request superseded", at: now)
                    return nil
                }
                try tx.joinRequests.delete(id: older.id)
            }
            let stored = StoredJoinRequest(
                id: verified.id.bytes, wrapperID: wrapID.bytes, mlsGroupID: verified.mlsGroupID, requester: verified.requester.bytes,
                name: verified.request.name, keyPackageJSON: verified.request.keyPackage.jsonString, createdAt: verified.rumor.createdAt,
                receivedAt: now, state: .pending)
            try tx.joinRequests.insert(stored)
            try tx.joinRequests.cap(Self.maxStoredJoinRequests)
            try tx.processedEvents.mark(eventID: wrapID.bytes, outcome: "join request", at: now)
            return joinRequestView(stored, group: loaded)
        }
        report.processed += 1
        if let view { report.updates.append(.joinRequest(view)) }
    }

    /// Pending join requests, of one GROUP or of all groups, oldest first.
    public func joinRequests(group groupText: String? = nil) throws -> [JoinRequestView] {
        try store.transaction { tx in
            let only = try groupText.map { try resolveGroup($0, in: tx).group.mlsGroupID.bytes }
            return try tx.joinRequests.list(state: .pending, mlsGroupID: only).map { stored in
                joinRequestView(stored, group: try tx.groups.get(mlsGroupID: stored.mlsGroupID).map { try LoadedGroup($0) })
            }
        }
    }

    /// Adds the joiner of a pending request with the KeyPackage it carries (admins only): the
    /// group is caught up first, the package verified again at today's date, then the normal
    /// add — commit, relay OK, merge, welcome to the joiner's inbox relays, its KeyPackage's
    /// relays and ours. Approving a member's request (`rejoin`: it lost its state) replaces its
    /// leaf with the new KeyPackage in one commit.
    public func approveJoinRequest(_ idText: String, timeout: Duration) async throws -> GroupView {
        let stored = try resolveJoinRequest(idText)
        let groupHex = Hex.encode(stored.mlsGroupID)
        let row = try store.transaction { try $0.groups.get(mlsGroupID: stored.mlsGroupID) }
        guard row?.state == .active else {
            throw JoinRequestFailure.joinRefused("group \(groupHex) is no longer one of our active groups")
        }
        let id = try await catchUp(groupHex, timeout: timeout)
        let current = try store.transaction { try loadGroup(mlsGroupID: id, in: $0) }
        guard current.row.state == .active else { throw JoinRequestFailure.joinRefused("group \(groupHex) is \(current.row.state.rawValue)") }
        guard current.group.isAdmin(publicKey) else {
            throw NodeError.notAdmin("only admins may approve join requests, and we do not administer group \(groupHex)")
        }
        let requester: PublicKey
        do { requester = try PublicKey(bytes: stored.requester) } catch { throw StoreError.storeCorrupt("a stored join request has no key") }
        let keyPackage: VerifiedKeyPackageEvent
        do {
            keyPackage = try KeyPackageEvent.verify(UnverifiedEvent(json: stored.keyPackageJSON).verified(), now: Self.now())
        } catch {
            throw JoinRequestFailure.keyPackageInvalid("the request's KeyPackage is no longer valid (\(error)): ask for a new request")
        }
        guard keyPackage.identity == requester else {
            throw JoinRequestFailure.keyPackageInvalid("the request's KeyPackage belongs to another key")
        }
        let ours = try relays()
        let kpRelays = keyPackage.relays.map(\.string)
        let published = await inboxRelays(of: requester, asking: Self.merged(ours, kpRelays), timeout: timeout)
        let inbox = Self.merged(published, kpRelays)
        let invitee = InviteeKeyPackage(keyPackage: keyPackage, inbox: inbox)
        let view: GroupView
        if current.group.members.contains(requester) {
            // A member asking to join lost its state (a restore whose relays no longer held the
            // group's history): its old leaf goes and its new KeyPackage comes in one commit.
            view = try await commit(id, timeout: timeout, invitees: [invitee]) { group, now, rng in
                try group.reAddMember(keyPackage, committer: self.publicKey, now: now, using: &rng)
            }
        } else {
            view = try await commit(id, timeout: timeout, invitees: [invitee], intent: .add([requester])) { group, now, rng in
                try group.addMembers([keyPackage], committer: self.publicKey, now: now, using: &rng)
            }
        }
        try store.transaction { try $0.joinRequests.setState(id: stored.id, .approved) }
        return view
    }

    /// Drops a pending request (no admin rights needed: it is our own list).
    public func rejectJoinRequest(_ idText: String) throws -> JoinRequestView {
        let stored = try resolveJoinRequest(idText)
        return try store.transaction { tx in
            try tx.joinRequests.setState(id: stored.id, .rejected)
            var rejected = stored
            rejected.state = .rejected
            return joinRequestView(rejected, group: try tx.groups.get(mlsGroupID: stored.mlsGroupID).map { try LoadedGroup($0) })
        }
    }

    // MARK: Helpers

    /// A pending request by its id or a unique prefix of it (at least 8 hex digits).
    func resolveJoinRequest(_ text: String) throws -> StoredJoinRequest {
        let lower = text.lowercased()
        guard lower.count >= 8, lower.allSatisfy(\.isHexDigit) else {
            throw JoinRequestFailure.unknownRequest("not a join request id: \(text)")
        }
        let matches = try store.transaction { try $0.joinRequests.list(state: .pending) }.filter { Hex.encode($0.id).hasPrefix(lower) }
        guard matches.count == 1 else {
            throw JoinRequestFailure.unknownRequest(matches.isEmpty ? "no pending join request \(text)" : "\(text) matches \(matches.count) join requests")
        }
        return matches[0]
    }

    func joinRequestView(_ stored: StoredJoinRequest, group: LoadedGroup?) -> JoinRequestView {
        let keyPackageID = (try? UnverifiedEvent(json: stored.keyPackageJSON))?.id.hex ?? ""
        var view = JoinRequestView(
            id: Hex.encode(stored.id), mlsGroupID: Hex.encode(stored.mlsGroupID), nostrGroupID: group?.group.nostrGroupID.hex ?? "",
            groupName: group?.group.data.name ?? "", from: Hex.encode(stored.requester), name: stored.name, createdAt: stored.createdAt,
            keyPackage: keyPackageID, state: stored.state.rawValue)
        view.rejoin = group?.group.members.contains { $0.bytes == stored.requester } ?? false
        return view
    }

    /// `key`'s inbox relays (its newest kind 10050) as `urls` know them; none when unknown or
    /// unreachable (the caller still has its own relays to publish to).
    func inboxRelays(of key: PublicKey, asking urls: [String], timeout: Duration) async -> [String] {
        do {
            let events = try await gateway.fetchEvents(Filter(authors: [key], kinds: [InboxRelayList.kind]), from: urls, timeout: timeout)
            guard let newest = events.max(by: { ($0.createdAt, $0.id.hex) < ($1.createdAt, $1.id.hex) }) else { return [] }
            return InboxRelayList.relays(newest)
        } catch {
            logger.info("could not read inbox relays", metadata: ["error": "\(BurrowNode.describe(error))"])
            return []
        }
    }

    /// `a` then what `b` adds, without repeats.
    static func merged(_ a: [String], _ b: [String]) -> [String] {
        var out: [String] = []
        for url in a + b where !out.contains(url) { out.append(url) }
        return out
    }
}
