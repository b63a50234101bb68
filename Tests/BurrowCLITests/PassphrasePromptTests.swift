import Foundation
import TestSupport
import XCTest

/// With `burrow run` going, a command at a terminal asks for the passphrase once (issue 22,
/// item 6): it finds the home busy and forwards with the passphrase it already has. Run under
/// util-linux `script`, which gives the command a real pseudo-terminal.
final class PassphrasePromptTests: XCTestCase {
    func testACommandForwardedToRunAsksForThePassphraseOnce() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-prompt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let passFile = root.appendingPathComponent("pass")
        try "prompt test passphrase".write(to: passFile, atomically: true, encoding: .utf8)
        let home = root.appendingPathComponent("home").path
        let relay = try await RelayProcess.start()
        defer { relay.stop() }
        for args in [["init", "--kdf-memory-mib", "8"], ["relay", "add", relay.url]] {
            let r = try BurrowProcess.run(args + ["--home", home, "--passphrase-file", passFile.path])
            XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        }
        let run = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", home, "--passphrase-file", passFile.path, "--json", "--timeout", "5"])
        defer { run.stop() }
        _ = try await run.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))

        // The answer is typed a moment later, once the prompt is up (the prompt flushes input
        // typed before it, as a terminal should).
        let command = "\(BurrowProcess.binary.path) whoami --home \(home)"
        let atTerminal = try BurrowProcess.run(
            ["-c", "(sleep 2; printf 'prompt test passphrase\\n'; sleep 5) | /usr/bin/script -qec '\(command)' /dev/null"],
            executable: URL(fileURLWithPath: "/bin/sh"))
        XCTAssertEqual(atTerminal.status, 0, atTerminal.stdout + atTerminal.stderr)
        let transcript = atTerminal.stdout + atTerminal.stderr
        XCTAssertEqual(transcript.components(separatedBy: "Passphrase:").count - 1, 1, "asked once: \(transcript)")
        XCTAssertTrue(transcript.contains("npub1"), transcript)

        // No answer at all: the contract's error in words, not a Swift value.
        let unanswered = try BurrowProcess.run(["-c", "(sleep 2; printf '\\n'; sleep 3) | /usr/bin/script -qec '\(command)' /dev/null"],
                                               executable: URL(fileURLWithPath: "/bin/sh"))
        let said = unanswered.stdout + unanswered.stderr
        XCTAssertTrue(said.contains("passphrase"), said)
        XCTAssertFalse(said.contains("CLIError("), said)
    }

    /// At a terminal, a wait over two seconds shows "waiting for the relays… N s" on stderr,
    /// erased when it ends; with `--json` (or no terminal) nothing is shown (issue 22, item 7).
    func testLongWaitsShowProgressAtATerminal() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-wait-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let passFile = root.appendingPathComponent("pass")
        try "wait test passphrase".write(to: passFile, atomically: true, encoding: .utf8)
        let home = root.appendingPathComponent("home").path
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        for args in [["init", "--kdf-memory-mib", "8"], ["relay", "add", "ws://127.0.0.1:\(blackhole.port)"]] {
            let r = try BurrowProcess.run(args + ["--home", home, "--passphrase-file", passFile.path])
            XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        }
        let command = "\(BurrowProcess.binary.path) sync --timeout 4 --home \(home) --passphrase-file \(passFile.path)"
        let atTerminal = try BurrowProcess.run(["-c", "/usr/bin/script -qec '\(command)' /dev/null"], executable: URL(fileURLWithPath: "/bin/sh"))
        let transcript = atTerminal.stdout + atTerminal.stderr
        XCTAssertTrue(transcript.contains("waiting for the relays… 2 s"), transcript)
        XCTAssertTrue(transcript.contains("\u{1B}[K"), "the line is erased when the wait ends")
        let piped = try BurrowProcess.run(["sync", "--timeout", "4", "--home", home, "--passphrase-file", passFile.path])
        XCTAssertFalse((piped.stdout + piped.stderr).contains("waiting for the relays…"), "not at a terminal")
    }
}
