import Nostr

/// The joiner's side of a nearby invite (10.6) for one beacon. The node gives it the code the
/// user typed, then, once the challenge names the group, the join request to send (Whistle's
/// object, 10.4, as bytes: the mesh never decodes it); it answers with `.welcome(giftWrap)` when
/// the inviter's welcome arrives, and the node reports back with `welcomeProcessed`.
///
/// Rules: resend the hello every 5 s, 4 sends at most, then `timeout`; a challenge that does
/// not open stops the attempt with `wrong_code` and sends nothing more (after 3 wrong codes on
/// one invite, `too_many_attempts`); resend the request every 10 s and wait 60 s for the
/// welcome; accept exchange messages only from the beacon's sender.
public struct JoinSession: Sendable {
    public static let helloInterval: UInt64 = 5_000
    public static let helloSends = 4
    public static let requestInterval: UInt64 = 10_000
    public static let welcomeWait: UInt64 = 60_000
    public static let maxWrongCodes = 3

    public enum Action: Sendable {
        case send(type: PacketType, recipient: MeshID, payload: [UInt8])
        /// The challenge opened: the code was right; the group is `info`. The node answers with
        /// `request(_:now:)`: the join request for `info.groupID` with the KeyPackage `keyPackageID`.
        case challengeOpened(JoinChallengeInfo)
        /// The welcome gift wrap (kind 1059, verified): the node unwraps it, checks that its
        /// seal is by `inviter` and that the welcome's `e` tag names `keyPackageID`
        /// (`welcomeMatches`), processes it, then calls `welcomeProcessed`.
        case welcome(giftWrap: Event, inviter: PublicKey, keyPackageID: EventID)
        /// The attempt (or the whole join) ended: success, or why not.
        case finished(MeshError?)
    }

    enum Phase: Sendable {
        case idle
        case hello(context: JoinContext, yb: [UInt8], scalar: CPace.Scalar, payload: [UInt8], sends: Int, lastSent: UInt64)
        /// The challenge opened; the node's request comes next.
        case opened(context: JoinContext, keys: JoinKeys)
        case requesting(context: JoinContext, keys: JoinKeys, payload: [UInt8], since: UInt64, lastSent: UInt64)
        case welcomed(context: JoinContext, keys: JoinKeys, done: [UInt8]?)
        case finished(MeshError?)
    }

    public let beacon: InviteBeacon
    /// The beacon's sender (`I`).
    public let inviter: MeshID
    /// This node's mesh id (`J`); its mesh key must not rotate while the session is open.
    public let myID: MeshID
    /// The id of the KeyPackage event the request carries; the welcome must name it.
    public let keyPackageID: EventID
    public private(set) var wrongCodes = 0
    private var phase: Phase = .idle

    public init(beacon: InviteBeacon, inviter: MeshID, myID: MeshID, keyPackageID: EventID) {
        self.beacon = beacon
        self.inviter = inviter
        self.myID = myID
        self.keyPackageID = keyPackageID
    }

    public var isOpen: Bool {
        switch phase {
        case .idle, .finished: return false
        default: return true
        }
    }

    /// Starts an attempt with the typed code: fresh nonce and scalar from `rng`.
    public mutating func attempt<R: RandomNumberGenerator>(code: String, now: UInt64, using rng: inout R) -> [Action] {
        let nonce = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
        return attempt(code: code, now: now, nonce: nonce, scalar: CPace.Scalar.random(using: &rng))
    }

    /// As `attempt`, with the nonce and scalar given (vectors fix them).
    public mutating func attempt(code: String, now: UInt64, nonce: [UInt8], scalar: CPace.Scalar) -> [Action] {
        if isOpen { return [] }
        guard wrongCodes < Self.maxWrongCodes else { return finish(.tooManyAttempts) }
        guard now < beacon.expiresAt else { return finish(.inviteExpired) }
        guard let code = InviteCode.normalize(code), nonce.count == 16 else { return finish(.wrongCode) }
        let context = JoinContext(inviteID: beacon.inviteID, nonce: nonce, inviter: inviter, joiner: myID)
        let generator = CPace.generator(code: code, inviteID: beacon.inviteID, nonce: nonce, inviter: inviter, joiner: myID)
        guard let yb = try? CPace.share(scalar, generator: generator) else { return finish(.badPoint) }
        let payload = JoinMessage(inviteID: beacon.inviteID, nonce: nonce, body: .hello(yb: yb)).payload
        phase = .hello(context: context, yb: yb, scalar: scalar, payload: payload, sends: 1, lastSent: now)
        return [.send(type: .joinHello, recipient: inviter, payload: payload)]
    }

    public mutating func tick(now: UInt64) -> [Action] {
        switch phase {
        case .hello(let context, let yb, let scalar, let payload, let sends, let lastSent):
            guard now >= lastSent &+ Self.helloInterval else { return [] }
            guard sends < Self.helloSends else { return finish(.timeout) }
            phase = .hello(context: context, yb: yb, scalar: scalar, payload: payload, sends: sends + 1, lastSent: now)
            return [.send(type: .joinHello, recipient: inviter, payload: payload)]
        case .requesting(let context, let keys, let payload, let since, let lastSent):
            guard now < since &+ Self.welcomeWait else { return finish(.timeout) }
            guard now >= lastSent &+ Self.requestInterval else { return [] }
            phase = .requesting(context: context, keys: keys, payload: payload, since: since, lastSent: now)
            return [.send(type: .joinRequest, recipient: inviter, payload: payload)]
        case .idle, .opened, .welcomed, .finished:
            return []
        }
    }

