import Nostr
import XCTest
import TestSupport

/// Relay URLs print and order as rust-nostr's `RelayUrl`, which MDK writes into 0xF2EE and
/// KeyPackage/Welcome tags.
final class RelayURLTests: XCTestCase {
    /// (input, what rust-nostr 0.44 prints). The expected strings were taken from the WHATWG URL
    /// rules and are also checked live against nostr-sdk below.
    static let normalized: [(String, String)] = [
        ("wss://relay.example.com", "wss://relay.example.com"),
        ("wss://relay.example.com/", "wss://relay.example.com/"),
        ("wss://Relay.Example.COM", "wss://relay.example.com"),
        ("WSS://A.COM/Path/", "wss://a.com/Path/"),
        ("wss://a.com:443", "wss://a.com"),
        ("ws://a.com:80", "ws://a.com"),
        ("ws://a.com:443", "ws://a.com:443"),
        ("wss://a.com:0443", "wss://a.com"),
        ("wss://a.com:08080/x", "wss://a.com:8080/x"),
        ("wss://a.com:", "wss://a.com"),
        ("ws://127.0.0.1:7777", "ws://127.0.0.1:7777"),
        ("wss://0x7f.1", "wss://127.0.0.1"),
        ("wss://017700000001", "wss://127.0.0.1"),
        ("wss://2130706433", "wss://127.0.0.1"),
        ("wss://[::1]:7777", "wss://[::1]:7777"),
        ("wss://[::FFFF:1.2.3.4]:8080/", "wss://[::ffff:102:304]:8080/"),
        ("wss://[2001:DB8:0:0:1:0:0:1]", "wss://[2001:db8::1:0:0:1]"),
        ("wss://[0:0:0:0:0:0:0:0]", "wss://[::]"),
        ("ws://a.com:80/x/../y", "ws://a.com/y"),
        ("wss://a.com/./x/.", "wss://a.com/x"),
        ("wss://a.com/a/%2e%2E/b", "wss://a.com/b"),
        ("wss://a.com/..", "wss://a.com"),
        ("wss://a.com?x=1", "wss://a.com/?x=1"),
        ("wss://a.com/#frag", "wss://a.com/#frag"),
        ("wss://a.com/a%20b", "wss://a.com/a%20b"),
        ("wss://a.com/{x}", "wss://a.com/%7Bx%7D"),
        ("wss://a.com/é", "wss://a.com/%C3%A9"),
        ("wss://a.com/?q='\"", "wss://a.com/?q=%27%22"),
        ("wss://a.com//", "wss://a.com//"),
        ("wss://a.com\\inbox", "wss://a.com/inbox"),
        ("wss://relay.a.", "wss://relay.a."),
        ("wss://under_score.example", "wss://under_score.example"),
        ("wss:relay.example.com", "wss://relay.example.com"),
        ("wss:///relay.example.com", "wss://relay.example.com"),
        ("ws:\\/a.example/x", "ws://a.example/x"),
        ("wss://{x}", "wss://{x}"),
    ]

    static let rejected: [String] = [
        "", "relay.example.com", "https://relay.example.com", "wss://", "wss://:443", "wss://a.com:65536",
        "wss://a.com:12x", "wss://a.com/x://y", "wss://user@a.com", "wss://a b.com", " wss://a.com",
        "wss://a.com/\n", "wss://a%41.com", "wss://réseau.example", "wss://a.com:99999999999999999999",
        "wss://1.2.3.256", "wss://1.2.3.4.5", "wss://0x100000000", "wss://[::1", "wss://[1:2:3:4:5:6:7:8:9]",
        "wss://[1::2::3]", "wss://[:1]", "wss://[::1.2.3]", "wss://[::01.2.3.4]", "wss://a<b.com", "1wss://a.com",
        "wss://xn--abc.example", "wss:", "wss:///",
    ]

    func testNormalization() throws {
        for (input, expected) in Self.normalized {
            XCTAssertEqual(try RelayURL(input).string, expected, input)
        }
    }

    func testRejections() {
        for input in Self.rejected {
            XCTAssertThrowsError(try RelayURL(input), input) { error in
                guard case .invalidRelayURL = error as? NostrError else { return XCTFail("\(input): \(error)") }
            }
        }
    }

    /// Equality and order use the full serialization, trailing slash included, like the `url`
    /// crate's `Url`: "wss://a.com" and "wss://a.com/" are the same relay, and
    /// "wss://relay.a.b/" sorts before "wss://relay.a/" because '.' < '/'.
    func testEqualityAndMDKSetOrder() throws {
        XCTAssertEqual(try RelayURL("wss://a.com"), try RelayURL("wss://a.com/"))
        XCTAssertEqual(try RelayURL("wss://a.com").serialization, "wss://a.com/")
        let set = RelayURL.sortedSet([
            try RelayURL("wss://relay.a"), try RelayURL("wss://relay.a.b"), try RelayURL("wss://relay.a/"),
            try RelayURL("ws://z.com"), try RelayURL("WSS://RELAY.A.B"),
        ])
        // The first of two equal URLs is kept, as BTreeSet::insert does.
        XCTAssertEqual(set.map(\.string), ["ws://z.com", "wss://relay.a.b", "wss://relay.a"])
    }

