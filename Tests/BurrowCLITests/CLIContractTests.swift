import Foundation
import TestSupport
import XCTest

/// The `burrow` command-line contract (Docs/cli.md) exercised through the real program:
/// JSON shapes, error codes and exit codes.
final class CLIContractTests: XCTestCase {
    var home: URL!
    var passFile: URL!

    override func setUpWithError() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-cli-\(UUID().uuidString)")
        passFile = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-pass-\(UUID().uuidString)")
        try "correct horse battery staple\n".write(to: passFile, atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: home)
        try? FileManager.default.removeItem(at: passFile)
    }

    func burrow(_ args: [String], env: [String: String] = [:], stdin: String? = nil) throws -> BurrowResult {
        try BurrowProcess.run(args, environment: env, stdin: stdin)
    }

    func initHome() throws -> [String: Any] {
        let r = try burrow(["init", "--home", home.path, "--passphrase-file", passFile.path, "--kdf-memory-mib", "8", "--json"])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        return try r.json()
    }

    func testInitAndWhoamiReportTheSameIdentity() throws {
        let created = try initHome()
        XCTAssertEqual(created["ok"] as? Bool, true)
        let pubkey = try XCTUnwrap(created["pubkey"] as? String)
        XCTAssertEqual(pubkey.count, 64)
        XCTAssertEqual(pubkey, pubkey.lowercased())
        XCTAssertTrue((created["npub"] as? String)?.hasPrefix("npub1") ?? false)
        XCTAssertEqual(created["relays"] as? [String], ["ws://127.0.0.1:7447"], "the embedded relay until one is added")

        // Global options after or before the subcommand, passphrase from the environment.
        let who = try burrow(["--json", "--home", home.path, "whoami"], env: ["BURROW_PASSPHRASE": "correct horse battery staple"])
        XCTAssertEqual(who.status, 0, who.stderr)
        let whoJSON = try who.json()
        XCTAssertEqual(whoJSON["pubkey"] as? String, pubkey)
        XCTAssertEqual(whoJSON["npub"] as? String, created["npub"] as? String)

        // Home directory 0700, files 0600.
        let attrs = try FileManager.default.attributesOfItem(atPath: home.path)
        XCTAssertEqual((attrs[.posixPermissions] as? NSNumber)?.intValue, 0o700)
        for file in try FileManager.default.contentsOfDirectory(atPath: home.path) {
            let a = try FileManager.default.attributesOfItem(atPath: home.appendingPathComponent(file).path)
            if (a[.type] as? FileAttributeType) == .typeRegular {
                XCTAssertEqual((a[.posixPermissions] as? NSNumber)?.intValue, 0o600, file)
            }
        }
    }

    /// `burrow --version` (issue 22, item 11): the version and the protocols, no home needed.
    func testVersion() throws {
        let plain = try burrow(["--version"])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertTrue(plain.stdout.hasPrefix("burrow 0."), plain.stdout)
        XCTAssertTrue(plain.stdout.contains("MDK 0.8.0"), plain.stdout)
        let json = try burrow(["--version", "--json"])
        XCTAssertEqual(json.status, 0)
        let object = try json.json()
        XCTAssertEqual(object["ok"] as? Bool, true)
        XCTAssertEqual((object["version"] as? String).map { plain.stdout.contains($0) }, true)
    }

    func testInitImportsAnNsecFromStdinAndFromAFile() throws {
        // BIP-340 vector 1's secret key; its x-only public key is known.
        let secretHex = "b7e151628aed2a6abf7158809cf4f3c762e7160f38b4da56a784d9045190cfef"
        let expected = "dff1d77f2a671c5f36183726db2341be58feae1da2deced843240f7b502ba659"
        let r = try burrow(["init", "--home", home.path, "--passphrase-file", passFile.path, "--kdf-memory-mib", "8", "--nsec-stdin", "--json"], stdin: secretHex + "\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try r.json()["pubkey"] as? String, expected)

        let other = home.appendingPathComponent("other")
        let nsecFile = FileManager.default.temporaryDirectory.appendingPathComponent("nsec-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: nsecFile) }
        // Export through whoami's npub round trip is not possible for nsec; use hex in a file.
        try secretHex.write(to: nsecFile, atomically: true, encoding: .utf8)
        let r2 = try burrow(["init", "--home", other.path, "--passphrase-file", passFile.path, "--kdf-memory-mib", "8", "--nsec-file", nsecFile.path, "--json"])
        XCTAssertEqual(r2.status, 0, r2.stderr)
        XCTAssertEqual(try r2.json()["pubkey"] as? String, expected)
    }

    func testErrorCodesAndExitStatuses() throws {
        // Not initialized.
        var r = try burrow(["whoami", "--home", home.path, "--passphrase-file", passFile.path, "--json"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(try code(r), "not_initialized")

        _ = try initHome()

        // Already initialized.
        r = try burrow(["init", "--home", home.path, "--passphrase-file", passFile.path, "--kdf-memory-mib", "8", "--json"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(try code(r), "already_initialized")

        // Wrong passphrase.
        r = try burrow(["whoami", "--home", home.path, "--json"], env: ["BURROW_PASSPHRASE": "wrong"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(try code(r), "wrong_passphrase")
        XCTAssertFalse(r.stdout.contains("wrong\""), "the passphrase must never be echoed")

        // No passphrase and no TTY.
        r = try burrow(["whoami", "--home", home.path, "--json"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(try code(r), "passphrase_required")

        // Usage errors exit 2 and still print one JSON document with --json.
        r = try burrow(["whoami", "--no-such-option", "--json"])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(try code(r), "usage")
        r = try burrow(["relay", "add", "--json"])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(try code(r), "usage")

        // Invalid input.
        r = try burrow(["relay", "add", "http://not-a-relay", "--home", home.path, "--passphrase-file", passFile.path, "--json"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(try code(r), "invalid_input")
    }

    func testRelayAddRemoveList() throws {
        _ = try initHome()
        let common = ["--home", home.path, "--passphrase-file", passFile.path, "--json"]
        var r = try burrow(["relay", "add", "wss://Relay.Example.com/", "ws://127.0.0.1:7447"] + common)
        XCTAssertEqual(r.status, 0, r.stdout)
        XCTAssertEqual(Set(try r.json()["relays"] as? [String] ?? []), ["wss://relay.example.com", "ws://127.0.0.1:7447"])
        r = try burrow(["relay", "add", "wss://relay.example.com"] + common)  // idempotent
        XCTAssertEqual((try r.json()["relays"] as? [String])?.count, 2)
        r = try burrow(["relay", "remove", "wss://relay.example.com"] + common)
        XCTAssertEqual(try r.json()["relays"] as? [String], ["ws://127.0.0.1:7447"])
        r = try burrow(["relay", "remove", "wss://relay.example.com"] + common)
        XCTAssertEqual(try code(r), "invalid_input")
        r = try burrow(["relay", "list"] + common)
        XCTAssertEqual(try r.json()["relays"] as? [String], ["ws://127.0.0.1:7447"])
    }

    func testConformanceRunnersPrintTheSummaryLast() throws {
        var r = try burrow(["conformance", "bip340", Fixtures.url("bip340/test-vectors.csv").path])
        XCTAssertEqual(r.status, 0, r.stdout)
        XCTAssertEqual(r.stdout.split(separator: "\n").last, "19 passed, 0 failed")
        r = try burrow(["conformance", "nip44", Fixtures.url("nip44/nip44.vectors.json").path])
        XCTAssertEqual(r.status, 0, r.stdout)
        XCTAssertEqual(r.stdout.split(separator: "\n").last, "128 passed, 0 failed")

        r = try burrow(["conformance", "mls", "tree-math", Fixtures.url("mls/tree-math.json").path])
        XCTAssertEqual(r.status, 0, r.stdout)
        XCTAssertEqual(r.stdout.split(separator: "\n").last, "10 passed, 0 failed")
        r = try burrow(["conformance", "mls", "no-such-test", Fixtures.url("mls/tree-math.json").path])
        XCTAssertEqual(r.status, 1)

        // A damaged copy: failures are counted and the exit status is 1.
        let damaged = FileManager.default.temporaryDirectory.appendingPathComponent("bip340-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: damaged) }
        var csv = try String(contentsOf: Fixtures.url("bip340/test-vectors.csv"), encoding: .utf8)
        csv = csv.replacingOccurrences(of: ",TRUE,", with: ",FALSE,")
        try csv.write(to: damaged, atomically: true, encoding: .utf8)
        r = try burrow(["conformance", "bip340", damaged.path])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stdout.split(separator: "\n").last, "10 passed, 9 failed")

        // A file with no case at all (the header only, an empty JSON list) proves nothing: exit 1.
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("empty-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: empty) }
        try (csv.split(whereSeparator: \.isNewline).first.map(String.init) ?? "").write(to: empty, atomically: true, encoding: .utf8)
        r = try burrow(["conformance", "bip340", empty.path])
        XCTAssertEqual(r.status, 1, r.stdout)
        XCTAssertEqual(r.stdout.split(separator: "\n").last, "0 passed, 0 failed")
        let emptyList = FileManager.default.temporaryDirectory.appendingPathComponent("empty-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: emptyList) }
        try "[]".write(to: emptyList, atomically: true, encoding: .utf8)
        r = try burrow(["conformance", "mls", "tree-math", emptyList.path, "--json"])
        XCTAssertEqual(r.status, 1, r.stdout)
        XCTAssertEqual(try r.json()["ok"] as? Bool, false)
        XCTAssertEqual(try r.json()["passed"] as? Int, 0)
    }

    /// The real `burrow` never arms a failpoint: with BURROW_TEST_FAILPOINT set it runs to its
    /// end, while the test build's probe (the same code) dies there with status 86.
    func testReleaseBurrowIgnoresTestFailpoints() throws {
        _ = try initHome()
        // A relay nobody serves (port 9, discard): the default one may be up in another test's run.
        let added = try burrow(["relay", "add", "ws://127.0.0.1:9", "--home", home.path, "--passphrase-file", passFile.path, "--json"])
        XCTAssertEqual(added.status, 0, added.stdout + added.stderr)
        var r = try BurrowProcess.run(["keypackage", "publish", "--home", home.path, "--passphrase-file", passFile.path, "--json",
                                   "--timeout", "1"], environment: ["BURROW_TEST_FAILPOINT": "keypackage.stored"])
        XCTAssertNotEqual(r.status, 86, "the real burrow died at a failpoint")
        XCTAssertEqual(try code(r), "relay_unreachable", "it went on past the store to the (absent) relay")
        r = try BurrowProcess.run(["keypackage", "publish", "--home", home.path, "--passphrase-file", passFile.path, "--json",
                                   "--timeout", "1"], environment: ["BURROW_TEST_FAILPOINT": "keypackage.stored"],
                                  executable: BurrowProcess.failpointProbe)
        XCTAssertEqual(r.status, 86, "the probe dies at the armed failpoint")
    }

    private func code(_ r: BurrowResult) throws -> String? {
        let json = try r.json()
        XCTAssertEqual(json["ok"] as? Bool, false)
        return (json["error"] as? [String: Any])?["code"] as? String
    }
}
