import Marmot
import Nostr
import XCTest
import TestSupport

final class KeyPackageRelayListTests: XCTestCase {
    func testBuildAndParse() throws {
        var rng = SplitMix64(seed: 10051)
        let keys = Keys.generate(using: &rng)
        let relays = [try RelayURL("wss://one.example"), try RelayURL("wss://Two.Example/"), try RelayURL("wss://one.example/")]
        let event = try KeyPackageRelayList.sign(relays: relays, keys: keys, createdAt: 1_800_000_000, rng: &rng)
        XCTAssertEqual(event.kind, 10051)
        XCTAssertEqual(event.content, "")
        XCTAssertEqual(event.tags, [["relay", "wss://one.example"], ["relay", "wss://two.example/"]])
        XCTAssertNoThrow(try event.unverified.verified())

        let list = try KeyPackageRelayList(event)
        XCTAssertEqual(list.author, keys.publicKey)
        XCTAssertEqual(list.createdAt, 1_800_000_000)
        XCTAssertEqual(list.relays.map(\.string), ["wss://one.example", "wss://two.example/"])
    }

    /// Like White Noise: other tags and unparseable URLs are skipped, duplicates collapse,
    /// an empty list is valid.
    func testLenientParse() throws {
        var rng = SplitMix64(seed: 1)
        let keys = Keys.generate(using: &rng)
        let event = try Event.sign(kind: 10051, content: "", tags: [
            ["relay", "wss://a.example"], ["r", "wss://b.example"], ["relay"], ["relay", "https://c.example"],
            ["relay", "WSS://A.EXAMPLE"], ["relay", "ws://d.example:8080", "read"],
        ], createdAt: 1, keys: keys, rng: &rng)
        XCTAssertEqual(try KeyPackageRelayList(event).relays.map(\.string), ["wss://a.example", "ws://d.example:8080"])

        let empty = try Event.sign(kind: 10051, content: "", tags: [], createdAt: 1, keys: keys, rng: &rng)
        XCTAssertEqual(try KeyPackageRelayList(empty).relays, [])

        let wrong = try Event.sign(kind: 10050, content: "", tags: [["relay", "wss://a.example"]], createdAt: 1, keys: keys, rng: &rng)
        XCTAssertThrowsMarmot(.exactly(.wrongKind(expected: [10051], actual: 10050)), try KeyPackageRelayList(wrong))
    }
}
