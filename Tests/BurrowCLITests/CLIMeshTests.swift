import Foundation
import TestSupport
import XCTest

/// The mesh through the real program on the UDP loopback radio (Docs/protocols/mesh.md 11.2), with no relay
/// running anywhere: three `burrow` processes in a line, Alice — Bob — Carol, each link's MTU
/// 100 so every welcome is cut into fragments and reassembled at Bob and again at Carol.
final class CLIMeshTests: MeshCLITestCase {
    func testNearbyInviteCrossesThreeProcessesInALineThenTheGroupChatsOverTheMesh() async throws {
        let (alice, bob, carol) = (try home("alice"), try home("bob"), try home("carol"))
        let ports = try LoopbackPorts.free(3)
        let (pa, pb, pc) = (ports[0], ports[1], ports[2])
        let family = try XCTUnwrap(try alice.ok(["group", "create", "Family"])["group"] as? [String: Any])
        let carolKey = try carol.pubkey
        let aliceKey = try alice.pubkey

        // Bob only forwards: his radio reaches both, theirs reach only him.
        let bobRun = try process(bob, ["run", "--mesh", "udp:\(pb),\(pa)/100,\(pc)/100"])
        defer { bobRun.stop() }
        _ = try await bobRun.waitForLine(containing: #""type":"mesh""#, timeout: .seconds(30))

        let invite = try process(alice, ["invite", "nearby", "Family", "--expires", "120", "--mesh", "udp:\(pa),\(pb)/100"])
        defer { invite.stop() }
        let open = try object(try await invite.waitForLine(containing: #""type":"invite_open""#, timeout: .seconds(30)))
        let code = try XCTUnwrap(open["code"] as? String)
        let inviteID = try XCTUnwrap(open["invite_id"] as? String)
        XCTAssertEqual(code.filter(\.isNumber).count, 6)

        // Carol lists the beacon two hops away, then joins with the code from a file.
        let listed = try carol.ok(["join", "nearby", "--list", "--wait", "5", "--mesh", "udp:\(pc),\(pb)/100"])
        let beacons = try XCTUnwrap(listed["invites"] as? [[String: Any]])
        let beacon = try XCTUnwrap(beacons.first { $0["invite_id"] as? String == inviteID }, "\(listed)")
        XCTAssertEqual(beacon["name"] as? String, "Family")
        XCTAssertEqual(beacon["inviter"] as? String, aliceKey)
        XCTAssertEqual(beacon["hops"] as? Int, 2)
        let codeFile = root.appendingPathComponent("code").path
        try code.write(toFile: codeFile, atomically: true, encoding: .utf8)
        let joined = try carol.ok(["join", "nearby", "--invite", String(inviteID.prefix(8)), "--code-file", codeFile,
                                   "--mesh", "udp:\(pc),\(pb)/100"])
        let group = try XCTUnwrap(joined["group"] as? [String: Any])
        XCTAssertEqual(group["name"] as? String, "Family")
        XCTAssertEqual(group["mls_group_id"] as? String, family["mls_group_id"] as? String)
        XCTAssertEqual(group["state"] as? String, "active")
        XCTAssertEqual(joined["inviter"] as? String, aliceKey)

        let done = try object(try await invite.waitForLine(containing: #""type":"joined""#, timeout: .seconds(30)))
        XCTAssertEqual(done["member"] as? String, carolKey)
        XCTAssertEqual(done["confirmed"] as? Bool, true, "Carol's join-done reached Alice")
        let members = try XCTUnwrap((done["group"] as? [String: Any])?["members"] as? [String])
        XCTAssertTrue(members.contains(carolKey))
        XCTAssertTrue(invite.lines.contains { $0.contains(#""result":"request""#) }, "\(invite.lines)")

        // Bob carried it: reassembled and re-fragmented the welcome (tens of 100-byte frames).
        let status = try XCTUnwrap(try bob.ok(["mesh", "status"])["mesh"] as? [String: Any])
        XCTAssertEqual(status["transport"] as? String, "udp")
        XCTAssertEqual(status["port"] as? Int, pb)
        let counters = try XCTUnwrap(status["counters"] as? [String: Any])
        XCTAssertGreaterThan(counters["forwarded"] as? Int ?? 0, 5)
        XCTAssertGreaterThan(counters["frames_in"] as? Int ?? 0, 40, "\(counters)")
        XCTAssertEqual((status["links"] as? [[String: Any]])?.count, 2)

        // Then the family talks over the mesh, no relay anywhere; Alice and Carol also DM.
        invite.stop()
        try alice.exchangeCards(with: carol, nicknames: ("Alice", "Carol"))
        let aliceRun = try process(alice, ["run", "--mesh", "udp:\(pa),\(pb)/100"])
        defer { aliceRun.stop() }
        let carolRun = try process(carol, ["run", "--mesh", "udp:\(pc),\(pb)/100"])
        defer { carolRun.stop() }
        _ = try await aliceRun.waitForLine(containing: #""type":"mesh""#, timeout: .seconds(30))
        _ = try await carolRun.waitForLine(containing: #""type":"mesh""#, timeout: .seconds(30))
        let sent = try alice.ok(["chat", "Family", "hello over the mesh"])
        XCTAssertNotNil(sent["event_id"] as? String)
        let line = try object(try await carolRun.waitForLine(containing: "hello over the mesh", timeout: .seconds(30)))
        XCTAssertEqual(line["type"] as? String, "message")
        XCTAssertEqual(line["sender"] as? String, aliceKey)
        _ = try carol.ok(["chat", "Family", "and back again"])
        _ = try await aliceRun.waitForLine(containing: "and back again", timeout: .seconds(30))
        // Locations are group messages: with no relay at all they ride the mesh too (issue 23).
        _ = try alice.ok(["location", "Family", "--lat", "-33.9", "--lon", "151.2", "--batt", "15"])
        let located = try object(try await carolRun.waitForLine(prefix: #"{"type":"location""#, timeout: .seconds(30)))
        XCTAssertEqual(located["member"] as? String, aliceKey)
        XCTAssertEqual(located["lat"] as? Double, -33.9)
        _ = try await carolRun.waitForLine(containing: #""alert":"battery_low""#, timeout: .seconds(5))

        // A Pigeon DM over the mesh: the Noise handshake crosses Bob both ways, then the message.
        let dm = try XCTUnwrap(try alice.ok(["dm", "send", "Carol", "psst, over the mesh", "--via", "mesh", "--timeout", "15"])["message"]
            as? [String: Any])
        XCTAssertEqual(dm["status"] as? String, "sent", "\(dm)")
        let received = try object(try await carolRun.waitForLine(containing: "psst, over the mesh", timeout: .seconds(30)))
        XCTAssertEqual(received["type"] as? String, "dm")
        XCTAssertEqual(received["contact"] as? String, "Alice")
        // `--via auto` with no relay: the mesh carries the reply at once, and the frame stays
        // owed to the relays (the message `queued`) instead of being written off as sent.
        let reply = try XCTUnwrap(try carol.ok(["dm", "send", "Alice", "got it", "--timeout", "5"])["message"] as? [String: Any])
        XCTAssertEqual(reply["status"] as? String, "queued", "\(reply)")
        _ = try await aliceRun.waitForLine(containing: "got it", timeout: .seconds(30))
    }

    /// With `burrow run --mesh` up on both homes, the nearby commands are forwarded into the
    /// running nodes: the invite's code streams back at once, the joiner's code travels on the
    /// control socket from its stdin, a wrong code costs an attempt, and the right one joins.
    func testNearbyInviteThroughRunningNodesWithAWrongCodeFirst() async throws {
        let (alice, carol) = (try home("alice"), try home("carol"))
        let ports = try LoopbackPorts.free(2)
        _ = try alice.ok(["group", "create", "Family"])
        let carolKey = try carol.pubkey
        let aliceRun = try process(alice, ["run", "--mesh", "udp:\(ports[0]),\(ports[1])"])
        defer { aliceRun.stop() }
        let carolRun = try process(carol, ["run", "--mesh", "udp:\(ports[1]),\(ports[0])"])
        defer { carolRun.stop() }
        _ = try await aliceRun.waitForLine(containing: #""type":"mesh""#, timeout: .seconds(30))
        _ = try await carolRun.waitForLine(containing: #""type":"mesh""#, timeout: .seconds(30))

        let invite = try process(alice, ["invite", "nearby", "Family", "--expires", "120"])
        defer { invite.stop() }
        let open = try object(try await invite.waitForLine(containing: #""type":"invite_open""#, timeout: .seconds(30)))
        let code = try XCTUnwrap(open["code"] as? String)
        let inviteID = try XCTUnwrap(open["invite_id"] as? String)
        XCTAssertTrue(invite.isRunning, "the code arrived while the forwarded invite is still open")
        // The open invite does not hold the running node: another forwarded command answers now.
        let started = ContinuousClock.now
        let status = try XCTUnwrap(try alice.ok(["mesh", "status"])["mesh"] as? [String: Any])
        XCTAssertEqual(status["transport"] as? String, "udp")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))

        let wrong = String(code.filter(\.isNumber).map { $0 == "9" ? "0" : "9" })
        let refused = try BurrowProcess.run(["join", "nearby", "--invite", inviteID, "--code-stdin", "--home", carol.path,
                                             "--passphrase-file", pass, "--json", "--timeout", "2"], stdin: wrong + "\n", timeout: 120)
        XCTAssertEqual((try refused.json()["error"] as? [String: Any])?["code"] as? String, "wrong_code", refused.stdout)
        // The joiner is told how many attempts the invite has left (issue 22, item 9).
        let refusal = ((try refused.json()["error"] as? [String: Any])?["message"] as? String) ?? ""
        XCTAssertTrue(refusal.contains("4 attempts left"), refusal)
        // The wrong code cost one attempt (the joiner's challenge did not open; it sent no request).
        let first = try object(try await invite.waitForLine(containing: #""result":"challenged""#, timeout: .seconds(10)))
        XCTAssertEqual(first["attempts_left"] as? Int, 4)

        let joined = try BurrowProcess.run(["join", "nearby", "--invite", "Family", "--code-stdin", "--home", carol.path,
                                            "--passphrase-file", pass, "--json", "--timeout", "2"], stdin: code + "\n", timeout: 120)
        XCTAssertEqual(joined.status, 0, joined.stdout + joined.stderr)
        XCTAssertEqual((try joined.json()["group"] as? [String: Any])?["name"] as? String, "Family")
        let done = try object(try await invite.waitForLine(containing: #""type":"joined""#, timeout: .seconds(30)))
        XCTAssertEqual(done["member"] as? String, carolKey)
        XCTAssertEqual(done["confirmed"] as? Bool, true)
        let left = try invite.lines.filter { $0.contains(#""result":"challenged""#) }.map { try object($0)["attempts_left"] as? Int }
        XCTAssertEqual(left, [4, 3], "two attempts: the wrong code's and the right one's")
        XCTAssertTrue(invite.lines.contains { $0.contains(#""result":"replaced""#) }, "the wrong code's attempt is reported ended: \(invite.lines)")
        // Carol's running node now holds the group and hears Alice's next message over the mesh.
        _ = try alice.ok(["chat", "Family", "welcome in"])
        _ = try await carolRun.waitForLine(containing: "welcome in", timeout: .seconds(30))
    }

    func testMeshOptionsAndErrors() throws {
        let alice = try home("alice")
        XCTAssertEqual(try alice.errorCode(["mesh", "status"]), "mesh_off", "no run, no mesh")
        XCTAssertEqual(try alice.errorCode(["run", "--mesh", "udp:70000,7001"]), "invalid_input")
        XCTAssertEqual(try alice.errorCode(["run", "--mesh", "udp:7000"]), "invalid_input")
        XCTAssertEqual(try alice.errorCode(["run", "--mesh", "carrier-pigeon"]), "invalid_input")
        XCTAssertEqual(try alice.errorCode(["run", "--mesh", "bluez", "--mesh-impair", "loss=0.1"]), "invalid_input")
        XCTAssertEqual(try alice.errorCode(["invite", "nearby", "Nope", "--mesh", "off"]), "mesh_off")
        XCTAssertEqual(try alice.errorCode(["dm", "send", "Nobody", "hi", "--via", "mesh"]), "no_route")
        // A port someone holds: mesh_port_in_use, and `run` ends with it.
        let holder = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(holder, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(holder, $0, &length) } }
        let taken = Int(UInt16(bigEndian: address.sin_port))
        // `ready` comes first, then the error document ends `run`.
        let ended = try alice.run(["run", "--mesh", "udp:\(taken),\(taken + 1)"])
        XCTAssertEqual(ended.status, 1)
        let last = try XCTUnwrap(ended.stdout.split(separator: "\n").last.map(String.init))
        let document = try object(last)
        XCTAssertEqual((document["error"] as? [String: Any])?["code"] as? String, "mesh_port_in_use", ended.stdout)
        XCTAssertFalse(alice.isLockHeld)
    }
}
