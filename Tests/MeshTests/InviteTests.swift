@testable import Mesh
import Nostr
import TestSupport
import XCTest

final class InviteTests: XCTestCase {
    let now = MeshFixture.now
    let inviteID = [UInt8](repeating: 0x1D, count: 16)
    let groupID = "c877b655cf4983bf370b2a7d5c5c2cc0"
    var rng = SplitMix64(seed: 99)
    /// The inviter's CPace scalars, apart so that they leave `rng`'s draws as they were.
    var scalars = SplitMix64(seed: 100)

    func host(code: String = "042517") throws -> (InviteHost, MeshKey, Keys) {
        let meshKey = MeshFixture.key(0xA1)
        let admin = Keys.generate(using: &rng)
        let host = try InviteHost(inviteID: inviteID, code: code, groupID: groupID, groupName: "Family", expiresAt: now + 300_000,
                                  meshKey: meshKey, keys: admin, auxRand: [UInt8](repeating: 0, count: 32), now: now)
        return (host, meshKey, admin)
    }

    func joiner(for host: InviteHost, meshKey: MeshKey, joinerKey: MeshKey = MeshFixture.key(0xB2)) throws -> (JoinSession, Keys) {
        let beacon = try UnverifiedBeacon.decode(host.beaconPayload).verified(meshKey: meshKey.publicKey)
        let keys = Keys.generate(using: &rng)
        let keyPackage = try Event.sign(kind: 30443, content: "kp", tags: [["d", "0"]], createdAt: Int64(now / 1000), keys: keys, rng: &rng)
        return (JoinSession(beacon: beacon, inviter: meshKey.id, myID: joinerKey.id, keyPackageID: keyPackage.id), keys)
    }

