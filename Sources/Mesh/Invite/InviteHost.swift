import Nostr

/// The inviter's side of a nearby invite (10.5) as a state machine: join messages and time in,
/// actions out. The join request and the Marmot add are the node's: on `.joinRequest` it reads
/// the opened plaintext (Whistle's join-request object, 10.4) and checks it against the group,
/// says it read it (`requestRead(from:)`), commits the add, gift-wraps the welcome and calls
/// `welcome(giftWrap:to:now:)`; or it calls `refuse(_:peer:)`. The mesh carries the request as
/// bytes and never decodes it.
///
/// Rules: an invite allows 5 attempts; a hello opening one costs one; a repeated hello (same
/// joiner, nonce and share) gets the same challenge free; a new hello from a joiner ends its
/// open attempt; at most 2 attempts are open (`invite_busy`); an attempt waits 30 s for its
/// request; a request that does not open is a wrong code.
public struct InviteHost: Sendable {
    public static let maxAttempts: UInt8 = 5
    public static let maxOpenAttempts = 2
    public static let beaconInterval: UInt64 = 2_000
    public static let requestWait: UInt64 = 30_000
    public static let welcomeResend: UInt64 = 5_000
    public static let welcomeWait: UInt64 = 60_000

    public enum Action: Sendable {
        /// Send a join message to `recipient` (join-* packets, TTL 2).
        case send(type: PacketType, recipient: MeshID, payload: [UInt8])
        /// Broadcast the beacon (invite-beacon packet).
        case beacon(payload: [UInt8])
        /// One attempt's progress, for `{"type":"join_attempt",…}` lines.
        case attempt(peer: MeshID, attemptsLeft: UInt8, result: String)
        /// A request opened under the code: its plaintext, unread. The node decodes and checks it
        /// (10.5): one that is not the join-request object with a KeyPackage signed by its
        /// `pubkey` gets `refuse(.keyPackageInvalid, …)`, one for another group
        /// `refuse(.joinRefused, …)`; else `requestRead(from:)`, the add, then `welcome(…)`.
        case joinRequest([UInt8], peer: MeshID)
        /// The joiner confirmed with join-done.
        case joined(peer: MeshID, status: JoinDoneStatus)
        /// The invite is over: `nil` after a welcome went out, else why.
        case closed(MeshError?)
    }

    struct Attempt: Sendable {
        let context: JoinContext
        let yb: [UInt8]
        let keys: JoinKeys
        let challenge: [UInt8]
        let openedAt: UInt64
        var requestPending = false
    }

    struct Welcoming: Sendable {
        let peer: MeshID
        let context: JoinContext
        let keys: JoinKeys
        let payload: [UInt8]
        let since: UInt64
        var lastSent: UInt64
    }

    enum Phase: Sendable {
        case open
        case welcoming(Welcoming)
        case closed(MeshError?)
    }

    public let inviteID: [UInt8]
    public let expiresAt: UInt64
    public let groupID: String
    public let groupName: String
    public let myID: MeshID
    public private(set) var attemptsLeft: UInt8 = InviteHost.maxAttempts
    private let code: String
    private var beacon: InviteBeacon
    private var attempts: [MeshID: Attempt] = [:]
    private var phase: Phase = .open
    private var nextBeacon: UInt64

    /// - `code`: the 6 digits shown to the admin (see `InviteCode`).
    /// - `meshKey`: the node's current mesh key; the beacon signature binds it, so the router
    ///   must not rotate while the invite is open (`MeshRouter.inviteOpen`).
    public init(
        inviteID: [UInt8], code: String, groupID: String, groupName: String, expiresAt: UInt64,
        meshKey: MeshKey, keys: Keys, auxRand: [UInt8], now: UInt64
    ) throws(MeshError) {
        guard let code = InviteCode.normalize(code) else { throw .invalidArgument }
        self.inviteID = inviteID
        self.code = code
        self.groupID = groupID
        self.groupName = groupName
        self.expiresAt = expiresAt
        myID = meshKey.id
        beacon = try InviteBeacon.sign(
            inviteID: inviteID, expiresAt: expiresAt, attemptsLeft: Self.maxAttempts, name: groupName,
            meshKey: meshKey.publicKey, keys: keys, auxRand: auxRand
        )
        nextBeacon = now
    }

