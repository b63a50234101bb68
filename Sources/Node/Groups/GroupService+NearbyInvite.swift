import Foundation
import MLS
import Marmot
import Mesh
import Nostr
import RelayClient
import Store

/// What `invite nearby` reports while the invite is open.
public enum NearbyInviteProgress: Sendable {
    /// The beacon is out: the code to show, and when the invite ends (Unix seconds).
    case open(inviteID: String, code: String, expiresAt: Int64)
    /// One attempt's progress (`hello`, `request`, `wrong_code`, `timeout`, a refusal code…).
    case attempt(peer: String, attemptsLeft: Int, result: String)
}

/// The end of a nearby invite that admitted someone.
public struct NearbyJoined: Sendable {
    /// The joiner's Nostr key (hex) and the name it gave, if any.
    public let member: String
    public let name: String?
    public let group: GroupView
    /// Whether the joiner confirmed with join-done (accepted); false when the welcome went out
    /// but no confirmation came within 60 s.
    public let confirmed: Bool
}

/// Inputs of a nearby session's loop: mesh deliveries and the clock.
enum NearbyInput: Sendable {
    case delivery(MeshDelivery)
    case tick
}

extension MeshService {
    /// Deliveries and a 100 ms tick in one stream, for the nearby sessions' loops; the pumping
    /// tasks end with the returned `stop`.
    func nearbyInputs() -> (AsyncStream<NearbyInput>, stop: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream<NearbyInput>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let deliveries = self.deliveries()
        let pump = Task {
            for await delivery in deliveries { continuation.yield(.delivery(delivery)) }
            continuation.finish()
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                continuation.yield(.tick)
            }
        }
        return (stream, {
            pump.cancel()
            ticker.cancel()
            continuation.finish()
        })
    }
}

/// The inviter's side of a nearby invite (Docs/protocols/mesh.md 10.5): the `InviteHost` state machine fed by
/// the mesh, and the Marmot add when a request opens under the code.
extension GroupService {
    public static let nearbyExpiryRange = 60...900

