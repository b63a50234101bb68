import Foundation
import TestSupport
import XCTest

/// `burrow publish`, `fetch` and the one-writer rule, through the real program against a real
/// relay (rust-nostr's LocalRelay from the nostr-sdk wheel) on 127.0.0.1.
final class CLIRelayTests: XCTestCase {
    var home: URL!
    var passFile: URL!
    var relay: RelayProcess!

    override func setUp() async throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-cli-relay-\(UUID().uuidString)")
        passFile = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-pass-\(UUID().uuidString)")
        try "relay test passphrase".write(to: passFile, atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start()
    }

    override func tearDown() async throws {
        relay?.stop()
        try? FileManager.default.removeItem(at: home)
        try? FileManager.default.removeItem(at: passFile)
    }

    var common: [String] { ["--home", home.path, "--passphrase-file", passFile.path, "--json", "--timeout", "5"] }

    func run(_ args: [String]) throws -> BurrowResult { try BurrowProcess.run(args + common) }

    func testPublishThenFetchWithTagFilters() throws {
        XCTAssertEqual(try run(["init", "--kdf-memory-mib", "8"]).status, 0)
        XCTAssertEqual(try run(["relay", "add", relay.url]).status, 0)

        let published = try run(["publish", "--kind", "1", "--content", "hello / \"world\"\n", "--tag", #"["t","burrow"]"#])
        XCTAssertEqual(published.status, 0, published.stdout + published.stderr)
        let json = try published.json()
        let eventID = try XCTUnwrap(json["event_id"] as? String)
        let relays = try XCTUnwrap(json["relays"] as? [[String: Any]])
        XCTAssertEqual(relays.count, 1)
        XCTAssertEqual(relays.first?["url"] as? String, relay.url)
        XCTAssertEqual(relays.first?["accepted"] as? Bool, true)

        let fetched = try run(["fetch", "--filter", ##"{"kinds":[1],"#t":["burrow"]}"##])
        XCTAssertEqual(fetched.status, 0, fetched.stdout + fetched.stderr)
        let events = try XCTUnwrap(try fetched.json()["events"] as? [[String: Any]])
        XCTAssertEqual(events.map { $0["id"] as? String }, [eventID])
        XCTAssertEqual(events.first?["content"] as? String, "hello / \"world\"\n")

        let none = try run(["fetch", "--filter", ##"{"kinds":[1],"#t":["other"]}"##])
        XCTAssertEqual((try none.json()["events"] as? [Any])?.count, 0)
    }

    /// A relay's OK=false reason reaches the user: LocalRelay refuses events over 64 KiB.
    func testRelayRefusalIsRelayRejectedWithItsReason() throws {
        XCTAssertEqual(try run(["init", "--kdf-memory-mib", "8"]).status, 0)
        XCTAssertEqual(try run(["relay", "add", relay.url]).status, 0)
        let r = try run(["publish", "--kind", "1", "--content", String(repeating: "x", count: 70_000)])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(try code(r), "relay_rejected")
        let text = try message(r)
        XCTAssertTrue(text.contains(relay.url), text)
        XCTAssertTrue(text.contains("blocked"), text)
    }

    func testUnreachableRelayAndBadInputAreTypedErrors() throws {
        XCTAssertEqual(try run(["init", "--kdf-memory-mib", "8"]).status, 0)
        var r = try run(["publish", "--kind", "1", "--content", "x"])
        XCTAssertEqual(r.status, 1)
        // No relay configured: the embedded relay's address, where nothing runs outside `burrow run`.
        XCTAssertEqual(try code(r), "relay_unreachable")
        let hint = try message(r)
        XCTAssertTrue(hint.contains("start `burrow run`"), hint)

        XCTAssertEqual(try run(["relay", "add", "ws://127.0.0.1:9"]).status, 0)  // nothing listens on port 9
        r = try run(["publish", "--kind", "1", "--content", "x"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(try code(r), "relay_unreachable")
        let plain = try message(r)
        XCTAssertFalse(plain.contains("burrow run"), plain)

        r = try run(["fetch", "--filter", "{not json"])
        XCTAssertEqual(try code(r), "invalid_input")
        r = try run(["publish", "--kind", "1", "--content", "x", "--tag", "[1,2]"])
        XCTAssertEqual(try code(r), "invalid_input")
    }

    /// One process owns a home: while one `burrow` holds it, another gets `busy`.
    func testSecondProcessOnTheSameHomeGetsBusy() throws {
        XCTAssertEqual(try run(["init", "--kdf-memory-mib", "8"]).status, 0)
        XCTAssertEqual(try run(["relay", "add", relay.url]).status, 0)
        // A fetch that waits on a relay holds the home for its duration.
        relay.stop()
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        XCTAssertEqual(try run(["relay", "add", "ws://127.0.0.1:\(blackhole.port)"]).status, 0)
        let holder = try holdHome(seconds: 8)
        defer { if holder.isRunning { holder.terminate() }; holder.waitUntilExit() }
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertTrue(holder.isRunning)
        let second = try BurrowProcess.run(["whoami"] + common)
        XCTAssertEqual(second.status, 1)
        XCTAssertEqual(try code(second), "busy")
        let busy = try message(second)
        XCTAssertTrue(busy.contains("try again"), busy)
    }

    /// A relay that accepts connections and never answers: once the other relay has answered
    /// every read in full, `sync` leaves it behind after `RelayGateway.stragglerGrace` (3 s)
    /// per read instead of waiting out the timeout on each (issue 22, item 7).
    func testSyncLeavesASilentRelayBehindOnceAnotherAnswered() throws {
        XCTAssertEqual(try run(["init", "--kdf-memory-mib", "8"]).status, 0)
        XCTAssertEqual(try run(["relay", "add", relay.url]).status, 0)
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        XCTAssertEqual(try run(["relay", "add", "ws://127.0.0.1:\(blackhole.port)"]).status, 0)
        let started = ContinuousClock.now
        let synced = try BurrowProcess.run(["sync", "--home", home.path, "--passphrase-file", passFile.path, "--json", "--timeout", "30"])
        let took = ContinuousClock.now - started
        XCTAssertEqual(synced.status, 0, synced.stdout + synced.stderr)
        // Two reads (gift wraps, our profile; no groups yet), each left 3 s after the good
        // relay's end (about 6.5 s in all); waiting the silent relay out costs its 10-second
        // connect timeout on the first read alone.
        XCTAssertLessThan(took, .seconds(10), "the silent relay was waited out: \(took)")
    }

    /// A command that finds the home held by another command (no `run`) waits a few seconds
    /// for it to end instead of failing at once (issue 22, item 10).
    func testBusyHomeIsWaitedForBriefly() throws {
        XCTAssertEqual(try run(["init", "--kdf-memory-mib", "8"]).status, 0)
        relay.stop()
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        XCTAssertEqual(try run(["relay", "add", "ws://127.0.0.1:\(blackhole.port)"]).status, 0)
        let holder = try holdHome(seconds: 2)
        defer { if holder.isRunning { holder.terminate() }; holder.waitUntilExit() }
        Thread.sleep(forTimeInterval: 0.7)
        XCTAssertTrue(holder.isRunning)
        let second = try BurrowProcess.run(["whoami"] + common)
        XCTAssertEqual(second.status, 0, second.stdout + second.stderr)
        XCTAssertFalse(holder.isRunning, "it ran once the holder was done")
    }

    /// A `fetch` from the home's relays (a relay that never answers) holds the home for its
    /// timeout of `seconds`.
    private func holdHome(seconds: Int) throws -> Process {
        let holder = Process()
        holder.executableURL = BurrowProcess.binary
        holder.arguments = ["fetch", "--filter", #"{"kinds":[1]}"#, "--timeout", String(seconds), "--home", home.path,
                            "--passphrase-file", passFile.path]
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        return holder
    }

    private func code(_ r: BurrowResult) throws -> String? {
        let json = try r.json()
        XCTAssertEqual(json["ok"] as? Bool, false)
        return (json["error"] as? [String: Any])?["code"] as? String
    }

    private func message(_ r: BurrowResult) throws -> String {
        ((try r.json()["error"] as? [String: Any])?["message"] as? String) ?? ""
    }
}

/// A TCP listener on 127.0.0.1 that accepts and never answers: a relay that hangs.
final class BlackholeListener {
    let fd: Int32
    let port: Int

    init() throws {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, len) } }
        guard bound == 0, listen(socketFD, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &len) } }
        fd = socketFD
        port = Int(UInt16(bigEndian: addr.sin_port))
    }

    func close() { _ = Glibc.close(fd) }
}