    public var isOpen: Bool {
        if case .closed = phase { return false }
        return true
    }

    public var beaconPayload: [UInt8] { beacon.payload }

    // MARK: Time

    public mutating func tick(now: UInt64) -> [Action] {
        var actions: [Action] = []
        switch phase {
        case .closed:
            return []
        case .welcoming(var welcoming):
            if now >= welcoming.since &+ Self.welcomeWait {
                phase = .closed(nil)
                return [.closed(nil)]
            }
            if now >= welcoming.lastSent &+ Self.welcomeResend {
                welcoming.lastSent = now
                phase = .welcoming(welcoming)
                actions.append(.send(type: .joinWelcome, recipient: welcoming.peer, payload: welcoming.payload))
            }
            return actions
        case .open:
            if now >= expiresAt {
                phase = .closed(.inviteExpired)
                return [.closed(.inviteExpired)]
            }
            for (peer, attempt) in attempts.sorted(by: { $0.key < $1.key })
            where !attempt.requestPending && now >= attempt.openedAt &+ Self.requestWait {
                attempts[peer] = nil
                actions.append(.attempt(peer: peer, attemptsLeft: attemptsLeft, result: MeshError.timeout.rawValue))
            }
            if let closing = closeIfSpent() { return actions + closing }
            if now >= nextBeacon {
                nextBeacon = now &+ Self.beaconInterval
                actions.append(.beacon(payload: beacon.payload))
            }
            return actions
        }
    }

    /// The next time `tick` has something to do.
    public var nextDeadline: UInt64? {
        switch phase {
        case .closed: return nil
        case .welcoming(let w): return min(w.lastSent &+ Self.welcomeResend, w.since &+ Self.welcomeWait)
        case .open:
            let waits = attempts.values.filter { !$0.requestPending }.map { $0.openedAt &+ Self.requestWait }
            return ([nextBeacon, expiresAt] + waits).min()
        }
    }

    // MARK: Messages

    /// A join message addressed to this node by `sender` (a verified packet's sender); a hello
    /// that opens an attempt draws its scalar from `rng`.
    public mutating func receive<R: RandomNumberGenerator>(_ message: JoinMessage, from sender: MeshID, now: UInt64,
                                                           using rng: inout R) -> [Action] {
        receive(message, from: sender, now: now, scalar: { CPace.Scalar.random(using: &rng) })
    }

    /// As `receive`, with the scalar for a new attempt from `scalar` (vectors fix it).
    public mutating func receive(_ message: JoinMessage, from sender: MeshID, now: UInt64, scalar: () -> CPace.Scalar) -> [Action] {
        guard message.inviteID == inviteID else { return [] }
        switch message.body {
        case .hello(let yb): return hello(yb: yb, nonce: message.nonce, from: sender, now: now, scalar: scalar)
        case .request(let sealed): return request(sealed, nonce: message.nonce, from: sender, now: now)
        case .done(let status, let tag): return done(status: status, tag: tag, nonce: message.nonce, from: sender)
        case .challenge, .welcome, .error: return []
        }
    }

    private func errorMessage(_ code: JoinErrorCode, nonce: [UInt8], to peer: MeshID) -> Action {
        .send(type: .joinError, recipient: peer,
              payload: JoinMessage(inviteID: inviteID, nonce: nonce, body: .error(code: code.rawValue)).payload)
    }

