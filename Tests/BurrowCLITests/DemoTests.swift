import Foundation
import TestSupport
import XCTest

/// `make demo`'s script against the built program: it exits 0, tells the family's day, draws
/// the map, and leaves no relay or node running.
final class DemoTests: XCTestCase {
    func testDemoRunsCleanly() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let map = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-demo-map-\(UUID().uuidString).svg")
        let page = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-demo-map-\(UUID().uuidString).png")
        defer {
            try? FileManager.default.removeItem(at: map)
            // Kept with the browser screenshots for a look.
            try? FileManager.default.createDirectory(at: Browser.artifacts, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: Browser.artifacts.appendingPathComponent("demo-map.png"))
            try? FileManager.default.moveItem(at: page, to: Browser.artifacts.appendingPathComponent("demo-map.png"))
        }
        let (status, transcript) = try ShellScript.run(root.appendingPathComponent("scripts/demo.sh"),
                                                       environment: ["BURROW_BIN": BurrowProcess.binary.path, "DEMO_MAP": map.path,
                                                                     "DEMO_PAGE": page.path],
                                                       directory: root)
        XCTAssertEqual(status, 0, transcript)
        for line in ["Dad: I'll bring bread.", "Sam: Can I bring a friend?", "Sam asks to leave the group", "kid: left",
                     "members now: ['mum', 'dad']", "burrow run exited cleanly", "no process left running",
                     "gran: joined Family", "joined, confirmed True", "mum heard:  Gran is here!", "gran heard: Welcome, Gran",
                     "carried by: the udp radio", "heard: Family from npub", "gpsd (gpsfake) replays a walk",
                     "The family's page: Mum opens the link", "written to \(page.path)"] {
            XCTAssertTrue(transcript.contains(line), "missing: \(line)\n\(transcript)")
        }
        // The node served the embedded relay, and both parents ended on one epoch.
        let ready = try XCTUnwrap(transcript.split(separator: "\n").first { $0.contains(#""type":"ready""#) })
        let readyJSON = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(ready.trimmingCharacters(in: .whitespaces).utf8)) as? [String: Any])
        XCTAssertEqual(readyJSON["embedded_relay"] as? String, "ws://127.0.0.1:7447", String(ready))
        let epochs = try XCTUnwrap(transcript.split(separator: "\n").first { $0.contains("epochs: mum") })
        let numbers = epochs.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        XCTAssertEqual(numbers.count, 2, String(epochs))
        XCTAssertEqual(numbers.first, numbers.last, "mum and dad end on one epoch: \(epochs)")
        XCTAssertGreaterThan(numbers.first ?? 0, 1)
        // Mum moved along the replayed walk: her history, as Dad reads it, goes north.
        let history = transcript.components(separatedBy: "locations Family --history --member Mum").last ?? ""
        let latitudes = history.split(separator: "\n").filter { $0.contains("Mum: 48.8") }.compactMap { line in
            Double(line.split(separator: " ").first { $0.hasPrefix("48.8") }?.dropLast() ?? "")
        }
        XCTAssertGreaterThanOrEqual(latitudes.count, 3, history)
        XCTAssertGreaterThan(latitudes.last ?? 0, latitudes.first ?? 0, "the walk went north: \(latitudes)")
        // The page's screenshot is a PNG.
        let png = try Data(contentsOf: page)
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        XCTAssertGreaterThan(png.count, 10_000)
        let svg = try String(contentsOf: map, encoding: .utf8)
        XCTAssertEqual(svg.components(separatedBy: "<path ").count - 1, 3, "three pins")
        XCTAssertTrue(svg.contains(">Sam<") && svg.contains(">Mum<") && svg.contains(">Dad<"))
        // Nothing listens on the embedded relay's port any more.
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/bin/bash")
        probe.arguments = ["-c", "exec 3<>/dev/tcp/127.0.0.1/7447"]
        probe.standardError = FileHandle.nullDevice
        try probe.run()
        probe.waitUntilExit()
        XCTAssertNotEqual(probe.terminationStatus, 0, "the embedded relay stopped with burrow run")
    }
}