    public var nextDeadline: UInt64? {
        switch phase {
        case .hello(_, _, _, _, _, let lastSent): return lastSent &+ Self.helloInterval
        case .requesting(_, _, _, let since, let lastSent): return min(lastSent &+ Self.requestInterval, since &+ Self.welcomeWait)
        default: return nil
        }
    }

    /// A join message addressed to this node; ignored unless from the beacon's sender.
    public mutating func receive(_ message: JoinMessage, from sender: MeshID, now: UInt64) -> [Action] {
        guard sender == inviter, message.inviteID == beacon.inviteID else { return [] }
        switch (phase, message.body) {
        case (.hello(let context, let yb, let scalar, _, _, _), .challenge(let ya, let sealed)) where message.nonce == context.nonce:
            guard let k = try? CPace.sharedPoint(scalar, peerShare: ya) else { return wrong() }
            let keys = JoinKeys(isk: CPace.isk(context: context, yb: yb, ya: ya, k: k))
            guard let plaintext = keys.open(.challenge, sealed, ad: context.associatedData(.joinChallenge)),
                  let info = try? JoinChallengeInfo.decode(plaintext)
            else { return wrong() }
            phase = .opened(context: context, keys: keys)
            return [.challengeOpened(info)]

        case (.requesting(let context, let keys, _, _, _), .welcome(let sealed)) where message.nonce == context.nonce:
            guard let plaintext = keys.open(.welcome, sealed, ad: context.associatedData(.joinWelcome)) else { return [] }
            guard let unverified = try? UnverifiedEvent(json: plaintext), unverified.kind == 1059,
                  let giftWrap = try? unverified.verified()
            else {
                phase = .welcomed(context: context, keys: keys, done: nil)
                return doneReply(.failed) + finish(.joinRefused)
            }
            phase = .welcomed(context: context, keys: keys, done: nil)
            return [.welcome(giftWrap: giftWrap, inviter: beacon.inviter, keyPackageID: keyPackageID)]

        case (.welcomed(let context, _, let done), .welcome) where message.nonce == context.nonce:
            // Every join-welcome is answered with join-done (the first may have been lost).
            guard let done else { return [] }
            return [.send(type: .joinDone, recipient: inviter, payload: done)]

        case (.hello(let context, _, _, _, _, _), .error(let code)) where message.nonce == context.nonce,
             (.opened(let context, _), .error(let code)) where message.nonce == context.nonce,
             (.requesting(let context, _, _, _, _), .error(let code)) where message.nonce == context.nonce:
            let error = JoinErrorCode(rawValue: code)?.error ?? .joinFailed
            if error == .wrongCode { wrongCodes += 1 }
            return finish(error)

        default:
            return []
        }
    }

    /// Whether an unwrapped welcome is the one this session may accept: its seal by the
    /// beacon's inviter and its `e` tag naming the KeyPackage sent (10.6).
    public func welcomeMatches(_ gift: UnwrappedGift) -> Bool {
        gift.seal.pubkey == beacon.inviter
            && gift.rumor.tags.contains { $0.count >= 2 && $0[0] == "e" && $0[1] == keyPackageID.hex }
    }

    /// The join request for the group `.challengeOpened` named, as the node built it: sealed under
    /// `k_request` and sent, then resent every 10 s while the welcome is awaited. One too large
    /// for a join-request packet ends the attempt (`key_package_invalid`).
    public mutating func request(_ plaintext: [UInt8], now: UInt64) -> [Action] {
        guard case .opened(let context, let keys) = phase else { return [] }
        guard let sealed = try? keys.seal(.request, plaintext, ad: context.associatedData(.joinRequest)) else {
            return finish(.joinFailed)
        }
        let payload = JoinMessage(inviteID: beacon.inviteID, nonce: context.nonce, body: .request(sealed: sealed)).payload
        guard payload.count <= PacketType.joinRequest.maxPayload else { return finish(.keyPackageInvalid) }
        phase = .requesting(context: context, keys: keys, payload: payload, since: now, lastSent: now)
        return [.send(type: .joinRequest, recipient: inviter, payload: payload)]
    }

    /// The node processed the welcome: answer join-done with `status` and finish (`failed`
    /// with `joinRefused` when `welcomeMatches` said no).
    public mutating func welcomeProcessed(_ status: JoinDoneStatus, error: MeshError? = nil) -> [Action] {
        guard case .welcomed = phase else { return [] }
        let result: MeshError? = status == .accepted ? nil : (error ?? (status == .declined ? .joinRefused : .joinFailed))
        return doneReply(status) + finish(result, keepDone: true)
    }

    private mutating func doneReply(_ status: JoinDoneStatus) -> [Action] {
        guard case .welcomed(let context, let keys, _) = phase,
              let tag = try? keys.seal(.done, [], ad: context.associatedData(.joinDone) + [status.rawValue])
        else { return [] }
        let payload = JoinMessage(inviteID: beacon.inviteID, nonce: context.nonce, body: .done(status: status.rawValue, tag: tag)).payload
        phase = .welcomed(context: context, keys: keys, done: payload)
        return [.send(type: .joinDone, recipient: inviter, payload: payload)]
    }

    private mutating func wrong() -> [Action] {
        wrongCodes += 1
        return finish(wrongCodes >= Self.maxWrongCodes ? .tooManyAttempts : .wrongCode)
    }

    private mutating func finish(_ result: MeshError?, keepDone: Bool = false) -> [Action] {
        // After a welcome the session keeps answering join-welcome retransmissions.
        if keepDone, case .welcomed = phase { return [.finished(result)] }
        phase = .finished(result)
        return [.finished(result)]
    }
}
