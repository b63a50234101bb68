import Foundation
import Marmot
import Nostr
import TestSupport
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

    /// Pins a few metres apart: their labels are placed apart (beside, above, below, or
    /// further off with a leader line), each with its time (issue 22, item 12).
    func testLabelsOfClosePinsDoNotOverlapAndShowTheirTime() throws {
        let family = try (0..<6).map { index in
            try location(["Mum", "Dad", "Ann", "Ben", "Grandma Rose", "Uncle Bob"][index], 52.52 + Double(index) * 0.00002,
                         13.405 + Double(index % 2) * 0.00002, acc: 5)
        }
        let svg = LocationMap.svg(family, title: "Family") { "t\($0 - 1_795_000_000)" }
        // Each label is a <g class="label"> of a name line and a time line.
        let labels = svg.components(separatedBy: "<g class=\"label\">").dropFirst().map { String($0.prefix { $0 != "\n" }) }
        XCTAssertEqual(labels.count, 6)
        func attribute(_ name: String, in text: Substring) -> Double? {
            guard let start = text.range(of: "\(name)=\"") else { return nil }
            return Double(text[start.upperBound...].prefix { $0 != "\"" })
        }
        var boxes: [LocationMap.Box] = []
        for label in labels {
            let name = label.components(separatedBy: "font-size=\"14\" fill=\"#222\">")[1].components(separatedBy: "</text>")[0]
            XCTAssertTrue(label.contains(">t0</text>"), "the time under \(name)")
            let x = try XCTUnwrap(attribute("x", in: Substring(label))), y = try XCTUnwrap(attribute("y", in: Substring(label)))
            boxes.append(LocationMap.Box(x: x, y: y - 14, width: LocationMap.textWidth(name, size: 14), height: 30))
        }
        for (i, a) in boxes.enumerated() {
            for b in boxes[(i + 1)...] { XCTAssertFalse(a.overlaps(b), "labels overlap: \(a) \(b)") }
            XCTAssertTrue(a.x >= 0 && a.x + a.width <= 800 && a.y >= 0 && a.y + a.height <= 600, "inside the picture: \(a)")
        }
        XCTAssertTrue(svg.contains("<line "), "a label moved off its pin gets a leader line")
        // To look at it: BURROW_TEST_ARTIFACTS=dir keeps the picture.
        if let dir = ProcessInfo.processInfo.environment["BURROW_TEST_ARTIFACTS"] {
            try? svg.write(toFile: dir + "/close-pins-map.svg", atomically: true, encoding: .utf8)
        }
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

/// Retention: `run`'s upkeep deletes location messages older than the days kept, and no other kind.
final class LocationRetentionTests: XCTestCase {
    func testOldLocationsAreDeletedAndOthersKept() async throws {
        let home = try makeShortHome()
        try FileManager.default.removeItem(at: home)
        defer { try? FileManager.default.removeItem(at: home) }
        let node = try BurrowNode.initialize(home: home, passphrase: Array("retention".utf8), kdfMemoryMiB: 8, importing: nil)
        defer { node.close() }
        try node.addRelays(["ws://127.0.0.1:9"])
        let view = try await node.groups.createGroup(name: "Family", description: "", invitees: [], admins: [], timeout: .seconds(1))
        let id = try node.groups.groupID(view.mlsGroupID)
        for (index, kind) in [MarmotKind.location, MarmotKind.location, MarmotKind.chat].enumerated() {
            let now = Int64(Date().timeIntervalSince1970)
            _ = try node.groups.stageMessage(id) { _ in
                kind == MarmotKind.chat ? try InnerEvent.chat("hello \(index)", author: node.publicKey, createdAt: now)
                    : try InnerEvent.location(try LocationPayload(latitude: Double(index), longitude: 2, timestamp: now), author: node.publicKey, createdAt: now)
            }
        }
        XCTAssertEqual(try node.groups.locationHistory(view.mlsGroupID).count, 2)
        try node.groups.setLocationRetention(days: 1)
        XCTAssertEqual(node.groups.pruneLocationHistory(now: Int64(Date().timeIntervalSince1970)), 0, "nothing is a day old yet")
        XCTAssertEqual(node.groups.pruneLocationHistory(now: Int64(Date().timeIntervalSince1970) + 2 * 86_400), 2)
        XCTAssertEqual(try node.groups.locationHistory(view.mlsGroupID).count, 0)
        XCTAssertEqual(try node.groups.messages(view.mlsGroupID, limit: nil).count, 1, "the chat stays")
    }
}
