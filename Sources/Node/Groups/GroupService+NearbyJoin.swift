import Foundation
import Marmot
import Mesh
import Nostr
import Store

/// A beacon heard nearby, as `join nearby --list` prints it.
public struct NearbyBeaconView: Sendable {
    public let beacon: InviteBeacon
    /// The beacon's sender (the inviter's mesh id, `I`).
    public let peer: MeshID
    /// Links the beacon crossed to get here (3 − received TTL).
    public let hops: Int

    public var inviteID: String { Hex.encode(beacon.inviteID) }
}

/// The end of `join nearby`.
public struct NearbyJoinResult: Sendable {
    /// The joined group (accepted), or nil with `--no-accept` (then `invite` is pending).
    public let group: GroupView?
    public let invite: InviteView?
    public let inviteID: String
    public let inviter: String
}

/// The joiner's side of a nearby invite (Docs/protocols/mesh.md 10.6): beacons listed, the code tried under
/// `JoinSession`, the welcome checked against the beacon and accepted.
extension GroupService {
    /// How long `join nearby --invite` listens for the chosen beacon (they come every 2 s).
    public static let beaconSearch: Duration = .seconds(10)

    /// Beacons heard within `wait`, newest per invite, unexpired, by name.
    public func listNearbyInvites(mesh: MeshService, wait: Duration) async -> [NearbyBeaconView] {
        let (inputs, stop) = mesh.nearbyInputs()
        defer { stop() }
        let deadline = ContinuousClock.now.advanced(by: wait)
        var heard: [[UInt8]: NearbyBeaconView] = [:]
        for await input in inputs {
            if case .delivery(let delivery) = input, case .beacon(let beacon, let hops) = delivery.content {
                heard[beacon.inviteID] = NearbyBeaconView(beacon: beacon, peer: delivery.packet.sender, hops: hops)
            }
            if ContinuousClock.now >= deadline { break }
        }
        let now = MeshService.now()
        return heard.values.filter { $0.beacon.expiresAt > now }
            .sorted { ($0.beacon.name, $0.inviteID) < ($1.beacon.name, $1.inviteID) }
    }

    /// Picks the beacon `selector` names: an invite id, a prefix of 4+ hex digits, or a unique
    /// group name (`no_invites` when none, `invalid_input` when several match).
    public static func chooseBeacon(_ selector: String, from beacons: [NearbyBeaconView]) throws -> NearbyBeaconView {
        let lower = selector.lowercased()
        var matches = beacons.filter { $0.inviteID == lower }
        if matches.isEmpty, lower.count >= 4, lower.allSatisfy(\.isHexDigit) { matches = beacons.filter { $0.inviteID.hasPrefix(lower) } }
        if matches.isEmpty { matches = beacons.filter { $0.beacon.name == selector } }
        guard !matches.isEmpty else { throw MeshNodeError.noInvites("no nearby invite matches \(selector)") }
        guard matches.count == 1 else { throw NodeError.invalidInput("\(selector) matches \(matches.count) nearby invites: give more of the id") }
        return matches[0]
    }

