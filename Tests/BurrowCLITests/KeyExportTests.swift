import Foundation
import TestSupport
import XCTest

/// `key export --nip49` and `init --import ncryptsec1…` (issue 25) against rust-nostr's NIP-49
/// (nostr-sdk in the interop venv): what Burrow exports, rust-nostr opens, and the reverse.
final class KeyExportTests: XCTestCase {
    var root: URL!
    var pass: String { root.appendingPathComponent("pass").path }
    var keyPassword: String { root.appendingPathComponent("key-password").path }
    static let secretHex = "3501454135014541350145413501453fefb02227e449e57cf4d3a3ce05378683"

    override func setUp() async throws {
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-key-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "store passphrase".write(toFile: pass, atomically: true, encoding: .utf8)
        try "paper backup ü\n".write(toFile: keyPassword, atomically: true, encoding: .utf8)
    }

    override func tearDown() async throws {
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    private func burrow(_ home: String, _ args: [String]) throws -> BurrowResult {
        try BurrowProcess.run(args + ["--home", root.appendingPathComponent(home).path, "--passphrase-file", pass, "--json"])
    }

    func testAnExportedKeyOpensInRustNostrAndTheirsImportsHere() throws {
        let nsec = root.appendingPathComponent("nsec")
        try Self.secretHex.write(to: nsec, atomically: true, encoding: .utf8)
        XCTAssertEqual(try burrow("alice", ["init", "--kdf-memory-mib", "8", "--nsec-file", nsec.path]).status, 0)
        let exported = try burrow("alice", ["key", "export", "--nip49", "--key-password-file", keyPassword]).json()
        let ncryptsec = try XCTUnwrap(exported["ncryptsec"] as? String)
        XCTAssertTrue(ncryptsec.hasPrefix("ncryptsec1"))
        XCTAssertEqual(exported["log_n"] as? Int, 16)
        XCTAssertFalse(ncryptsec.contains(Self.secretHex))

        let opened = try XCTUnwrap(VenvPython.run("""
            import json, sys, nostr_sdk
            d = json.load(sys.stdin)
            key = nostr_sdk.EncryptedSecretKey.from_bech32(d["ncryptsec"]).decrypt(d["password"])
            mine = nostr_sdk.SecretKey.parse(d["secret"]).encrypt(d["password"]).to_bech32()
            print(json.dumps({"hex": key.to_hex(), "theirs": mine}))
            """, input: ["ncryptsec": ncryptsec, "password": "paper backup ü", "secret": Self.secretHex]) as? [String: Any])
        XCTAssertEqual(opened["hex"] as? String, Self.secretHex, "rust-nostr opens Burrow's ncryptsec")

        // rust-nostr's ncryptsec imported into a new home: the same identity.
        let theirs = try XCTUnwrap(opened["theirs"] as? String)
        let imported = try burrow("bob", ["init", "--kdf-memory-mib", "8", "--import", theirs, "--key-password-file", keyPassword])
        XCTAssertEqual(imported.status, 0, imported.stdout + imported.stderr)
        XCTAssertEqual(try burrow("bob", ["whoami"]).json()["pubkey"] as? String, try burrow("alice", ["whoami"]).json()["pubkey"] as? String)
    }

    func testWrongPasswordsAndPlainKeysOnTheCommandLineAreRefused() throws {
        XCTAssertEqual(try burrow("alice", ["init", "--kdf-memory-mib", "8"]).status, 0)
        let ncryptsec = try XCTUnwrap(try burrow("alice", ["key", "export", "--nip49", "--key-password-file", keyPassword]).json()["ncryptsec"] as? String)
        let wrong = root.appendingPathComponent("wrong")
        try "not it".write(to: wrong, atomically: true, encoding: .utf8)
        let refused = try burrow("bob", ["init", "--kdf-memory-mib", "8", "--import", ncryptsec, "--key-password-file", wrong.path])
        XCTAssertEqual(((try? refused.json())?["error"] as? [String: Any])?["code"] as? String, "wrong_passphrase")
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("bob/store.db").path), "nothing created")
        let plain = try burrow("bob", ["init", "--kdf-memory-mib", "8", "--import", "nsec1" + String(repeating: "q", count: 58)])
        XCTAssertEqual(((try? plain.json())?["error"] as? [String: Any])?["code"] as? String, "invalid_input")
        XCTAssertTrue(plain.stdout.contains("--nsec-file"), plain.stdout)
        // Without --nip49 nothing is exported: the key never leaves in the clear.
        XCTAssertNotEqual(try burrow("alice", ["key", "export"]).status, 0)
    }
}