    /// Opens a nearby invite to GROUP for `expiresIn` seconds and runs it to its end: someone
    /// joined (`NearbyJoined`), or the invite closed (`MeshNodeError.join` with the reason).
    public func hostNearbyInvite(
        _ groupText: String, expiresIn: Int, mesh: MeshService, timeout: Duration,
        progress: @escaping @Sendable (NearbyInviteProgress) -> Void
    ) async throws -> NearbyJoined {
        guard Self.nearbyExpiryRange.contains(expiresIn) else {
            throw NodeError.invalidInput("--expires must be \(Self.nearbyExpiryRange.lowerBound)–\(Self.nearbyExpiryRange.upperBound) seconds")
        }
        // Store work is the single writer's (`exclusively`): a forwarded invite yields the
        // node's queue while it waits on the mesh, so `run` goes on processing meanwhile.
        let (id, groupHex, name) = try await NodeMailbox.exclusively { () async throws -> (MLSGroupID, String, String) in
            let id = try await self.catchUpIfReachable(groupText, timeout: timeout)
            return try self.store.transaction { tx in
                let loaded = try self.loadGroup(mlsGroupID: id, in: tx)
                guard loaded.row.state == .active else { throw NodeError.invalidInput("the group is \(loaded.row.state.rawValue)") }
                guard loaded.group.isAdmin(self.publicKey) else { throw NodeError.notAdmin("only admins may invite") }
                return (id, id.hex, loaded.group.data.name)
            }
        }
        var rng = SystemRandomNumberGenerator()
        let inviteID = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let auxRand = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let code = InviteCode.generate(using: &rng)
        let started = MeshService.now()
        let expiresAt = started + UInt64(expiresIn) * 1000
        mesh.setInviteOpen(true)
        defer { mesh.setInviteOpen(false) }
        var host: InviteHost
        do {
            host = try InviteHost(inviteID: inviteID, code: code, groupID: groupHex, groupName: Self.beaconName(name), expiresAt: expiresAt,
                                  meshKey: mesh.meshKey, keys: keys, auxRand: auxRand, now: started)
        } catch {
            throw NodeError.invalidInput("the group's name cannot go in a beacon")
        }
        progress(.open(inviteID: Hex.encode(inviteID), code: InviteCode.display(code), expiresAt: Int64(expiresAt / 1000)))

        let (inputs, stop) = mesh.nearbyInputs()
        defer { stop() }
        var admitted: (member: PublicKey, name: String?, group: GroupView)?
        var confirmed = false
        var queue = host.tick(now: MeshService.now())
        for await input in inputs {
            let now = MeshService.now()
            switch input {
            case .tick:
                queue += host.tick(now: now)
            case .delivery(let delivery):
                guard case .join(let message) = delivery.content, message.inviteID == inviteID,
                      delivery.packet.recipient == host.myID else { continue }
                queue += host.receive(message, from: delivery.packet.sender, now: now, using: &rng)
            }
            while !queue.isEmpty {
                let action = queue.removeFirst()
                switch action {
                case .send(let type, let recipient, let payload):
                    _ = try? await mesh.send(type: type, recipient: recipient, payload: payload)
                case .beacon(let payload):
                    _ = try? await mesh.send(type: .inviteBeacon, recipient: nil, payload: payload)
                case .attempt(let peer, let left, let result):
                    progress(.attempt(peer: peer.hex, attemptsLeft: Int(left), result: result))
                case .joinRequest(let plaintext, let peer):
                    do {
                        let request = try Self.readNearbyRequest(plaintext, group: groupHex)
                        queue += host.requestRead(from: peer)
                        let (wrap, view) = try await NodeMailbox.exclusively { try await self.admitNearby(request, to: id, timeout: timeout) }
                        admitted = (request.pubkey, request.name, view)
                        queue += host.welcome(giftWrap: Array(wrap.jsonString.utf8), to: peer, now: MeshService.now())
                    } catch let refusal as NearbyRefusal {
                        logger.info("nearby join request refused", metadata: ["code": "\(refusal.code.error.rawValue)", "reason": "\(refusal.reason)"])
                        queue += host.refuse(refusal.code, peer: peer)
                    } catch {
                        // Errors of the add can name keys (`… is already a member`): only the kind.
                        logger.warning("nearby join failed", metadata: ["error": "\(MeshBridgeService.errorKind(error))"])
                        queue += host.refuse(.joinFailed, peer: peer)
                    }
                case .joined(_, let status):
                    confirmed = status == .accepted
                case .closed(let reason):
                    if let admitted, reason == nil {
                        let group = (try? store.transaction { try loadGroup(mlsGroupID: id, in: $0).view }) ?? admitted.group
                        return NearbyJoined(member: admitted.member.hex, name: admitted.name, group: group, confirmed: confirmed)
                    }
                    let code = reason ?? .inviteClosed
                    throw MeshNodeError.join(code: code.rawValue, message: Self.nearbyMessage(code))
                }
            }
        }
        throw MeshNodeError.meshOff("the mesh stopped while the invite was open")
    }

    /// Reads the plaintext of a request that opened under the code (10.5's first checks): Whistle's
    /// join-request object whose KeyPackage is a 443/30443 event signed by its `pubkey`
    /// (`key_package_invalid`), for the invite's group (`join_refused`). The mesh hands it up unread.
    static func readNearbyRequest(_ plaintext: [UInt8], group: String) throws(NearbyRefusal) -> JoinRequest {
        let request: JoinRequest
        do throws(JoinRequestError) {
            request = try JoinRequest.decode(plaintext)
        } catch {
            throw NearbyRefusal(.unreadable(error))
        }
        guard request.groupID == group else { throw NearbyRefusal(.otherGroup) }
        return request
    }

