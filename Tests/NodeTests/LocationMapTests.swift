import Marmot
import XCTest
@_spi(StoreAccess) @testable import Node

final class LocationMapTests: XCTestCase {
    func location(_ name: String?, _ lat: Double, _ lon: Double, acc: Double, stale: Bool = false) throws -> LocationView {
        LocationView(member: String(repeating: "ab", count: 32), name: name,
                     payload: try LocationPayload(latitude: lat, longitude: lon, accuracy: acc, timestamp: 1_795_000_000), stale: stale)
    }

    func testPinsNamesAccuracyCirclesAndScaleBar() throws {
        let svg = LocationMap.svg([
            try location("Mum", 52.5200, 13.4050, acc: 25),
            try location("Dad <&>", 52.5160, 13.3780, acc: 300),
            try location(nil, 52.5300, 13.4200, acc: 0, stale: true),
        ], title: "Family")
        XCTAssertTrue(svg.hasPrefix("<svg"))
        XCTAssertTrue(svg.hasSuffix("</svg>\n"))
        XCTAssertEqual(svg.components(separatedBy: "<path ").count - 1, 3, "one pin per member")
        XCTAssertEqual(svg.components(separatedBy: "fill-opacity=\"0.15\"").count - 1, 2, "accuracy circles where known")
        XCTAssertTrue(svg.contains(">Mum<"))
        XCTAssertTrue(svg.contains("Dad &lt;&amp;&gt;"), "names are escaped")
        XCTAssertTrue(svg.contains("abababab (stale)"))
        XCTAssertTrue(svg.contains(" m</text>") || svg.contains(" km</text>"), "a scale bar")
        // Every pin lies inside the picture.
        let xs = svg.components(separatedBy: "<path d=\"M ").dropFirst().compactMap { Double($0.split(separator: " ")[0]) }
        XCTAssertEqual(xs.count, 3)
        for x in xs { XCTAssertTrue((0...800).contains(x), "\(x)") }
    }

    func testNoLocationsYet() {
        XCTAssertTrue(LocationMap.svg([], title: "Empty").contains("no locations shared yet"))
    }
}

final class PublicRelaysTests: XCTestCase {
    /// The list in the program is the one kept in Relays/public-relays.txt.
    func testListMatchesTheRelaysFolder() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Relays/public-relays.txt")
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        XCTAssertEqual(lines, PublicRelays.list)
    }

    func testLoopbackDetection() {
        for url in ["ws://127.0.0.1:7447", "ws://localhost:7447", "ws://[::1]:7447", "ws://127.1.2.3"] {
            XCTAssertTrue(GroupView.isLoopback(url), url)
        }
        for url in ["ws://192.168.1.10:7447", "wss://relay.damus.io", "ws://10.0.0.1"] { XCTAssertFalse(GroupView.isLoopback(url), url) }
    }
}
