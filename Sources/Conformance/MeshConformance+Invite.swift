import Marmot
import Mesh
import Nostr
import SeededRandom

extension MeshConformance {
    /// One nearby-invite transcript (invite.json): keys, generators, shares, the shared point,
    /// ISK and message keys; the beacon; every message payload, produced by the inviter and
    /// joiner state machines where their inputs allow (hello, challenge; the joiner's verdict on
    /// the challenge) and by the attempt's keys otherwise; and the signed packets.
    static func inviteCase(_ entry: JSONValue) throws {
        let now = try time(entry, "now_ms")
        let inviteID = try hex(entry, "invite_id", length: 16)
        let nonce = try hex(entry, "nonce", length: 16)
        let inviterKey = try MeshKey(seed: hex(entry, "inviter_mesh_seed", length: 32))
        let joinerKey = try MeshKey(seed: hex(entry, "joiner_mesh_seed", length: 32))
        try expect(inviterKey.publicKey == (try hex(entry, "inviter_mesh_key", length: 32)), "inviter mesh key differs")
        let I = try meshID(entry["inviter_id"], "inviter_id"), J = try meshID(entry["joiner_id"], "joiner_id")
        try expect(inviterKey.id == I && joinerKey.id == J, "mesh ids differ")
        let nostr = Keys(secretKey: try SecretKey(bytes: hex(entry, "inviter_nostr_secret", length: 32)))
        try expect(nostr.publicKey.bytes == (try hex(entry, "inviter_pubkey", length: 32)), "inviter pubkey differs")
        let code = try string(entry, "code"), joinerCode = try string(entry, "joiner_code")
        let expiresAt = try time(entry, "expires_at")
        let name = try string(entry, "group_name"), groupID = try string(entry, "group_id")

        // Beacon.
        let digest = UnverifiedBeacon.digest(inviteID: inviteID, expiresAt: expiresAt, meshKey: inviterKey.publicKey, name: name)
        try expect(digest == (try hex(entry, "beacon_digest", length: 32)), "beacon digest differs")
        guard let attempts = UInt8(exactly: try integer(entry, "attempts_left")) else { throw CaseFailure("attempts_left") }
        let beacon = try InviteBeacon.sign(
            inviteID: inviteID, expiresAt: expiresAt, attemptsLeft: attempts, name: name, meshKey: inviterKey.publicKey,
            keys: nostr, auxRand: hex(entry, "beacon_aux", length: 32)
        )
        try expect(beacon.signature == (try hex(entry, "beacon_signature", length: 64)), "beacon signature differs")
        try expect(beacon.payload == (try hex(entry, "beacon_payload")), "beacon payload differs")

        // CPace.
        let ya = try CPace.Scalar(bytes: hex(entry, "ya_scalar", length: 32))
        let yb = try CPace.Scalar(bytes: hex(entry, "yb_scalar", length: 32))
        let gA = CPace.generator(code: code, inviteID: inviteID, nonce: nonce, inviter: I, joiner: J)
        let gB = CPace.generator(code: joinerCode, inviteID: inviteID, nonce: nonce, inviter: I, joiner: J)
        try expect(gA == (try hex(entry, "generator_inviter", length: 32)), "inviter generator differs")
        try expect(gB == (try hex(entry, "generator_joiner", length: 32)), "joiner generator differs")
        let yaShare = try CPace.share(ya, generator: gA), ybShare = try CPace.share(yb, generator: gB)
        try expect(yaShare == (try hex(entry, "ya", length: 32)) && ybShare == (try hex(entry, "yb", length: 32)), "shares differ")
        let kA = try CPace.sharedPoint(ya, peerShare: ybShare), kB = try CPace.sharedPoint(yb, peerShare: yaShare)
        try expect(kA == (try hex(entry, "k_inviter", length: 32)) && kB == (try hex(entry, "k_joiner", length: 32)), "K differs")
        let context = JoinContext(inviteID: inviteID, nonce: nonce, inviter: I, joiner: J)
        let isk = CPace.isk(context: context, yb: ybShare, ya: yaShare, k: kA)
        try expect(isk == (try hex(entry, "isk_inviter", length: 64)), "ISK differs")
        let keys = JoinKeys(isk: isk)
        for label in JoinKeys.Label.allCases {
            try expect(keys.bytes(label) == (try hex(entry["keys_inviter"], label.rawValue)), "k_\(label.rawValue) differs")
        }

        // The inviter state machine answers the hello with the challenge.
        let t = now
        var host = try InviteHost(
            inviteID: inviteID, code: code, groupID: groupID, groupName: name, expiresAt: expiresAt, meshKey: inviterKey,
            keys: nostr, auxRand: hex(entry, "beacon_aux", length: 32), now: t
        )
        // The joiner state machine sends the hello.
        guard let infoValue = try? JSONValue.parse(Array(try string(entry, "challenge_plaintext").utf8)) else {
            throw CaseFailure("challenge plaintext is not JSON")
        }
        try expect(infoValue["groupId"]?.stringValue == groupID && infoValue["name"]?.stringValue == name, "challenge plaintext fields")
        try expect(JoinChallengeInfo(groupID: groupID, name: name).json == Array(try string(entry, "challenge_plaintext").utf8),
                   "challenge plaintext differs")
        let verifiedBeacon = try UnverifiedBeacon.decode(beacon.payload).verified(meshKey: inviterKey.publicKey)
        let placeholderKP = try placeholderKeyPackage(entry)
        var joiner = JoinSession(beacon: verifiedBeacon, inviter: I, myID: J, keyPackageID: placeholderKP.event.id)
        let hello = joiner.attempt(code: joinerCode, now: t, nonce: nonce, scalar: yb)
        let helloPayload = try hex(entry, "hello_payload")
        try expect(sent(hello, .joinHello) == helloPayload, "hello payload differs")
        let challenge = host.receive(try JoinMessage.decode(type: .joinHello, payload: helloPayload), from: J, now: t, scalar: { ya })
        let challengePayload = try hex(entry, "challenge_payload")
        try expect(sentByHost(challenge, .joinChallenge) == challengePayload, "challenge payload differs")
        try expect(host.attemptsLeft == attempts - 1, "the attempt was not counted")

        let answer = joiner.receive(try JoinMessage.decode(type: .joinChallenge, payload: challengePayload), from: I, now: t)
        let packets = entry["packets"]
        if entry["joiner_result"]?.stringValue == "wrong_code" {
            try expect(answer.contains { if case .finished(.wrongCode?) = $0 { return true } else { return false } },
                       "the joiner did not stop with wrong_code")
            try expect(!answer.contains { if case .send = $0 { return true } else { return false } }, "the joiner sent after a wrong code")
            let error = try JoinMessage.decode(type: .joinError, payload: hex(entry, "error_payload"))
            guard case .error(let raw) = error.body, let code = JoinErrorCode(rawValue: raw) else { throw CaseFailure("not an error") }
            try expect(code.error.rawValue == (try string(entry, "error_name")), "error code differs")
            try checkPacket(packets, "error", type: .joinError, from: I, to: J, payload: error.payload, now: now)
        } else {
            try expect(try string(entry, "joiner_result") == "ok", "unknown joiner_result")
            // The joiner's request carries the vector's KeyPackage and pubkey: its plaintext (built
            // as the node builds it, for the group the challenge named) and seal are reproduced
            // byte for byte.
            guard case .challengeOpened(let info)? = answer.first else { throw CaseFailure("the challenge did not open") }
            let request = JoinRequest(groupID: info.groupID, pubkey: placeholderKP.pubkey, keyPackage: placeholderKP.event,
                                      name: placeholderKP.name).json
            try expect(request == Array(try string(entry, "request_plaintext").utf8), "request plaintext differs")
            try expect(sent(joiner.request(request, now: t), .joinRequest) == (try hex(entry, "request_payload")), "request payload differs")
            let welcomeJSON = Array(try string(entry, "welcome_plaintext").utf8)
            let welcome = JoinMessage(inviteID: inviteID, nonce: nonce,
                                      body: .welcome(sealed: try keys.seal(.welcome, welcomeJSON, context: context, type: .joinWelcome)))
            try expect(welcome.payload == (try hex(entry, "welcome_payload")), "welcome payload differs")
            let processed = joiner.receive(welcome, from: I, now: t)
            guard case .welcome(let giftWrap, let inviter, _)? = processed.first else { throw CaseFailure("the joiner did not surface the welcome") }
            try expect(giftWrap.jsonBytes == welcomeJSON && inviter == nostr.publicKey, "surfaced welcome differs")
            guard let status = UInt8(exactly: try integer(entry, "done_status")), let doneStatus = JoinDoneStatus(rawValue: status) else {
                throw CaseFailure("done_status")
            }
            let done = joiner.welcomeProcessed(doneStatus)
            try expect(sent(done, .joinDone) == (try hex(entry, "done_payload")), "done payload differs")
            for (label, type, payload) in [("request", PacketType.joinRequest, try hex(entry, "request_payload")),
                                           ("done", .joinDone, try hex(entry, "done_payload"))] {
                try checkPacket(packets, label, type: type, from: J, to: I, payload: payload, now: now)
            }
            try checkPacket(packets, "welcome", type: .joinWelcome, from: I, to: J, payload: welcome.payload, now: now)
        }
        try checkPacket(packets, "beacon", type: .inviteBeacon, from: I, to: nil, payload: beacon.payload, now: now)
        try checkPacket(packets, "hello", type: .joinHello, from: J, to: I, payload: helloPayload, now: now)
        try checkPacket(packets, "challenge", type: .joinChallenge, from: I, to: J, payload: challengePayload, now: now)
    }

