import Foundation
import TestSupport
import XCTest

/// `burrow lock`, `burrow unlock` and `run --lock-after` through the real program (issue 25):
/// a locked `run` answers `locked`, its identity key is gone from its memory, what arrives
/// meanwhile is processed at the unlock and nothing is lost.
final class LockTests: XCTestCase {
    var root: URL!
    var relay: RelayProcess!
    var pass: String { root.appendingPathComponent("pass").path }

    override func setUp() async throws {
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-lock-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "lock passphrase".write(toFile: pass, atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start()
    }

    override func tearDown() async throws {
        relay?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// Whether the 32 bytes of `secret` appear anywhere in the writable memory of `pid`.
    private func memory(of pid: Int32, contains secret: [UInt8]) throws -> Bool {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        guard let mem = FileHandle(forReadingAtPath: "/proc/\(pid)/mem") else { throw XCTSkip("cannot read /proc/\(pid)/mem") }
        defer { try? mem.close() }
        let needle = Data(secret)
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 2, fields[1].hasPrefix("rw") else { continue }
            let range = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard range.count == 2, range[1] > range[0], range[1] - range[0] < 1 << 31 else { continue }
            try? mem.seek(toOffset: range[0])
            guard let chunk = try? mem.read(upToCount: Int(range[1] - range[0])) else { continue }
            if chunk.range(of: needle) != nil { return true }
        }
        return false
    }

    func testALockedRunAnswersLockedForgetsItsKeyAndCatchesUpAtTheUnlock() async throws {
        // Alice's identity key is one the test knows, to look for it in her node's memory.
        let secret = (0..<32).map { UInt8(truncatingIfNeeded: 0x5A &+ $0 &* 7) }
        let nsecFile = root.appendingPathComponent("alice.key").path
        try hex(secret).write(toFile: nsecFile, atomically: true, encoding: .utf8)
        let alice = BurrowHome(path: root.appendingPathComponent("alice").path, passphraseFile: pass)
        try alice.ok(["init", "--kdf-memory-mib", "8", "--nsec-file", nsecFile])
        try alice.ok(["relay", "add", relay.url])
        try alice.ok(["keypackage", "publish"])
        let bob = try BurrowHome.create(in: root, name: "bob", relay: relay.url, passphraseFile: pass)
        try alice.exchangeCards(with: bob, nicknames: ("Alice", "Bob"))
        let group = try XCTUnwrap(try alice.ok(["group", "create", "Family", "--invite", try bob.pubkey])["group"] as? [String: Any])
        let gid = try XCTUnwrap(group["nostr_group_id"] as? String)
        XCTAssertEqual(try bob.acceptInvites().count, 1)

        let run = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", alice.path, "--passphrase-file", pass, "--json", "--timeout", "5"])
        defer { run.stop() }
        _ = try await run.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))
        // A DM session first, so the locked node later has frames of a known session to hold.
        try bob.ok(["dm", "send", "Alice", "before the lock", "--timeout", "15"])
        _ = try await run.waitForLine(containing: "before the lock", timeout: .seconds(20))
        let pid = run.pid
        XCTAssertTrue(try memory(of: pid, contains: secret), "the unlocked node holds its key (the probe finds it)")

        let locked = try alice.ok(["lock"])
        XCTAssertEqual(locked["locked"] as? Bool, true)
        _ = try await run.waitForLine(containing: #""type":"lock","locked":true"#, timeout: .seconds(10))
        XCTAssertEqual(try alice.errorCode(["whoami"]), "locked")
        XCTAssertEqual(try alice.errorCode(["chat", gid, "while locked"]), "locked")
        XCTAssertFalse(try memory(of: pid, contains: secret), "the identity key is wiped from the locked node's memory")

        // While locked, Bob writes: nothing is processed, nothing is lost.
        try bob.ok(["chat", gid, "group message while locked"])
        try bob.ok(["dm", "send", "Alice", "dm while locked", "--timeout", "2"])
        try await Task.sleep(for: .seconds(3))
        XCTAssertFalse(run.lines.contains { $0.contains("while locked") }, "a locked node processes nothing")

        let wrong = root.appendingPathComponent("wrong").path
        try "not it".write(toFile: wrong, atomically: true, encoding: .utf8)
        XCTAssertEqual(try BurrowHome(path: alice.path, passphraseFile: wrong).errorCode(["unlock"]), "wrong_passphrase")
        XCTAssertEqual(try alice.errorCode(["whoami"]), "locked", "still locked after a wrong passphrase")

        XCTAssertEqual(try alice.ok(["unlock"])["locked"] as? Bool, false)
        _ = try await run.waitForLine(containing: #""type":"lock","locked":false"#, timeout: .seconds(10))
        _ = try await run.waitForLine(containing: "group message while locked", timeout: .seconds(20))
        _ = try await run.waitForLine(containing: "dm while locked", timeout: .seconds(20))
        XCTAssertEqual(try alice.messages(gid).last?["text"] as? String, "group message while locked")
        try alice.ok(["chat", gid, "unlocked and writing"])
        try bob.ok(["sync"])
        XCTAssertEqual(try bob.messages(gid).last?["text"] as? String, "unlocked and writing")
    }

    func testRunLocksItselfAfterAQuietSpell() async throws {
        let alice = try BurrowHome.create(in: root, name: "alice", relay: relay.url, passphraseFile: pass)
        XCTAssertEqual(try alice.errorCode(["run", "--lock-after", "5s"]), "invalid_input", "under 10 s is refused")
        XCTAssertEqual((try alice.ok(["lock"]))["running"] as? Bool, false, "a home at rest is locked already")
        let run = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", alice.path, "--passphrase-file", pass, "--json", "--timeout", "5", "--lock-after", "10s"])
        defer { run.stop() }
        _ = try await run.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))
        let started = ContinuousClock.now
        let line = try await run.waitForLine(containing: #""type":"lock""#, timeout: .seconds(30))
        XCTAssertTrue(line.contains(#""reason":"idle""#), line)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .seconds(7), "not before the quiet spell")
        XCTAssertEqual(try alice.errorCode(["whoami"]), "locked")
        try alice.ok(["unlock"])
        XCTAssertEqual(try alice.ok(["whoami"])["pubkey"] as? String, try alice.pubkey)
    }
}
