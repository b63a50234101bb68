import Foundation
import TestSupport
import XCTest

/// `burrow passphrase change` under crashes (issue 25): killed at each failpoint and at random
/// instants, the home afterwards opens with the old or the new passphrase, and everything in it
/// is still there.
final class PassphraseChangeTests: SeededTestCase {
    override var defaultSeed: UInt64 { 0x9A55_0001 }
    var root: URL!
    var relay: RelayProcess!
    var oldPass: String { root.appendingPathComponent("old").path }
    var newPass: String { root.appendingPathComponent("new").path }

    override func setUp() async throws {
        try await super.setUp()
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-pass-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "the old passphrase".write(toFile: oldPass, atomically: true, encoding: .utf8)
        try "a new passphrase".write(toFile: newPass, atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start()
    }

    override func tearDown() async throws {
        relay?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// A home with a group, its chat and a DM card: what must survive every crash.
    private func makeHome() throws -> (home: BurrowHome, texts: [String], gid: String) {
        let home = try BurrowHome.create(in: root, name: "original", relay: relay.url, passphraseFile: oldPass)
        let group = try XCTUnwrap(try home.ok(["group", "create", "Family"])["group"] as? [String: Any])
        let gid = try XCTUnwrap(group["nostr_group_id"] as? String)
        let texts = (1...20).map { "message \($0)" }
        for text in texts { try home.ok(["chat", gid, text]) }
        _ = try home.ok(["contact", "card", "--nickname", "Me"])
        return (home, texts, gid)
    }

    private func copy(_ home: BurrowHome, as name: String) throws -> String {
        let target = root.appendingPathComponent(name).path
        try? FileManager.default.removeItem(atPath: target)
        try FileManager.default.copyItem(atPath: home.path, toPath: target)
        return target
    }

    /// Which passphrase opens `path` now, after checking the history is whole with it.
    private func opens(_ path: String, texts: [String], gid: String, line: UInt = #line) throws -> [String] {
        var working: [String] = []
        for (label, file) in [("old", oldPass), ("new", newPass)] {
            let home = BurrowHome(path: path, passphraseFile: file)
            let result = try home.run(["messages", gid])
            if result.status == 0 {
                let messages = try XCTUnwrap(try result.json()["messages"] as? [[String: Any]])
                XCTAssertEqual(messages.compactMap { $0["text"] as? String }, texts, "\(label) passphrase: the history is whole", line: line)
                working.append(label)
            } else {
                XCTAssertEqual(try result.json()["error"].flatMap { ($0 as? [String: Any])?["code"] as? String }, "wrong_passphrase",
                               "\(label): \(result.stdout)", line: line)
            }
        }
        return working
    }

    func testKilledAtEachFailpointTheOldOrTheNewPassphraseOpensTheWholeStore() throws {
        XCTAssertEqual(Set(try BurrowProcess.failpointNames().filter { $0.hasPrefix("passphrase.") }),
                       ["passphrase.copied", "passphrase.pending", "passphrase.swapped"], "each one is crashed at below")
        let (home, texts, gid) = try makeHome()
        let change = ["passphrase", "change", "--new-passphrase-file", newPass]
        func crashed(at failpoint: String, name: String) throws -> String {
            let path = try copy(home, as: name)
            let result = try BurrowHome(path: path, passphraseFile: oldPass).run(change, environment: ["BURROW_TEST_FAILPOINT": failpoint],
                                                                                 executable: BurrowProcess.failpointProbe)
            XCTAssertEqual(result.status, 86, "died at \(failpoint): \(result.stdout) \(result.stderr)")
            return path
        }
        // The copy is made, the header not yet changed: only the old passphrase, and the copy goes.
        let copied = try crashed(at: "passphrase.copied", name: "copied")
        XCTAssertEqual(try opens(copied, texts: texts, gid: gid), ["old"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: copied + "/store.db.next"), "the abandoned copy is removed")

        // The change is recorded and the copy waits: the old passphrase abandons it…
        let pendingOld = try crashed(at: "passphrase.pending", name: "pending-old")
        XCTAssertEqual(try BurrowHome(path: pendingOld, passphraseFile: oldPass).run(["messages", gid]).status, 0)
        XCTAssertEqual(try opens(pendingOld, texts: texts, gid: gid), ["old"])
        // …and the new one finishes it.
        let pendingNew = try crashed(at: "passphrase.pending", name: "pending-new")
        XCTAssertEqual(try BurrowHome(path: pendingNew, passphraseFile: newPass).run(["messages", gid]).status, 0)
        XCTAssertEqual(try opens(pendingNew, texts: texts, gid: gid), ["new"])

        // The copy replaced the database: the new passphrase opens it; the old one is told why not.
        let swapped = try crashed(at: "passphrase.swapped", name: "swapped")
        let refused = try BurrowHome(path: swapped, passphraseFile: oldPass).run(["whoami"])
        XCTAssertTrue(refused.stdout.contains("interrupted"), refused.stdout)
        XCTAssertEqual(try opens(swapped, texts: texts, gid: gid), ["new"])

        // Uninterrupted: the new passphrase only, and the home keeps working.
        let done = try copy(home, as: "done")
        XCTAssertEqual(try BurrowHome(path: done, passphraseFile: oldPass).run(change).status, 0)
        XCTAssertEqual(try opens(done, texts: texts, gid: gid), ["new"])
        XCTAssertEqual(try BurrowHome(path: done, passphraseFile: newPass).run(["chat", gid, "after"]).status, 0)
        XCTAssertEqual(try BurrowHome(path: done, passphraseFile: oldPass).errorCode(["passphrase", "change", "--new-passphrase-file", oldPass]),
                       "wrong_passphrase", "changing it needs the current passphrase")
    }

    func testKilledAtRandomInstantsTheOldOrTheNewPassphraseOpensTheWholeStore() async throws {
        let (home, texts, gid) = try makeHome()
        var rng = SplitMix64(seed: seed)
        var outcomes: [String: Int] = [:]
        // Kill instants spread over one change, as timed here.
        let timed = try copy(home, as: "timed")
        let started = ContinuousClock.now
        XCTAssertEqual(try BurrowHome(path: timed, passphraseFile: oldPass).run(["passphrase", "change", "--new-passphrase-file", newPass]).status, 0)
        let span = Int((ContinuousClock.now - started).components.attoseconds / 1_000_000_000_000_000
                       + (ContinuousClock.now - started).components.seconds * 1000)
        for round in 0..<24 {
            let path = try copy(home, as: "round-\(round)")
            let process = try PeerProcess(executable: BurrowProcess.binary, arguments: [
                "passphrase", "change", "--new-passphrase-file", newPass, "--home", path, "--passphrase-file", oldPass, "--json"])
            // Most of a change is starting up and two Argon2id runs: the instants cluster on
            // its second half, where the copy, the header and the swap happen.
            try await Task.sleep(for: .milliseconds(Int.random(in: (span / 2)...max(span / 2 + 1, span * 3 / 2), using: &rng)))
            process.kill()
            let working = try opens(path, texts: texts, gid: gid)
            XCTAssertEqual(working.count, 1, "round \(round): exactly one passphrase opens it (\(working))")
            outcomes[working.joined(), default: 0] += 1
        }
        print("passphrase change (\(span) ms) killed at random: \(outcomes)")
        XCTAssertEqual(outcomes.values.reduce(0, +), 24)
    }
}
