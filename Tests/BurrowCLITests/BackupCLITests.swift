import Foundation
import TestSupport
import XCTest

/// `burrow backup` through the real program (issue 25): the file it writes, what `show` and
/// `verify` say, a restore that brings DM contacts and their history back and re-handshakes,
/// and every damaged file refused with its code and nothing written.
final class BackupCLITests: XCTestCase {
    var root: URL!
    var relay: RelayProcess!
    var pass: String { root.appendingPathComponent("pass").path }
    var backupPass: String { root.appendingPathComponent("backup-pass").path }
    /// Fast Argon2id for tests: the defaults (64 MiB, 3 passes) are exercised by the bench.
    let kdf = ["--kdf-memory-mib", "8", "--kdf-passes", "1"]

    override func setUp() async throws {
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-backup-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "store passphrase".write(toFile: pass, atomically: true, encoding: .utf8)
        try "backup passphrase".write(toFile: backupPass, atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start()
    }

    override func tearDown() async throws {
        relay?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    func testRestoredContactsKeepTheirMarksAndHistoryAndMakeANewSession() throws {
        let alice = try BurrowHome.create(in: root, name: "alice", relay: relay.url, passphraseFile: pass)
        let carol = try BurrowHome.create(in: root, name: "carol", relay: relay.url, passphraseFile: pass)
        try alice.exchangeCards(with: carol, nicknames: ("Alice", "Carol"))
        let number = try XCTUnwrap(try carol.ok(["contact", "verify", "Alice"])["safety_number"] as? String)
        try alice.ok(["contact", "verify", "Carol", "--match", number])
        try alice.ok(["dm", "send", "Carol", "before the backup", "--timeout", "1"])
        _ = try carol.ok(["sync"])
        _ = try alice.ok(["sync"])
        try carol.ok(["dm", "send", "Alice", "reply before the backup"])
        _ = try alice.ok(["sync"])

        let file = root.appendingPathComponent("family.burrowbackup").path
        let created = try alice.ok(["backup", "create", file, "--backup-passphrase-file", backupPass] + kdf)
        XCTAssertEqual(created["verified"] as? Bool, true)
        XCTAssertEqual(created["contacts"] as? Int, 1)
        XCTAssertEqual(created["direct_messages"] as? Int, 2)
        var st = stat()
        XCTAssertEqual(stat(file, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600, "the backup is readable by its owner only")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.path).filter { $0.contains(".tmp-") }, [],
                       "no temporary file is left")
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: file))
        XCTAssertEqual(Array(bytes.prefix(16)), Array("BURROW_BACKUP_V1".utf8))
        XCTAssertNil(bytes.range(of: Data("before the backup".utf8)), "the history is sealed")

        // show: names and counts, no secret (the nsec never appears).
        let shown = try BurrowProcess.run(["backup", "show", file, "--backup-passphrase-file", backupPass, "--home", alice.path,
                                           "--passphrase-file", pass])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.contains("contact Carol"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("Argon2id 8 MiB × 1"), shown.stdout)
        XCTAssertFalse(shown.stdout.contains("nsec1"), "no secret in the output")

        // Restore on a new machine.
        let bob = BurrowHome(path: root.appendingPathComponent("restored").path, passphraseFile: pass)
        let restored = try bob.ok(["backup", "restore", file, "--backup-passphrase-file", backupPass, "--kdf-memory-mib", "8"])
        XCTAssertEqual(restored["npub"] as? String, try alice.ok(["whoami"])["npub"] as? String)
        XCTAssertEqual(try bob.errorCode(["backup", "restore", file, "--backup-passphrase-file", backupPass]), "already_initialized")
        let contact = try XCTUnwrap((try bob.ok(["contact", "list"])["contacts"] as? [[String: Any]])?.first)
        XCTAssertEqual(contact["name"] as? String, "Carol")
        XCTAssertEqual(contact["verified"] as? Bool, true, "the verification mark comes back")
        let history = try XCTUnwrap(try bob.ok(["dm", "read", "Carol"])["messages"] as? [[String: Any]])
        XCTAssertEqual(history.compactMap { $0["text"] as? String }, ["before the backup", "reply before the backup"])
        XCTAssertEqual(try bob.ok(["contact", "card"])["card"] as? String, try alice.ok(["contact", "card"])["card"] as? String,
                       "the same DM identity and card")

