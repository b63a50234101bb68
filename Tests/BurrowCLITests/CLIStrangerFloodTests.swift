import Foundation
import Nostr
import Pigeon
import RelayClient
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// Issue 19's flood through the real program: `burrow run` on Burrow's own relay and on the UDP
/// radio while strangers send 1,000 handshake1s from 1,000 fresh keys, the same handshake1 in
/// 1,000 wraps, 1,000 junk wraps, a handshake1 whose sender's kind-10050 names 100 relays that
/// never answer, and 500 junk mesh frames a second for 30 s. Meanwhile a contact's DM arrives
/// within 10 s, a new honest handshake completes, the node's memory stays bounded, at most 4 of
/// the 100 blackholes are ever dialed, and the mailbox ends under its quota.
final class CLIStrangerFloodTests: XCTestCase {
    /// Peak resident memory `burrow run` may reach during the flood.
    static let rssBoundMiB = 256
    static let floodSeconds = 30
    static let meshFramesPerSecond = 500

    var root: URL!
    var pass: String { root.appendingPathComponent("pass").path }

    override func setUp() async throws {
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-flood-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "flood passphrase".write(to: root.appendingPathComponent("pass"), atomically: true, encoding: .utf8)
    }

    override func tearDown() async throws {
        try? FileManager.default.removeItem(at: root)
    }

    /// `burrow-relay` (built beside `burrow`) with room for a flood from one connection.
    func startRelay() async throws -> (PeerProcess, String) {
        let config = root.appendingPathComponent("relay.json")
        try Data(#"{"limits": {"events_per_minute": 1000000, "events_per_minute_per_key": 1000000, "requests_per_minute": 100000}}"#.utf8)
            .write(to: config)
        let binary = BurrowProcess.binary.deletingLastPathComponent().appendingPathComponent("burrow-relay")
        let relay = try PeerProcess(executable: binary, arguments: [
            "--config", config.path, "--data", root.appendingPathComponent("relay-data").path, "--port", "0", "--log-level", "warning"])
        let line = try await relay.waitForLine(containing: "listening on", timeout: .seconds(30))
        let url = try XCTUnwrap(line.components(separatedBy: "listening on ").last?.split(separator: " ").first.map(String.init))
        return (relay, url)
    }

    func testAStrangerFloodOnRelayAndRadioLeavesContactsServedAndMemoryBounded() async throws {
        let (relayProcess, relayURL) = try await startRelay()
        defer { relayProcess.stop() }
        let bob = try BurrowHome.create(in: root, name: "bob", relay: relayURL, passphraseFile: pass)
        let alice = try BurrowHome.create(in: root, name: "alice", relay: relayURL, passphraseFile: pass)
        let carol = try BurrowHome.create(in: root, name: "carol", relay: relayURL, passphraseFile: pass)
        try alice.exchangeCards(with: bob, nicknames: ("Alice", "Bob"))
        try carol.exchangeCards(with: bob, nicknames: ("Carol", "Bob"))
        let bobCard = try XCTUnwrap(try bob.ok(["contact", "card"])["card"] as? String)
        let target = try ContactCard(text: bobCard)

        let ports = try LoopbackPorts.free(2)
        let run = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", bob.path, "--passphrase-file", pass, "--json", "--timeout", "5", "--mesh", "udp:\(ports[0]),\(ports[1])"])
        defer { run.stop() }
        _ = try await run.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))

        // Alice has a session with Bob before the flood.
        let before = try XCTUnwrap(try alice.ok(["dm", "send", "Bob", "before the flood", "--timeout", "20"])["message"] as? [String: Any])
        XCTAssertEqual(before["status"] as? String, "sent")
        _ = try await run.waitForLine(containing: "before the flood", timeout: .seconds(20))
        let idleMiB = ProcessMemory.residentMiB(run.pid)