    private mutating func hello(yb: [UInt8], nonce: [UInt8], from peer: MeshID, now: UInt64, scalar: () -> CPace.Scalar) -> [Action] {
        switch phase {
        case .closed(let reason):
            switch reason {
            case .tooManyAttempts?: return [errorMessage(.tooManyAttempts, nonce: nonce, to: peer)]
            case .inviteExpired?: return [errorMessage(.inviteExpired, nonce: nonce, to: peer)]
            default: return [errorMessage(.inviteClosed, nonce: nonce, to: peer)]
            }
        case .welcoming:
            return [errorMessage(.inviteClosed, nonce: nonce, to: peer)]
        case .open:
            break
        }
        guard now < expiresAt else { return [errorMessage(.inviteExpired, nonce: nonce, to: peer)] }
        // A new hello from a joiner with an attempt open ends that attempt (its code was
        // probably wrong: the joiner stopped and tried again); the admin is told.
        var ended: [Action] = []
        if let open = attempts[peer] {
            // A retransmitted hello gets the same challenge, free.
            if open.context.nonce == nonce, open.yb == yb {
                return [.send(type: .joinChallenge, recipient: peer, payload: open.challenge)]
            }
            attempts[peer] = nil
            ended = [.attempt(peer: peer, attemptsLeft: attemptsLeft, result: "replaced")]
        }
        guard attemptsLeft > 0 else { return ended + [errorMessage(.tooManyAttempts, nonce: nonce, to: peer)] + (closeIfSpent() ?? []) }
        guard attempts.count < Self.maxOpenAttempts else { return ended + [errorMessage(.inviteBusy, nonce: nonce, to: peer)] }
        attemptsLeft -= 1
        beacon = beacon.with(attemptsLeft: attemptsLeft)
        let context = JoinContext(inviteID: inviteID, nonce: nonce, inviter: myID, joiner: peer)
        let ya = scalar()
        let generator = CPace.generator(code: code, inviteID: inviteID, nonce: nonce, inviter: myID, joiner: peer)
        guard let yaShare = try? CPace.share(ya, generator: generator), let k = try? CPace.sharedPoint(ya, peerShare: yb) else {
            // A bad share aborts the attempt; it still cost one.
            return ended + [.attempt(peer: peer, attemptsLeft: attemptsLeft, result: MeshError.badPoint.rawValue)] + (closeIfSpent() ?? [])
        }
        let keys = JoinKeys(isk: CPace.isk(context: context, yb: yb, ya: yaShare, k: k))
        let info = JoinChallengeInfo(groupID: groupID, name: groupName)
        guard let sealed = try? keys.seal(.challenge, info.json, ad: context.associatedData(.joinChallenge)) else { return ended }
        let payload = JoinMessage(inviteID: inviteID, nonce: nonce, body: .challenge(ya: yaShare, sealed: sealed)).payload
        attempts[peer] = Attempt(context: context, yb: yb, keys: keys, challenge: payload, openedAt: now)
        return ended + [
            .send(type: .joinChallenge, recipient: peer, payload: payload),
            .attempt(peer: peer, attemptsLeft: attemptsLeft, result: "challenged"),
        ]
    }

    private mutating func request(_ sealed: [UInt8], nonce: [UInt8], from peer: MeshID, now: UInt64) -> [Action] {
        if case .welcoming(let w) = phase, w.peer == peer, w.context.nonce == nonce {
            return [.send(type: .joinWelcome, recipient: peer, payload: w.payload)]
        }
        guard case .open = phase, let attempt = attempts[peer], attempt.context.nonce == nonce else { return [] }
        guard !attempt.requestPending else { return [] }
        guard let plaintext = attempt.keys.open(.request, sealed, ad: attempt.context.associatedData(.joinRequest)) else {
            attempts[peer] = nil
            return [errorMessage(.wrongCode, nonce: nonce, to: peer),
                    .attempt(peer: peer, attemptsLeft: attemptsLeft, result: MeshError.wrongCode.rawValue)]
                + (closeIfSpent() ?? [])
        }
        attempts[peer]?.requestPending = true
        return [.joinRequest(plaintext, peer: peer)]
    }