    /// What the node would send as the join request; the mesh seals and carries it unread.
    let requestBytes = Array(#"{"type":"join-request","v":1,"groupId":"c877b655cf4983bf370b2a7d5c5c2cc0","name":"Kid"}"#.utf8)

    func sends<A>(_ actions: [A], _ extract: (A) -> (PacketType, MeshID, [UInt8])?) -> [(type: PacketType, to: MeshID, payload: [UInt8])] {
        actions.compactMap(extract).map { (type: $0.0, to: $0.1, payload: $0.2) }
    }

    func hostSends(_ actions: [InviteHost.Action]) -> [(type: PacketType, to: MeshID, payload: [UInt8])] {
        sends(actions) { if case .send(let t, let r, let p) = $0 { return (t, r, p) } else { return nil } }
    }

    func joinerSends(_ actions: [JoinSession.Action]) -> [(type: PacketType, to: MeshID, payload: [UInt8])] {
        sends(actions) { if case .send(let t, let r, let p) = $0 { return (t, r, p) } else { return nil } }
    }

    func message(_ sent: (type: PacketType, to: MeshID, payload: [UInt8])) throws -> JoinMessage {
        try JoinMessage.decode(type: sent.type, payload: sent.payload)
    }

    func testCompleteExchange() throws {
        var (host, meshKey, admin) = try host()
        let J = MeshFixture.key(0xB2).id
        var (joiner, joinerKeys) = try joiner(for: host, meshKey: meshKey)
        guard case .beacon(let beaconPayload)? = host.tick(now: now).first else { return XCTFail("no beacon") }
        XCTAssertEqual(try UnverifiedBeacon.decode(beaconPayload).verified(meshKey: meshKey.publicKey).inviter, admin.publicKey)

        let hello = joinerSends(joiner.attempt(code: "042 517", now: now, using: &rng))
        XCTAssertEqual(hello.map(\.type), [.joinHello])
        XCTAssertEqual(hello.first?.to, meshKey.id)
        let challenge = hostSends(host.receive(try message(hello[0]), from: J, now: now + 10, using: &scalars))
        XCTAssertEqual(challenge.map(\.type), [.joinChallenge])
        XCTAssertEqual(host.attemptsLeft, 4)
        // A retransmitted hello gets the same challenge, free.
        XCTAssertEqual(hostSends(host.receive(try message(hello[0]), from: J, now: now + 20, using: &scalars)).map(\.payload),
                       challenge.map(\.payload))
        XCTAssertEqual(host.attemptsLeft, 4)

        let answer = joiner.receive(try message(challenge[0]), from: meshKey.id, now: now + 30)
        guard case .challengeOpened(let info)? = answer.first else { return XCTFail("challenge did not open: \(answer)") }
        XCTAssertEqual(info, JoinChallengeInfo(groupID: groupID, name: "Family"))
        XCTAssertTrue(joinerSends(answer).isEmpty, "the request is the node's to give")
        let request = joinerSends(joiner.request(requestBytes, now: now + 30))
        XCTAssertEqual(request.map(\.type), [.joinRequest])
        XCTAssertTrue(joiner.request(requestBytes, now: now + 31).isEmpty, "one request per attempt")

        // The inviter hands the plaintext up unread; the node reads it, then says so.
        let handed = host.receive(try message(request[0]), from: J, now: now + 40, using: &scalars)
        guard case .joinRequest(let plaintext, let peer)? = handed.first, handed.count == 1 else { return XCTFail("no request: \(handed)") }
        XCTAssertEqual(peer, J)
        XCTAssertEqual(plaintext, requestBytes)
        let read = host.requestRead(from: J).compactMap { action -> String? in
            if case .attempt(J, 4, let result) = action { return result } else { return nil }
        }
        XCTAssertEqual(read, ["request"])
        XCTAssertTrue(host.requestRead(from: MeshID(77)).isEmpty, "no request from that peer")

        // The node commits and gift-wraps; the mesh only carries the 1059 it is given.
        let giftWrap = try Event.sign(kind: 1059, content: "wrapped welcome", tags: [["p", joinerKeys.publicKey.hex]],
                                      createdAt: Int64(now / 1000), keys: Keys.generate(using: &rng), rng: &rng)
        let welcome = hostSends(host.welcome(giftWrap: giftWrap.jsonBytes, to: J, now: now + 50))
        XCTAssertEqual(welcome.map(\.type), [.joinWelcome])
        XCTAssertEqual(hostSends(host.tick(now: now + 5_050)).map(\.type), [.joinWelcome], "resent every 5 s")
        // Further hellos are refused.
        let late = hostSends(host.receive(JoinMessage(inviteID: inviteID, nonce: [UInt8](repeating: 3, count: 16),
                                                      body: .hello(yb: [UInt8](repeating: 1, count: 32))), from: MeshID(77), now: now + 60, using: &scalars))
        XCTAssertEqual(try late.map { try message($0).body }, [.error(code: JoinErrorCode.inviteClosed.rawValue)])

        let surfaced = joiner.receive(try message(welcome[0]), from: meshKey.id, now: now + 60)
        guard case .welcome(let received, let inviter, let kpID)? = surfaced.first else { return XCTFail("no welcome: \(surfaced)") }
        XCTAssertEqual(received, giftWrap)
        XCTAssertEqual(inviter, admin.publicKey)
        XCTAssertEqual(kpID, joiner.keyPackageID)
        let done = joiner.welcomeProcessed(.accepted)
        XCTAssertEqual(joinerSends(done).map(\.type), [.joinDone])
        // A retransmitted welcome is answered again.
        XCTAssertEqual(joinerSends(joiner.receive(try message(welcome[0]), from: meshKey.id, now: now + 70)).map(\.payload),
                       joinerSends(done).map(\.payload))

        let finished = host.receive(try message(joinerSends(done)[0]), from: J, now: now + 80, using: &scalars)
        guard case .joined(let who, .accepted)? = finished.first else { return XCTFail("not joined: \(finished)") }
        XCTAssertEqual(who, J)
        XCTAssertFalse(host.isOpen)
        XCTAssertNil(host.nextDeadline)
    }

    /// A request that would not fit a join-request packet ends the attempt before anything is sent.
    func testJoinerRefusesARequestTooLargeForAPacket() throws {
        var (host, meshKey, _) = try host()
        var (joiner, _) = try joiner(for: host, meshKey: meshKey)
        let J = MeshFixture.key(0xB2).id
        XCTAssertTrue(joiner.request(requestBytes, now: now).isEmpty, "no request before the challenge opens")
        let hello = joinerSends(joiner.attempt(code: "042517", now: now, using: &rng))
        let challenge = hostSends(host.receive(try message(hello[0]), from: J, now: now, using: &scalars))
        guard case .challengeOpened? = joiner.receive(try message(challenge[0]), from: meshKey.id, now: now).first else {
            return XCTFail("challenge did not open")
        }
        let tooLarge = joiner.request([UInt8](repeating: 0x20, count: PacketType.joinRequest.maxPayload), now: now)
        XCTAssertTrue(joinerSends(tooLarge).isEmpty)
        guard case .finished(.keyPackageInvalid?)? = tooLarge.first else { return XCTFail("\(tooLarge)") }
        XCTAssertFalse(joiner.isOpen)
    }

    /// An attacker without the code: five attempts each end in wrong_code; the sixth hello is
    /// refused with too_many_attempts and changes nothing.
    func testWrongCodeSixTimesIsRefused() throws {
        var (host, meshKey, _) = try host()
        for attempt in 0..<5 {
            let J = MeshFixture.key(UInt8(0xC0 + attempt)).id
            var (attacker, _) = try joiner(for: host, meshKey: meshKey, joinerKey: MeshFixture.key(UInt8(0xC0 + attempt)))
            let hello = joinerSends(attacker.attempt(code: "999999", now: now, using: &rng))
            let challenge = hostSends(host.receive(try message(hello[0]), from: J, now: now + UInt64(attempt), using: &scalars))
            XCTAssertEqual(challenge.map(\.type), [.joinChallenge])
            // The challenge does not open under a wrong code: the joiner stops and sends nothing.
            let verdict = attacker.receive(try message(challenge[0]), from: meshKey.id, now: now)
            XCTAssertTrue(joinerSends(verdict).isEmpty)
            guard case .finished(.wrongCode?)? = verdict.last else { return XCTFail("joiner: \(verdict)") }
            // A guessed request (sealed under any other key) is a wrong code at the inviter.
            let forged = JoinMessage(inviteID: inviteID, nonce: try message(hello[0]).nonce,
                                     body: .request(sealed: [UInt8](repeating: UInt8(attempt), count: 64)))
            let reply = host.receive(forged, from: J, now: now + 100, using: &scalars)
            XCTAssertEqual(try hostSends(reply).map { try message($0).body }, [.error(code: JoinErrorCode.wrongCode.rawValue)])
            XCTAssertEqual(host.attemptsLeft, UInt8(4 - attempt))
            if attempt == 4 {
                XCTAssertTrue(reply.contains { if case .closed(.tooManyAttempts?) = $0 { return true } else { return false } })
            }
        }
        XCTAssertFalse(host.isOpen)
        let sixth = host.receive(JoinMessage(inviteID: inviteID, nonce: [UInt8](repeating: 6, count: 16),
                                             body: .hello(yb: [UInt8](repeating: 6, count: 32))), from: MeshID(6), now: now + 200, using: &scalars)
        XCTAssertEqual(try hostSends(sixth).map { try message($0).body }, [.error(code: JoinErrorCode.tooManyAttempts.rawValue)])
        XCTAssertEqual(host.attemptsLeft, 0)
        XCTAssertFalse(host.isOpen)
        XCTAssertNil(host.nextDeadline)
        XCTAssertTrue(host.tick(now: now + 10_000).isEmpty, "a closed invite sends no beacon")
    }

    func testJoinerGivesUpAfterThreeWrongCodes() throws {
        var (host, meshKey, _) = try host()
        var (joiner, _) = try joiner(for: host, meshKey: meshKey)
        let J = MeshFixture.key(0xB2).id
        var results: [MeshError?] = []
        for n in 0..<3 {
            let hello = joinerSends(joiner.attempt(code: "00000\(n)", now: now + UInt64(n) * 1000, using: &rng))
            let challenge = hostSends(host.receive(try message(hello[0]), from: J, now: now + UInt64(n) * 1000, using: &scalars))
            for case .finished(let result) in joiner.receive(try message(challenge[0]), from: meshKey.id, now: now) { results.append(result) }
        }
        XCTAssertEqual(results, [.wrongCode, .wrongCode, .tooManyAttempts])
        let fourth = joiner.attempt(code: "042517", now: now + 5_000, using: &rng)
        XCTAssertTrue(joinerSends(fourth).isEmpty)
        guard case .finished(.tooManyAttempts?)? = fourth.first else { return XCTFail("\(fourth)") }
    }

    /// A joiner that tries again ends its open attempt: the admin sees it end (`replaced`), the
    /// new one costs an attempt of its own.
    func testANewHelloEndsTheJoinersOpenAttemptVisibly() throws {
        var (host, meshKey, _) = try host()
        let key = MeshFixture.key(0xD4)
        var (first, _) = try joiner(for: host, meshKey: meshKey, joinerKey: key)
        let hello = joinerSends(first.attempt(code: "000000", now: now, using: &rng))
        _ = host.receive(try message(hello[0]), from: key.id, now: now, using: &scalars)
        var (second, _) = try joiner(for: host, meshKey: meshKey, joinerKey: key)
        let again = joinerSends(second.attempt(code: "042517", now: now + 1_000, using: &rng))
        let actions = host.receive(try message(again[0]), from: key.id, now: now + 1_000, using: &scalars)
        let results = actions.compactMap { action -> String? in if case .attempt(_, _, let result) = action { return result } else { return nil } }
        XCTAssertEqual(results, ["replaced", "challenged"])
        XCTAssertEqual(host.attemptsLeft, 3)
    }

    func testAtMostTwoOpenAttemptsAndMessagesOnlyFromTheBeaconSender() throws {
        var (host, meshKey, _) = try host()
        for (i, seed) in [0xD1, 0xD2, 0xD3].enumerated() {
            let key = MeshFixture.key(UInt8(seed))
            var (j, _) = try joiner(for: host, meshKey: meshKey, joinerKey: key)
            let hello = joinerSends(j.attempt(code: "042517", now: now, using: &rng))
            let reply = hostSends(host.receive(try message(hello[0]), from: key.id, now: now, using: &scalars))
            if i < 2 {
                XCTAssertEqual(reply.map(\.type), [.joinChallenge])
            } else {
                XCTAssertEqual(try reply.map { try message($0).body }, [.error(code: JoinErrorCode.inviteBusy.rawValue)])
            }
        }
        XCTAssertEqual(host.attemptsLeft, 3)
        // Attempts waiting 30 s for their request end.
        let expired = host.tick(now: now + 30_000)
        XCTAssertEqual(expired.filter { if case .attempt(_, _, "timeout") = $0 { return true } else { return false } }.count, 2)

        // A joiner ignores exchange messages from anyone but the beacon's sender.
        var (j, _) = try joiner(for: host, meshKey: meshKey)
        let hello = joinerSends(j.attempt(code: "042517", now: now, using: &rng))
        let challenge = hostSends(host.receive(try message(hello[0]), from: MeshFixture.key(0xB2).id, now: now + 30_001, using: &scalars))
        XCTAssertTrue(j.receive(try message(challenge[0]), from: MeshID(12345), now: now).isEmpty)
        XCTAssertFalse(j.receive(try message(challenge[0]), from: meshKey.id, now: now).isEmpty)
    }

    func testJoinerResendsHelloThenTimesOut() throws {
        let (host, meshKey, _) = try host()
        var (joiner, _) = try joiner(for: host, meshKey: meshKey)
        XCTAssertEqual(joinerSends(joiner.attempt(code: "042517", now: now, using: &rng)).count, 1)
        var sent = 1
        var result: [MeshError?] = []
        var t = now
        while let deadline = joiner.nextDeadline, t < now + 60_000 {
            t = deadline
            let actions = joiner.tick(now: t)
            sent += joinerSends(actions).count
            for case .finished(let r) in actions { result.append(r) }
        }
        XCTAssertEqual(sent, 4)
        XCTAssertEqual(result, [.timeout])
        XCTAssertEqual(t, now + 20_000)
    }

    func testInviteCodes() {
        var rng = SplitMix64(seed: 1)
        let codes = (0..<200).map { _ in InviteCode.generate(using: &rng) }
        XCTAssertTrue(codes.allSatisfy { $0.count == 6 && $0.allSatisfy(\.isNumber) })
        XCTAssertGreaterThan(Set(codes).count, 190)
        XCTAssertEqual(InviteCode.display("042517"), "042 517")
        XCTAssertEqual(InviteCode.normalize(" 042-517 "), "042517")
        XCTAssertNil(InviteCode.normalize("42517"))
        XCTAssertNil(InviteCode.normalize("04251a"))
    }
}

final class WelcomeCheckTests: XCTestCase {
    /// 10.6: the seal must be by the beacon's inviter and the welcome's `e` tag must name the
    /// KeyPackage the joiner sent.
    func testWelcomeMatchesOnlyTheInvitersWelcomeForOurKeyPackage() throws {
        let now = MeshFixture.now
        var rng = SplitMix64(seed: 12)
        let admin = Keys.generate(using: &rng), other = Keys.generate(using: &rng), joinerKeys = Keys.generate(using: &rng)
        let meshKey = MeshFixture.key(0xA1)
        let beacon = try InviteBeacon.sign(inviteID: [UInt8](repeating: 5, count: 16), expiresAt: now + 300_000, attemptsLeft: 5,
                                           name: "Family", meshKey: meshKey.publicKey, keys: admin, auxRand: [UInt8](repeating: 0, count: 32))
        let keyPackage = try Event.sign(kind: 30443, content: "kp", tags: [], createdAt: Int64(now / 1000), keys: joinerKeys, rng: &rng)
        let session = JoinSession(beacon: beacon, inviter: meshKey.id, myID: MeshFixture.key(0xB2).id, keyPackageID: keyPackage.id)
        func gift(from sender: Keys, naming id: String) throws -> UnwrappedGift {
            let rumor = try Rumor(pubkey: sender.publicKey, createdAt: Int64(now / 1000), kind: 444, tags: [["e", id]], content: "welcome")
            let wrapped = try GiftWrap.wrap(rumor: rumor, sender: sender, recipient: joinerKeys.publicKey, now: Int64(now / 1000), rng: &rng)
            return try GiftWrap.unwrap(wrapped, recipient: joinerKeys)
        }
        XCTAssertTrue(session.welcomeMatches(try gift(from: admin, naming: keyPackage.id.hex)))
        XCTAssertFalse(session.welcomeMatches(try gift(from: other, naming: keyPackage.id.hex)), "sealed by someone else")
        XCTAssertFalse(session.welcomeMatches(try gift(from: admin, naming: String(repeating: "0", count: 64))), "another KeyPackage")
    }
}