    /// Joins through the beacon `selector` names with the code the user typed: hello,
    /// challenge, request with a fresh KeyPackage, welcome (sealed by the beacon's inviter and
    /// naming our KeyPackage), then the invite is accepted unless `accept` is false.
    public func joinNearby(mesh: MeshService, invite selector: String, code: String, accept: Bool, timeout: Duration) async throws
        -> NearbyJoinResult
    {
        guard InviteCode.normalize(code) != nil else {
            throw MeshNodeError.join(code: MeshError.wrongCode.rawValue, message: "a code is 6 digits (spaces and dashes are ignored)")
        }
        let (inputs, stop) = mesh.nearbyInputs()
        defer { stop() }
        mesh.setInviteOpen(true)
        defer { mesh.setInviteOpen(false) }

        // The chosen beacon first: listen until it is heard (they come every 2 s).
        var heard: [[UInt8]: NearbyBeaconView] = [:]
        var chosen: NearbyBeaconView?
        let searchEnd = ContinuousClock.now.advanced(by: Self.beaconSearch)
        var iterator = inputs.makeAsyncIterator()
        while chosen == nil, let input = await iterator.next() {
            if case .delivery(let delivery) = input, case .beacon(let beacon, let hops) = delivery.content,
               beacon.expiresAt > MeshService.now() {
                heard[beacon.inviteID] = NearbyBeaconView(beacon: beacon, peer: delivery.packet.sender, hops: hops)
                chosen = try? Self.chooseBeacon(selector, from: Array(heard.values))
            }
            if chosen == nil, ContinuousClock.now >= searchEnd {
                _ = try Self.chooseBeacon(selector, from: Array(heard.values))
                throw MeshNodeError.noInvites("no nearby invite \(selector) heard within \(Self.beaconSearch)")
            }
        }
        guard let chosen else { throw MeshNodeError.meshOff("the mesh stopped") }

        let keyPackage = try await NodeMailbox.exclusively { try self.stageKeyPackage() }
        var session = JoinSession(beacon: chosen.beacon, inviter: chosen.peer, myID: mesh.meshID, keyPackageID: keyPackage.keyPackage.id)
        var rng = SystemRandomNumberGenerator()
        var queue = session.attempt(code: code, now: MeshService.now(), using: &rng)
        var joined: (group: GroupView?, invite: InviteView?)?
        while true {
            while !queue.isEmpty {
                switch queue.removeFirst() {
                case .send(let type, let recipient, let payload):
                    _ = try? await mesh.send(type: type, recipient: recipient, payload: payload)
                case .challengeOpened(let info):
                    // The request for the group the challenge named (10.4); the mesh only seals and sends it.
                    let request = JoinRequest(groupID: info.groupID, pubkey: publicKey, keyPackage: keyPackage.keyPackage, name: nil)
                    queue += session.request(request.json, now: MeshService.now())
                case .welcome(let giftWrap, _, _):
                    do {
                        let unwrapped = try GiftWrap.unwrap(giftWrap, recipient: keys)
                        guard session.welcomeMatches(unwrapped) else {
                            queue += session.welcomeProcessed(.failed, error: .joinRefused)
                            continue
                        }
                        let outcome = try await NodeMailbox.exclusively { () async throws -> (InviteView, GroupView?)? in
                            // The welcome enters as the pipeline admits a gift-wrapped 444.
                            let invite: InviteView?
                            do { invite = try self.admitWelcome(unwrapped, wrapID: giftWrap.id) } catch {
                                self.logger.warning("nearby welcome refused", metadata: ["reason": "\(BurrowNode.describe(error))"])
                                return nil
                            }
                            guard let invite else {
                                self.logger.warning("nearby welcome refused", metadata: ["reason": "the welcome was not usable"])
                                return nil
                            }
                            guard accept else { return (invite, nil) }
                            return (invite, try await self.acceptInvite(invite.id, timeout: timeout, relaysRequired: false))
                        }
                        guard let (invite, group) = outcome else {
                            queue += session.welcomeProcessed(.failed, error: .joinFailed)
                            continue
                        }
                        joined = group.map { ($0, nil) } ?? (nil, invite)
                        queue += session.welcomeProcessed(group == nil ? .declined : .accepted)
                    } catch {
                        logger.warning("nearby welcome failed", metadata: ["error": "\(MeshBridgeService.errorKind(error))"])
                        queue += session.welcomeProcessed(.failed, error: .joinFailed)
                    }
                case .finished(let result):
                    if let joined, result == nil || !accept {
                        return NearbyJoinResult(group: joined.group, invite: joined.invite, inviteID: chosen.inviteID,
                                                inviter: chosen.beacon.inviter.hex)
                    }
                    let code = result ?? .joinFailed
                    var message = Self.nearbyMessage(code)
                    if code == .wrongCode {
                        // The beacon said how many attempts the invite had; this one used one.
                        let left = max(0, Int(chosen.beacon.attemptsLeft) - 1)
                        message += left == 0 ? ": no attempts left, ask for a new invite"
                            : ": \(left) attempt\(left == 1 ? "" : "s") left, check the code and try again"
                    }
                    throw MeshNodeError.join(code: code.rawValue, message: message)
                }
            }
            guard let input = await iterator.next() else { throw MeshNodeError.meshOff("the mesh stopped") }
            let now = MeshService.now()
            switch input {
            case .tick:
                queue += session.tick(now: now)
            case .delivery(let delivery):
                guard case .join(let message) = delivery.content, delivery.packet.recipient == session.myID else { continue }
                queue += session.receive(message, from: delivery.packet.sender, now: now)
            }
        }
    }
}