    /// The node read the request handed up by `.joinRequest` as a join request for this group:
    /// the attempt reports `request`. The add follows, then `welcome(…)` or `refuse(…)`.
    public func requestRead(from peer: MeshID) -> [Action] {
        guard case .open = phase, let attempt = attempts[peer], attempt.requestPending else { return [] }
        return [.attempt(peer: peer, attemptsLeft: attemptsLeft, result: "request")]
    }

    /// The node committed the add: seal the gift-wrapped welcome (its JSON) to the joiner,
    /// refuse further hellos, and resend every 5 s until join-done or 60 s.
    public mutating func welcome(giftWrap: [UInt8], to peer: MeshID, now: UInt64) -> [Action] {
        guard case .open = phase, let attempt = attempts[peer], attempt.requestPending else { return [] }
        guard 32 + giftWrap.count + 16 <= PacketType.joinWelcome.maxPayload,
              let sealed = try? attempt.keys.seal(.welcome, giftWrap, ad: attempt.context.associatedData(.joinWelcome))
        else { return refuse(.welcomeTooLarge, peer: peer) }
        let payload = JoinMessage(inviteID: inviteID, nonce: attempt.context.nonce, body: .welcome(sealed: sealed)).payload
        attempts = [:]
        phase = .welcoming(Welcoming(peer: peer, context: attempt.context, keys: attempt.keys, payload: payload, since: now, lastSent: now))
        return [.send(type: .joinWelcome, recipient: peer, payload: payload)]
    }

    /// The node refused the request (`keyPackageInvalid`, `joinRefused`, `welcomeTooLarge`,
    /// `joinFailed`): the joiner is told and the attempt ends.
    public mutating func refuse(_ code: JoinErrorCode, peer: MeshID) -> [Action] {
        guard let attempt = attempts.removeValue(forKey: peer) else { return [] }
        return [errorMessage(code, nonce: attempt.context.nonce, to: peer),
                .attempt(peer: peer, attemptsLeft: attemptsLeft, result: code.error.rawValue)] + (closeIfSpent() ?? [])
    }

    private mutating func done(status: UInt8, tag: [UInt8], nonce: [UInt8], from peer: MeshID) -> [Action] {
        guard case .welcoming(let w) = phase, w.peer == peer, w.context.nonce == nonce,
              let status = JoinDoneStatus(rawValue: status),
              w.keys.open(.done, tag, ad: w.context.associatedData(.joinDone) + [status.rawValue]) != nil
        else { return [] }
        phase = .closed(nil)
        return [.joined(peer: peer, status: status), .closed(nil)]
    }

    /// No attempts left and none open: the invite closes (`too_many_attempts`).
    private mutating func closeIfSpent() -> [Action]? {
        guard case .open = phase, attemptsLeft == 0, attempts.isEmpty else { return nil }
        phase = .closed(.tooManyAttempts)
        return [.closed(.tooManyAttempts)]
    }
}

/// The 6-digit invite code (10.1): uniformly random ASCII digits, shown `042 517`; spaces and
/// dashes in typed input are ignored.
public enum InviteCode {
    public static func generate<R: RandomNumberGenerator>(using rng: inout R) -> String {
        let n = UInt32.random(in: 0..<1_000_000, using: &rng)
        return String(n).leftPadded(to: 6)
    }

    /// `042 517` for display.
    public static func display(_ code: String) -> String {
        guard code.count == 6 else { return code }
        return String(code.prefix(3)) + " " + String(code.suffix(3))
    }

    /// Typed input to the 6 digits, or `nil`.
    public static func normalize(_ input: String) -> String? {
        let kept = input.filter { $0 != " " && $0 != "-" }
        guard kept.count == 6, kept.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return kept
    }
}