        // The strangers' wraps, made before the clock starts.
        let publisher = try RelayPool(urls: [relayURL], authKeys: nil)
        var wraps: [Event] = []
        var repeated: [UInt8] = []
        for i in 0..<1_000 {
            let stranger = try StrangerPeer(nickname: "s\(i)", relay: relayURL, pool: publisher)
            let (h1, _) = try stranger.handshake1(to: bobCard)
            if i == 0 { repeated = h1 }
            wraps.append(try stranger.wrap(h1, to: target.nostrKey))
        }
        let replayer = try StrangerPeer(nickname: "replayer", relay: relayURL, pool: publisher)
        for _ in 0..<1_000 { wraps.append(try replayer.wrap(repeated, to: target.nostrKey)) }
        var rng = SystemRandomNumberGenerator()
        for i in 0..<1_000 {
            let junk = Keys.generate(using: &rng)
            let rumor = try Rumor(pubkey: junk.publicKey, createdAt: Int64(Date().timeIntervalSince1970), kind: i % 2 == 0 ? 1590 : 14,
                                  tags: [], content: "junk \(i)")
            wraps.append(try GiftWrap.wrap(rumor: rumor, sender: junk, recipient: target.nostrKey, now: Int64(Date().timeIntervalSince1970), rng: &rng))
        }
        // A stranger whose inbox list names 100 relays that accept connections and never answer.
        let blackholes = try (0..<100).map { _ in try Blackhole() }
        defer { blackholes.forEach { $0.close() } }
        let listed = try StrangerPeer(nickname: "far", relay: relayURL, pool: publisher)
        let inboxList = try Event.sign(kind: InboxRelayList.kind, content: "", tags: blackholes.map { ["relay", $0.url] },
                                       createdAt: Int64(Date().timeIntervalSince1970), keys: listed.nostr, rng: &rng)
        _ = await publisher.publish(inboxList, timeout: .seconds(10))
        // First in line, so Bob answers it while the flood goes on.
        wraps.insert(try listed.wrap(try listed.handshake1(to: bobCard).frame, to: target.nostrKey), at: 0)

        // The flood: wraps as fast as the relay takes them, junk on the radio, memory sampled.
        let started = ContinuousClock.now
        let allWraps = wraps
        let relayFlood = Task {
            var refused = 0
            for chunk in stride(from: 0, to: allWraps.count, by: 32) {
                await withTaskGroup(of: Bool.self) { group in
                    for wrap in allWraps[chunk..<min(chunk + 32, allWraps.count)] {
                        group.addTask { await publisher.publish(wrap, timeout: .seconds(10)).contains(where: \.accepted) }
                    }
                    for await accepted in group where !accepted { refused += 1 }
                }
            }
            return refused
        }
        let (radioPort, meshPort) = (ports[1], ports[0])
        let (rate, seconds) = (Self.meshFramesPerSecond, Self.floodSeconds)
        let radioFlood = Task.detached { try MeshJunk.send(from: radioPort, to: meshPort, perSecond: rate, seconds: seconds) }
        let pid = run.pid
        let sampler = Task.detached { () -> Int in
            var peak = 0
            while !Task.isCancelled {
                peak = max(peak, ProcessMemory.residentMiB(pid))
                try? await Task.sleep(for: .milliseconds(250))
            }
            return peak
        }

        // A contact's DM during the flood arrives within 10 s.
        try await Task.sleep(for: .seconds(5))
        let sentAt = ContinuousClock.now
        let during = try XCTUnwrap(try alice.ok(["dm", "send", "Bob", "during the flood", "--timeout", "10"])["message"] as? [String: Any])
        XCTAssertEqual(during["status"] as? String, "sent", "the relay took Alice's DM")
        do {
            _ = try await run.waitForLine(containing: "during the flood", timeout: .seconds(10))
        } catch {
            print("flood test failed; burrow run printed \(run.lines.count) lines, the last: \(run.lines.suffix(8).joined(separator: "\n"))")
            print("burrow run stderr (end): \(run.standardError.suffix(6000))")
            throw error
        }
        let latency = ContinuousClock.now - sentAt
        XCTAssertLessThan(latency, .seconds(10))