    /// URL-shaped strings assembled at random from tricky parts (scheme case and separators, IPv4
    /// short and hex forms, IPv6 with IPv4 tails, ports, dot segments, characters to escape).
    static func randomURLs(count: Int) -> [String] {
        var rng = SplitMix64(seed: 0x5EED)
        let schemes = ["ws", "wss", "WSS", "Ws", "wSs", "http", "wss+x", "w"]
        let separators = ["://", "://", "://", ":/", ":///"]
        let hosts = ["relay.example.com", "RELAY.Example.Com", "127.0.0.1", "0x7f.0.0.1", "1.2.3", "10.1", "0", "999.1.1.1",
                     "1.2.3.4.", "1.2.3.4..", "0x", "0x100.1", "a.0x1", "[::1]", "[1:2::3:4]", "[::FFFF:10.0.0.1]", "[1:2:3:4:5:6:7:8]",
                     "[0:0:1:0:0:1:0:0]", "[::]", "[1::]", "[::1:2:3:4:5:6:7]", "a..b", "under_score", "xn--abc.example", "localhost",
                     "", "a:b", "a^b", "a|b", "e%41"]
        let ports = ["", "", ":443", ":80", ":0", ":65535", ":65536", ":007777", ":", ":1x"]
        let paths = ["", "", "/", "/a", "/a/", "/./b", "/../c", "/a/b/../", "/%2e/x", "/.%2E/y", "/{x}", "/é", "//", "\\x", "/a\\b/",
                     "/`q`", "/\"", "/%zz", "/..", "/."]
        let queries = ["", "", "?", "?a=b", "?'\"<>", "?x/y?z", "?é"]
        let fragments = ["", "", "#", "#f`g", "#a#b", "#é"]
        func pick(_ options: [String]) -> String { options[Int.random(in: 0..<options.count, using: &rng)] }
        return (0..<count).map { _ in
            pick(schemes) + pick(separators) + pick(hosts) + pick(ports) + pick(paths) + pick(queries) + pick(fragments)
        }
    }

    func testRandomURLsNeverTrap() {
        for input in Self.randomURLs(count: 2000) {
            if let url = try? RelayURL(input) {
                // Normalization is idempotent.
                XCTAssertEqual(try RelayURL(url.string).string, url.string, input)
            }
        }
    }

    /// Differential check against rust-nostr's `RelayUrl` through nostr-sdk's Python binding:
    /// every normalized case prints identically, every rejection here is either rejected there or
    /// one of the documented stricter rules.
    func testMatchesNostrSDK() throws {
        let script = #"""
        import json, sys
        import nostr_sdk
        out = []
        for s in json.load(sys.stdin):
            try:
                out.append(str(nostr_sdk.RelayUrl.parse(s)))
            except Exception:
                out.append(None)
        print(json.dumps(out))
        """#
        let inputs = Self.normalized.map(\.0) + Self.rejected + Self.randomURLs(count: 600)
        let raw = try VenvPython.run(script, input: inputs)
        let results = try XCTUnwrap(raw as? [Any])
        XCTAssertEqual(results.count, inputs.count)
        // Inputs rust-nostr accepts that Burrow refuses on purpose (see RelayURL's doc).
        let stricterHere: Set<String> = [
            "wss://user@a.com", "wss://a%41.com", "wss://réseau.example", " wss://a.com", "wss://a.com/\n",
        ]
        /// The documented stricter rules: user info, and hosts needing IDNA or percent-decoding.
        func deliberatelyRefused(_ input: String) -> Bool {
            guard let separator = input.range(of: ":") else { return false }
            let authority = input[separator.upperBound...].drop { $0 == "/" || $0 == "\\" }.prefix { !"/\\?#".contains($0) }
            return authority.contains("@") || authority.contains("%") || !authority.allSatisfy(\.isASCII)
                || authority.lowercased().split(separator: ".").contains { $0.hasPrefix("xn--") }
        }
        var bothAccepted = 0, bothRejected = 0
        for (input, result) in zip(inputs, results) {
            let theirs = result as? String
            let ours = try? RelayURL(input).string
            if ours != nil, ours == theirs { bothAccepted += 1 }
            if ours == nil, theirs == nil { bothRejected += 1 }
            if ours == nil, theirs != nil, deliberatelyRefused(input) { continue }
            if stricterHere.contains(input) {
                XCTAssertNil(ours, input)
            } else {
                XCTAssertEqual(ours, theirs, "\(input): Burrow \(ours ?? "rejects"), rust-nostr \(theirs ?? "rejects")")
            }
        }
        // The random corpus exercises both outcomes substantially.
        XCTAssertGreaterThan(bothAccepted, 200, "\(bothAccepted) accepted by both")
        XCTAssertGreaterThan(bothRejected, 100, "\(bothRejected) rejected by both")
    }
}
