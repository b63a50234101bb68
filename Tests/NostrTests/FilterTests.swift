import XCTest
@testable import Nostr
import TestSupport

final class FilterTests: XCTestCase {
    func testMatching() throws {
        var rng = SplitMix64(seed: 6)
        let alice = Keys.generate(using: &rng), bob = Keys.generate(using: &rng)
        let event = try Event.sign(kind: 445, content: "c", tags: [["h", "group1"], ["e", "x", "relay"]],
                                   createdAt: 100, keys: alice, rng: &rng)
        XCTAssertTrue(Filter().matches(event))
        XCTAssertTrue(Filter(ids: [event.id]).matches(event))
        XCTAssertTrue(Filter(authors: [bob.publicKey, alice.publicKey], kinds: [1, 445]).matches(event))
        XCTAssertFalse(Filter(authors: [bob.publicKey]).matches(event))
        XCTAssertFalse(Filter(kinds: []).matches(event))
        XCTAssertTrue(Filter(since: 100, until: 100).matches(event))
        XCTAssertFalse(Filter(since: 101).matches(event))
        XCTAssertFalse(Filter(until: 99).matches(event))
        XCTAssertTrue(Filter(tags: ["h": ["group0", "group1"]]).matches(event))
        XCTAssertTrue(Filter(tags: ["h": ["group1"], "e": ["x"]]).matches(event))
        XCTAssertFalse(Filter(tags: ["h": ["group1"], "p": ["x"]]).matches(event))
        XCTAssertFalse(Filter(tags: ["h": ["group2"]]).matches(event))
        XCTAssertTrue(Filter(limit: 0).matches(event))
    }

    func testJSONRoundTrip() throws {
        var rng = SplitMix64(seed: 7)
        let keys = Keys.generate(using: &rng)
        let id = try EventID(hex: String(repeating: "ab", count: 32))
        let filter = Filter(ids: [id], authors: [keys.publicKey], kinds: [1059, 445], since: 10, until: 20, limit: 5,
                            tags: ["p": [keys.publicKey.hex], "h": ["g"]])
        let json = filter.jsonString
        XCTAssertEqual(json, "{\"ids\":[\"\(id.hex)\"],\"authors\":[\"\(keys.publicKey.hex)\"],\"kinds\":[1059,445],"
                       + "\"#h\":[\"g\"],\"#p\":[\"\(keys.publicKey.hex)\"],\"since\":10,\"until\":20,\"limit\":5}")
        XCTAssertEqual(try Filter(json: json), filter)
        XCTAssertEqual(Filter().jsonString, "{}")
    }

    func testDecodingRejectsWrongTypesAndIgnoresUnknownMembers() throws {
        XCTAssertEqual(try Filter(json: ##"{"search":"x","#long":["a"],"kinds":[1]}"##), Filter(kinds: [1]))
        for bad in [#"{"kinds":"1"}"#, #"{"kinds":[70000]}"#, #"{"ids":["AB"]}"#, #"{"limit":-1}"#,
                    #"{"since":1.5}"#, ##"{"#e":[1]}"##, #"[]"#, #"{"authors":["00"]}"#] {
            XCTAssertThrowsError(try Filter(json: bad), bad)
        }
    }
}