        // A new honest handshake (Carol has no session yet) completes during the flood.
        let carols = try XCTUnwrap(try carol.ok(["dm", "send", "Bob", "new session in the flood", "--timeout", "20"])["message"] as? [String: Any])
        XCTAssertEqual(carols["status"] as? String, "sent", "Carol's handshake completed")
        _ = try await run.waitForLine(containing: "new session in the flood", timeout: .seconds(20))

        let refused = await relayFlood.value
        try await radioFlood.value
        let floodTime = ContinuousClock.now - started
        try await Task.sleep(for: .seconds(3))
        sampler.cancel()
        let peakMiB = await sampler.value
        XCTAssertTrue(run.isRunning, "burrow run survived: \(run.standardError.suffix(2000))")
        XCTAssertLessThan(peakMiB, Self.rssBoundMiB, "peak RSS \(peakMiB) MiB (idle \(idleMiB) MiB)")
        let dialed = blackholes.filter { $0.acceptedConnections() > 0 }.count
        XCTAssertLessThanOrEqual(dialed, DMOutboxPolicy.maxInboxRelays, "\(dialed) of the 100 blackholes were dialed")
        run.stop()

        // The mailbox ends under its quota: what Bob processed left it.
        let node = try BurrowNode.open(home: URL(fileURLWithPath: bob.path), passphrase: Array("flood passphrase".utf8))
        let reader = try RelayPool(urls: [relayURL], authKeys: node.keys)
        let left = try await reader.fetch(Filter(kinds: [Kind.giftWrap], tags: ["p": [node.publicKey.hex]]), timeout: .seconds(10)).events.count
        XCTAssertLessThan(left, 1_000, "the mailbox quota")
        let outbox = try node.store.transaction { try $0.dmOutbox.pending() }
        XCTAssertLessThanOrEqual(outbox.filter { $0.contact == nil }.count, DMOutboxPolicy.maxStrangerRows)
        await reader.close()
        await publisher.close()
        node.close()
        print("flood: \(wraps.count) wraps (\(refused) refused by the relay), \(Self.meshFramesPerSecond * Self.floodSeconds) junk mesh frames "
              + "in \(floodTime); contact DM in \(latency); peak RSS \(peakMiB) MiB (idle \(idleMiB)); \(dialed) blackholes dialed; "
              + "\(left) wraps left in the mailbox; \(outbox.count) pending outbox rows")
    }
}

/// A process's resident memory, from /proc.
enum ProcessMemory {
    static func residentMiB(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kib / 1024
    }
}

/// Random datagrams to a `burrow run --mesh udp:` port from its listed peer port.
enum MeshJunk {
    static func send(from: Int, to: Int, perSecond: Int, seconds: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr("127.0.0.1")
        local.sin_port = in_port_t(UInt16(from).bigEndian)
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        guard withUnsafePointer(to: &local, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }) == 0 else {
            throw POSIXError(.EADDRINUSE)
        }
        var remote = local
        remote.sin_port = in_port_t(UInt16(to).bigEndian)
        var rng = SystemRandomNumberGenerator()
        let start = ContinuousClock.now
        for second in 0..<seconds {
            for _ in 0..<perSecond {
                // Mostly plausible headers (version 1, a type, a TTL) over random bodies.
                var frame = (0..<Int.random(in: 16...400, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                frame[0] = 1
                _ = frame.withUnsafeBytes { bytes in
                    withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes.baseAddress, bytes.count, 0, $0, length) } }
                }
            }
            let next = start.advanced(by: .seconds(second + 1))
            let rest = next - ContinuousClock.now
            if rest > .zero { Thread.sleep(forTimeInterval: Double(rest.components.seconds) + Double(rest.components.attoseconds) / 1e18) }
        }
    }
}