    /// Checks a request that opened under the code and adds its KeyPackage (10.5): online the
    /// commit is acknowledged by a relay before the welcome leaves; offline it is merged, queued
    /// for the relays and carried by the mesh. Returns the welcome's gift wrap.
    func admitNearby(_ request: JoinRequest, to id: MLSGroupID, timeout: Duration) async throws -> (Event, GroupView) {
        guard request.groupID == id.hex else { throw NearbyRefusal(.otherGroup) }
        let verified: VerifiedKeyPackageEvent
        do { verified = try KeyPackageEvent.verify(request.keyPackage, now: Self.now()) } catch {
            throw NearbyRefusal(.keyPackageInvalid)
        }
        guard verified.identity == request.pubkey else {
            throw NearbyRefusal(.notTheRequestersKeyPackage)
        }
        // 10.5 asks no more: the request is sealed under the code, not signed by `pubkey`, so a
        // code-holder could hand in someone else's valid KeyPackage (Docs/mesh-core.md: binding
        // it needs a change to 10.4; a freshness rule would refuse spec-conformant joiners).
        let current = try store.transaction { try loadGroup(mlsGroupID: id, in: $0) }
        guard current.group.isAdmin(publicKey) else { throw NearbyRefusal(.notAdmin) }
        guard !current.group.members.contains(request.pubkey) else {
            throw NearbyRefusal(.alreadyMember)
        }
        let staged: StagedCommit
        do {
            staged = try stageCommit(id, inbox: [:], intent: .add([request.pubkey])) { group, now, rng in
                try group.addMembers([verified], committer: self.publicKey, now: now, using: &rng)
            }
        } catch NodeError.welcomeTooLarge {
            throw NearbyRefusal(.welcomeTooLarge)
        }
        guard let wrap = staged.welcomeWraps.first else {
            try clearCommit(staged)
            throw NearbyRefusal(.noWelcome)
        }
        let results = (try? await gateway.pool(staged.relays).publish(staged.pending.event, timeout: timeout)) ?? []
        let view: GroupView
        if results.contains(where: \.accepted) {
            view = try confirmCommit(staged)
            await meshBridge.carryOnMesh(staged.pending.event)
            await gateway.flushOutbox(timeout: timeout)
        } else if !results.isEmpty, results.allSatisfy({ $0.error == nil }) {
            // Every relay answered no: nobody holds the commit.
            try clearCommit(staged)
            throw NearbyRefusal(.relaysRefused)
        } else {
            view = try mergeOffline(staged)
            await meshBridge.carryOnMesh(staged.pending.event)
        }
        return (wrap, view)
    }

    /// No relay in reach: the commit is merged (a nearby invite must not wait for one), stays
    /// owed to the relays as an event to publish as it is, and its welcome waits behind it.
    func mergeOffline(_ staged: StagedCommit) throws -> GroupView {
        let view = try confirmCommit(staged)
        try store.transaction { tx in
            guard let entry = try tx.outbox.get(eventID: staged.pending.event.id.bytes) else { return }
            // Merged already: the outbox re-sends it like a message (a pending `commit` entry
            // would be settled by asking relays, which do not have it).
            try tx.outbox.insert(OutboxEntry(eventID: entry.eventID, mlsGroupID: entry.mlsGroupID, purpose: .message, json: entry.json,
                                             relays: entry.relays, createdAt: entry.createdAt, state: .pending))
        }
        return view
    }

    /// `catchUp`, or the stored state when no relay answers and the mesh is up (nearby invites
    /// and mesh messages work offline; without the mesh an unreachable relay is still an error).
    func catchUpIfReachable(_ groupText: String, timeout: Duration) async throws -> MLSGroupID {
        guard mesh != nil else { return try await catchUp(groupText, timeout: timeout) }
        do { return try await catchUp(groupText, timeout: timeout) } catch {
            guard Self.isRelayOutage(error) else { throw error }
            logger.info("no relay in reach; using the stored group state")
            return try groupID(groupText)
        }
    }

    /// Whether `error` only says the relays could not be reached (not that one refused).
    static func isRelayOutage(_ error: Error) -> Bool {
        switch error {
        case NodeError.relayUnreachable, NodeError.timeout: return true
        case let error as RelayClientError:
            switch error {
            case .unreachable, .timeout, .connectionClosed, .tlsFailed, .noRelayAnswered: return true
            default: return false
            }
        default: return false
        }
    }

    /// A group name for a beacon: 1–64 bytes of UTF-8, cut at a character boundary.
    static func beaconName(_ name: String) -> String {
        var out = ""
        for character in name where (out + String(character)).utf8.count <= UnverifiedBeacon.maxNameBytes { out.append(character) }
        return out.isEmpty ? "group" : out
    }

    public static func nearbyMessage(_ code: MeshError) -> String {
        switch code {
        case .inviteExpired: return "the invite expired"
        case .wrongCode: return "the code did not match"
        case .tooManyAttempts: return "too many attempts: open a new invite"
        case .inviteClosed: return "the invite is closed"
        case .inviteBusy: return "the inviter is busy with other attempts: try again shortly"
        case .keyPackageInvalid: return "the joiner's KeyPackage is not valid"
        case .joinRefused: return "the join was refused"
        case .joinFailed: return "the join failed"
        case .welcomeTooLarge: return "the welcome is too large for the mesh"
        case .timeout: return "no answer from the other side in time"
        default: return "the nearby invite failed: \(code.rawValue)"
        }
    }
}
