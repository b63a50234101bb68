import Foundation
import TestSupport
import XCTest

/// The harness every interop suite stands on: requests answered in order, peer errors
/// surfaced as typed errors, every wait bounded, the process always gone afterwards.
final class PythonPeerTests: XCTestCase {
    private var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-peer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let dir = scratch!
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
    }

    private func script(_ name: String, _ source: String) throws -> URL {
        let url = scratch.appendingPathComponent(name)
        try source.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    private func isAlive(_ pid: Int32) -> Bool { kill(pid, 0) == 0 }

    func testNostrPeerAnswersInOrderAndReportsErrors() throws {
        let pid: Int32 = try PythonPeer.with(script: Fixtures.peerScript("nostr_peer.py")) { peer in
            XCTAssertEqual(peer.hello["peer"] as? String, "nostr-sdk")
            XCTAssertEqual(peer.hello["version"] as? String, "0.45.1")
            XCTAssertNoThrow(try peer.request("ping"))
            let keys = try peer.request("generate_keys")
            XCTAssertEqual(try keys.string("public_key").count, 64)
            XCTAssertThrowsError(try peer.request("no_such_op")) { error in
                guard case .failed(let op, let reason)? = error as? PythonPeer.PeerError else {
                    return XCTFail("unexpected \(error)")
                }
                XCTAssertEqual(op, "no_such_op")
                XCTAssertTrue(reason.contains("unknown op"), reason)
            }
            XCTAssertThrowsError(try peer.request("verify_event", ["event": "{not json"]))
            // Still serving after failures, and responses stay matched to requests.
            let again = try peer.request("public_key", ["secret_key": try keys.string("secret_key")])
            XCTAssertEqual(try again.string("public_key"), try keys.string("public_key"))
            return peer.processIdentifier
        }
        XCTAssertFalse(isAlive(pid), "peer still running after with {}")
    }

    func testSilentPeerTimesOutAndIsKilled() throws {
        let url = try script("silent.py", """
        import sys, time
        print('{"ok": true, "ready": true}', flush=True)
        time.sleep(120)
        """)
        let peer = try PythonPeer(script: url)
        addTeardownBlock { peer.terminate() }
        let started = Date()
        XCTAssertThrowsError(try peer.request("ping", timeout: 1)) { error in
            guard case .timedOut(let op, _, _)? = error as? PythonPeer.PeerError else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(op, "ping")
        }
        // Timeout (1 s) plus the bounded stdin-close and SIGTERM waits.
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
        XCTAssertFalse(isAlive(peer.processIdentifier))
        XCTAssertThrowsError(try peer.request("ping")) {
            XCTAssertEqual($0 as? PythonPeer.PeerError, .terminated)
        }
    }

    func testPeerThatDiesIsReportedWithItsStderr() throws {
        let url = try script("dies.py", """
        import sys
        print('{"ok": true, "ready": true}', flush=True)
        sys.stdin.readline()
        sys.stderr.write("peer gave up on purpose\\n")
        sys.exit(3)
        """)
        let peer = try PythonPeer(script: url)
        addTeardownBlock { peer.terminate() }
        XCTAssertThrowsError(try peer.request("ping", timeout: 20)) { error in
            guard case .exited(_, let status, let tail)? = error as? PythonPeer.PeerError else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(status, 3)
            XCTAssertTrue(tail.contains("gave up on purpose"), tail)
        }
    }

    func testPeerThatNeverBecomesReadyFailsStartup() throws {
        let url = try script("broken.py", "import no_such_module_for_burrow\n")
        XCTAssertThrowsError(try PythonPeer(script: url, readyTimeout: 20)) { error in
            guard case .exited(let op, _, let tail)? = error as? PythonPeer.PeerError else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(op, "startup")
            XCTAssertTrue(tail.contains("no_such_module_for_burrow"), tail)
        }
    }
}
