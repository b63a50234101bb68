import Foundation
import TestSupport
import XCTest

/// Docs/getting-started.md is followed verbatim (issue 22, item 11): `scripts/getting-started.sh`
/// runs every `bash` block of the guide, in order, with the built `burrow`; the walk must finish
/// and a person must read what the guide promises (names, "sent to Family", the map's path, the
/// DM, the re-added member's old messages).
final class GettingStartedTests: XCTestCase {
    func testTheGuideWorksAsWritten() throws {
        let (status, transcript) = try ShellScript.run(Fixtures.repositoryRoot.appendingPathComponent("scripts/getting-started.sh"),
                                                       arguments: [BurrowProcess.binary.deletingLastPathComponent().path])
        XCTAssertEqual(status, 0, "the guide's walk failed:\n\(transcript.suffix(3000))")
        let said = transcript.split(separator: "\n").filter { !$0.hasPrefix("+") }.map(String.init)
        func shows(_ text: String, _ why: String) { XCTAssertTrue(said.contains { $0.contains(text) }, "\(why): no line with \(text)") }
        shows("burrow 0.", "--version")
        shows("\"Family\" from Alice", "the invite names the inviter")
        shows("members        Alice, Bob", "members by name")
        shows("sent to Family", "chat in plain words")
        shows("Bob: Hi Mum, home by six", "the chat arrived")
        shows("Alice: 51.50070, -0.12460 ±15 m, battery 80%", "a location by name")
        shows("map written to /", "the map's path")
        shows("web: http://127.0.0.1:8040/?token=", "the page's one-time link")
        shows("← Bob (unverified): Can you pick me up?", "the DM arrived")
        shows("members        Alice\n".trimmingCharacters(in: .newlines), "Bob's removal completed")
        shows("wrote post", "a feed post in plain words")
        shows("Alice: Picnic at the lake on Sunday? Bring a blanket.", "Bob reads Alice's feed by name")
        shows("Alice: is now called Alice", "her feed name")
        XCTAssertFalse(said.contains { $0.contains("Alice: Buy bread") }, "the journal stays Alice's")
        shows("and verified.", "the backup was read back")
        shows("contact Bob", "the backup names what it holds")
        shows("restored group Family: resumed", "the restored group caught up and replaced its keys")
        shows("Passphrase changed", "the passphrase change")
        shows("Locked. The node stays connected", "the lock")
        shows("Unlocked", "the unlock")
        XCTAssertEqual(said.filter { $0.contains("invite ") && $0.contains("\"Family\"") }.count, 2, "invited, then invited back")
        XCTAssertFalse(said.contains { $0.contains("sync skipped") }, "nothing refused along the way")
    }
}
