import Nostr
@testable import Node
import TestSupport
import XCTest

/// Issue 22, item 3, and its bound: `run` keeps the live kind-0 profiles of the people it asked
/// for (members of our groups, inviters, ourselves) and nobody else's, whatever a relay sends.
final class LiveProfileTests: NodeRelayTestCase {
    func testOnlyTheProfilesRunAskedForAreKept() async throws {
        let alice = try node(), bob = try node()
        let view = try await group("Family", by: alice, with: [bob])
        _ = try bob.liveFilters()  // what run subscribes to: the people it shows
        var rng = SystemRandomNumberGenerator()
        let now = Int64(Date().timeIntervalSince1970)
        let aliceKeys = alice.keys
        let named = try Event.sign(kind: 0, content: #"{"name":"Mum"}"#, createdAt: now, keys: aliceKeys, rng: &rng)
        _ = await bob.handleLive(named, timeout: timeout)
        let kept = try await bob.profiles.profile(alice.publicKey.hex, sync: false, timeout: timeout)
        XCTAssertEqual(kept.name, "Mum")
        XCTAssertTrue(try bob.groups.group(view.nostrGroupID).memberNames[alice.publicKey.hex] == "Mum")

        // A relay pushing strangers' profiles stores none of them.
        for i in 0..<50 {
            let stranger = Keys.generate(using: &rng)
            let event = try Event.sign(kind: 0, content: #"{"name":"stranger \#(i)"}"#, createdAt: now, keys: stranger, rng: &rng)
            _ = await bob.handleLive(event, timeout: timeout)
            let refused = try await bob.profiles.profile(stranger.publicKey.hex, sync: false, timeout: timeout)
            XCTAssertNil(refused.updatedAt)
        }
    }
}
