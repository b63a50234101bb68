import Foundation
import TestSupport
import XCTest

/// `burrow run` as one service group (issue 21, item 3): SIGINT and SIGTERM end it with
/// status 0 after every component closed — the control socket file removed, the mesh's UDP
/// port and the home's lock released — and it can start again at once on the same home.
final class RunLifecycleTests: MeshCLITestCase {
    func testSignalsStopEveryServiceAndReleaseTheHome() async throws {
        let home = try home("home")
        let socket = home.path + "/burrow.sock"
        for signal in [SIGINT, SIGTERM] {
            let ports = try LoopbackPorts.free(2)
            let run = try process(home, ["run", "--no-embedded-relay", "--mesh", "udp:\(ports[0]),\(ports[1])"])
            defer { run.stop() }
            _ = try await run.waitForLine(containing: #""type":"mesh""#, timeout: .seconds(30))
            XCTAssertTrue(FileManager.default.fileExists(atPath: socket))
            XCTAssertEqual(try home.ok(["whoami"])["pubkey"] as? String, try home.pubkey, "commands reach the running node")

            XCTAssertEqual(run.signalAndWait(signal, timeout: .seconds(10)), 0, "signal \(signal): \(run.standardError)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "signal \(signal): the socket is removed")
            XCTAssertFalse(home.isLockHeld, "signal \(signal): the home is unlocked")
            XCTAssertTrue(LoopbackPorts.canBind(ports[0]), "signal \(signal): the mesh released its port")
            XCTAssertFalse(run.standardError.contains("Fatal"), run.standardError)
        }
    }

    /// Bob's `run` relies on the embedded relay Alice's `run` serves; when Alice's ends, Bob's
    /// commands say to restart Bob's `run` (which then serves it), not to "start burrow run"
    /// (issue 22, item 7).
    func testAdviceInsideRunWhenAnotherRunsEmbeddedRelayWentAway() async throws {
        let alice = BurrowHome(path: root.appendingPathComponent("alice").path, passphraseFile: pass, timeout: 2)
        let bob = BurrowHome(path: root.appendingPathComponent("bob").path, passphraseFile: pass, timeout: 2)
        try alice.ok(["init", "--kdf-memory-mib", "8"])
        try bob.ok(["init", "--kdf-memory-mib", "8"])
        func run(_ home: BurrowHome, _ name: String) throws -> PeerProcess {
            try PeerProcess(executable: BurrowProcess.binary, arguments: [
                "run", "--home", home.path, "--passphrase-file", pass, "--json", "--timeout", "2",
                "--relay-data", root.appendingPathComponent("relay-\(name)").path])
        }
        let aliceRun = try run(alice, "alice")
        defer { aliceRun.stop() }
        let aliceReady = try await aliceRun.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))
        XCTAssertTrue(aliceReady.contains(#""embedded_relay":"ws://127.0.0.1:7447""#), aliceReady)
        let bobRun = try run(bob, "bob")
        defer { bobRun.stop() }
        let bobReady = try await bobRun.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))
        XCTAssertTrue(bobReady.contains(#""embedded_relay":null"#), "the port is Alice's: \(bobReady)")

        XCTAssertEqual(aliceRun.signalAndWait(SIGTERM, timeout: .seconds(10)), 0)
        let failed = try bob.run(["sync"])
        XCTAssertEqual(failed.status, 1)
        let message = ((try failed.json()["error"] as? [String: Any])?["message"] as? String) ?? ""
        XCTAssertTrue(message.contains("restart this `burrow run`"), message)
        XCTAssertFalse(message.contains("start `burrow run` in another terminal"), message)
    }
}