    static func checkPacket(_ packets: JSONValue?, _ name: String, type: PacketType, from sender: MeshID, to recipient: MeshID?,
                            payload: [UInt8], now: UInt64) throws {
        let bytes = try hexValue(packets?[name], "packets.\(name)")
        let unverified = try UnverifiedPacket.decode(bytes)
        try unverified.checkFreshness(now: now)
        let packet = try unverified.verified()
        try expect(packet.type == type && packet.sender == sender && packet.recipient == recipient, "packet \(name): header differs")
        try expect(packet.payload == payload, "packet \(name): payload differs")
        try expect(packet.ttl == type.originTTL, "packet \(name): TTL \(packet.ttl)")
    }

    static func sent(_ actions: [JoinSession.Action], _ type: PacketType) -> [UInt8]? {
        for case .send(let t, _, let payload) in actions where t == type { return payload }
        return nil
    }

    static func sentByHost(_ actions: [InviteHost.Action], _ type: PacketType) -> [UInt8]? {
        for case .send(let t, _, let payload) in actions where t == type { return payload }
        return nil
    }

    /// The KeyPackage event, joiner pubkey and name of the vector's request (or placeholders
    /// for a wrong-code case, which never gets as far as a request).
    static func placeholderKeyPackage(_ entry: JSONValue) throws -> (event: Event, pubkey: PublicKey, name: String?) {
        if let text = entry["request_plaintext"]?.stringValue {
            guard let request = try? JSONValue.parse(Array(text.utf8)), let kp = request["keyPackage"]?.stringValue,
                  let pubkey = try? PublicKey(hex: request["pubkey"]?.stringValue ?? "")
            else { throw CaseFailure("request plaintext fields") }
            let event = try UnverifiedEvent(json: kp).verified()
            return (event, pubkey, request["name"]?.stringValue)
        }
        var rng = SplitMix64(seed: 1)
        let keys = Keys.generate(using: &rng)
        let event = try Event.sign(kind: 30443, content: "", createdAt: 0, keys: keys, rng: &rng)
        return (event, keys.publicKey, nil)
    }
}