        // A new session: the first message handshakes again, and Carol reads it.
        let sent = try XCTUnwrap(try bob.ok(["dm", "send", "Carol", "from the new laptop", "--timeout", "1"])["message"] as? [String: Any])
        XCTAssertEqual(sent["status"] as? String, "queued", "no session came from the backup: a handshake goes first")
        _ = try carol.ok(["sync"])
        _ = try bob.ok(["sync"])
        let atCarol = try XCTUnwrap(try carol.ok(["dm", "read", "Alice", "--sync"])["messages"] as? [[String: Any]])
        XCTAssertEqual(atCarol.last?["text"] as? String, "from the new laptop")
        try carol.ok(["dm", "send", "Alice", "welcome back"])
        let atBob = try XCTUnwrap(try bob.ok(["dm", "read", "Carol", "--sync"])["messages"] as? [[String: Any]])
        XCTAssertEqual(atBob.last?["text"] as? String, "welcome back")
    }

    func testDamagedFilesAreRefusedAndNothingIsWritten() throws {
        let alice = try BurrowHome.create(in: root, name: "alice", relay: relay.url, passphraseFile: pass)
        let file = root.appendingPathComponent("a.backup").path
        try alice.ok(["backup", "create", file, "--backup-passphrase-file", backupPass, "--include", "identity"] + kdf)
        let good = try XCTUnwrap(FileManager.default.contents(atPath: file))
        let target = BurrowHome(path: root.appendingPathComponent("target").path, passphraseFile: pass)
        let wrong = root.appendingPathComponent("wrong-pass").path
        try "not it".write(toFile: wrong, atomically: true, encoding: .utf8)

        func restore(_ bytes: Data, passphrase: String? = nil) throws -> String? {
            let damaged = root.appendingPathComponent("damaged.backup").path
            try bytes.write(to: URL(fileURLWithPath: damaged))
            let code = try target.errorCode(["backup", "restore", damaged, "--backup-passphrase-file", passphrase ?? backupPass,
                                             "--kdf-memory-mib", "8"])
            XCTAssertFalse(FileManager.default.fileExists(atPath: target.path), "a refused restore leaves no home")
            return code
        }
        XCTAssertEqual(try restore(good, passphrase: wrong), "wrong_passphrase")
        XCTAssertEqual(try restore(good.prefix(50)), "backup_corrupt", "truncated in the header")
        XCTAssertEqual(try restore(good.dropLast(1)), "backup_corrupt", "truncated in the tag")
        XCTAssertEqual(try restore(Data("not a backup at all".utf8)), "backup_corrupt")
        var version = good
        version[17] = 2
        XCTAssertEqual(try restore(version), "backup_unsupported")
        var bomb = good
        bomb.replaceSubrange(22..<26, with: [0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertEqual(try restore(bomb), "backup_unsupported", "4 TiB of Argon2id memory is refused before any work")
        // One flipped bit in each header field, the body and the tag.
        for position in [0, 16, 19, 23, 29, 31, 45, 60, 89, 90, good.count / 2, good.count - 1] {
            var flipped = good
            flipped[position] ^= 0x01
            let code = try restore(flipped)
            XCTAssertTrue(["backup_corrupt", "wrong_passphrase", "backup_unsupported"].contains(code ?? ""), "byte \(position): \(code ?? "ok")")
        }
        XCTAssertEqual(try target.errorCode(["backup", "verify", root.appendingPathComponent("missing").path,
                                             "--backup-passphrase-file", backupPass]), "invalid_input")
        XCTAssertEqual(try alice.errorCode(["backup", "create", file, "--backup-passphrase-file", backupPass, "--kdf-memory-mib", "2048"]),
                       "invalid_input", "over 1 GiB of Argon2id memory is refused")
        XCTAssertEqual(try alice.errorCode(["backup", "create", file, "--backup-passphrase-file", backupPass, "--include", "photos"]),
                       "invalid_input")
        XCTAssertEqual(try FileManager.default.contents(atPath: file), good, "a refused create leaves the old backup in place")
    }
}
