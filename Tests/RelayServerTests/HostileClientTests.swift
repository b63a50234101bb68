import Foundation
import Nostr
import RelayServer
import TestSupport
import XCTest

/// Bad input from a bare WebSocket client — malformed frames and JSON, invalid and oversized
/// events, filter floods, too many subscriptions, too fast, wrong AUTH, a frame over the
/// ceiling — is answered with a NOTICE, `OK false` or `CLOSED` and a NIP-01 reason, while a
/// nostr-sdk client on another connection keeps publishing and reading.
final class HostileClientTests: XCTestCase {
    func testBadInputIsAnsweredWithReasonsWhileAnotherClientKeepsWorking() async throws {
        try await bounded(150) {
            let test = TestRelay()
            defer { test.remove() }
            let relay = try await test.start {
                $0.limits.eventsPerMinute = 10
                $0.limits.maxSubscriptions = 5
            }
            let good = try await SDKClient.connect(relay.url)
            defer { good.close() }
            var goodEvents: Set<String> = []
            func goodClientStillWorks(_ step: String) async throws {
                let event = try await good.publish(kind: 1, content: "still here after \(step)", tags: [["t", "good"]])
                XCTAssertTrue(event.accepted, "\(step): \(event.message)")
                goodEvents.insert(event.id)
                let fetched = try await good.fetch([["#t": ["good"]]])
                XCTAssertEqual(Set(fetched.map(\.id.hex)), goodEvents, step)
            }

            let raw = RawClient(url: relay.url)
            defer { raw.close() }
            try await eventually("the AUTH challenge") { raw.challenge != nil }

            // Frames and JSON.
            raw.send("this is not json")
            let answer1 = try await raw.notice(containing: "not valid JSON")
            XCTAssertTrue(answer1.hasPrefix("invalid:"))
            raw.send(#"["HELLO","world"]"#)
            let answer2 = try await raw.notice(containing: "unknown message type")
            XCTAssertTrue(answer2.hasPrefix("invalid:"))
            raw.send(binary: [0x00, 0xff, 0x10])
            let answer3 = try await raw.notice(containing: "binary")
            XCTAssertTrue(answer3.hasPrefix("invalid:"))
            raw.send(#"{"kind":1}"#)
            _ = try await raw.notice(containing: "not a non-empty JSON array")
            try await goodClientStillWorks("malformed frames")

            // Events that are not what they claim.
            let keys = TestEvents.keys()
            let event = try TestEvents.sign(kind: 1, content: "original", keys: keys)
            let tampered = event.jsonString.replacingOccurrences(of: "\"original\"", with: "\"forged\"")
            raw.send("[\"EVENT\",\(tampered)]")
            let idMismatch = try await raw.ok(for: event.id)
            XCTAssertFalse(idMismatch.accepted)
            XCTAssertEqual(idMismatch.message, "invalid: the id is not the hash of the event")

            let other = try TestEvents.sign(kind: 1, content: "other", keys: keys)
            let wrongSig = other.jsonString.replacingOccurrences(of: Hex.encode(other.sig), with: Hex.encode(event.sig))
            raw.send("[\"EVENT\",\(wrongSig)]")
            let badSignature = try await raw.ok(for: other.id)
            XCTAssertFalse(badSignature.accepted)
            XCTAssertEqual(badSignature.message, "invalid: the signature does not verify")

            let unsigned = try TestEvents.sign(kind: 1, content: "unsigned", keys: keys)
            let noSig = unsigned.jsonString.replacingOccurrences(of: ",\"sig\":\"\(Hex.encode(unsigned.sig))\"", with: "")
            raw.send("[\"EVENT\",\(noSig)]")
            let missing = try await raw.ok(for: unsigned.id)
            XCTAssertFalse(missing.accepted)
            XCTAssertTrue(missing.message.hasPrefix("invalid:") && missing.message.contains("sig"), missing.message)

            let huge = try TestEvents.sign(kind: 1, content: String(repeating: "x", count: 300_000), keys: keys)
            raw.send(ClientMessage.event(huge).jsonString)
            let oversized = try await raw.ok(for: huge.id)
            XCTAssertFalse(oversized.accepted)
            XCTAssertTrue(oversized.message.hasPrefix("invalid: event is"), oversized.message)
            let storedCount = try await relay.storedEventCount()
            XCTAssertEqual(storedCount, 1, "only the good client's event is stored")
            try await goodClientStillWorks("invalid events")

            // Filter floods and subscription limits.
            raw.send(ClientMessage.req(subscriptionID: "flood", filters: Array(repeating: Filter(kinds: [1]), count: 25)).jsonString)
            let answer4 = try await raw.closed("flood")
            XCTAssertTrue(answer4.hasPrefix("invalid:"))
            let manyAuthors = (0..<600).map { _ in TestEvents.keys().publicKey }
            raw.send(ClientMessage.req(subscriptionID: "wide", filters: [Filter(authors: manyAuthors)]).jsonString)
            let answer5 = try await raw.closed("wide")
            XCTAssertTrue(answer5.hasPrefix("invalid:"))
            raw.send(#"["REQ","typed",{"kinds":"everything"}]"#)
            let answer6 = try await raw.closed("typed")
            XCTAssertTrue(answer6.hasPrefix("invalid: filter is malformed"))
            for i in 0..<5 { raw.send(ClientMessage.req(subscriptionID: "s\(i)", filters: [Filter(kinds: [7])]).jsonString) }
            raw.send(ClientMessage.req(subscriptionID: "s5", filters: [Filter(kinds: [7])]).jsonString)
            let answer7 = try await raw.closed("s5")
            XCTAssertTrue(answer7.hasPrefix("blocked:"))
            raw.send(ClientMessage.close(subscriptionID: "s0").jsonString)
            raw.send(ClientMessage.req(subscriptionID: "s6", filters: [Filter(kinds: [7])]).jsonString)
            _ = try await raw.next("EOSE after a CLOSE freed a slot") { $0 == .eose(subscriptionID: "s6") }
            raw.send(#"["COUNT","c1",{}]"#)
            let answer8 = try await raw.closed("c1")
            XCTAssertTrue(answer8.hasPrefix("error:"))

            // NIP-42: wrong challenge, wrong relay, then right.
            guard let challenge = raw.challenge else { throw TestFailure("no challenge") }
            var rng = SystemRandomNumberGenerator()
            let wrongChallenge = try NIP42.authEvent(challenge: "guess", relayURL: relay.url, createdAt: TestEvents.now(), keys: keys, rng: &rng)
            raw.send(ClientMessage.auth(wrongChallenge).jsonString)
            let refusedChallenge = try await raw.ok(for: wrongChallenge.id)
            XCTAssertFalse(refusedChallenge.accepted)
            XCTAssertTrue(refusedChallenge.message.contains("challenge"), refusedChallenge.message)
            let wrongRelay = try NIP42.authEvent(challenge: challenge, relayURL: "wss://elsewhere.example", createdAt: TestEvents.now(), keys: keys, rng: &rng)
            raw.send(ClientMessage.auth(wrongRelay).jsonString)
            let refusedRelay = try await raw.ok(for: wrongRelay.id)
            XCTAssertFalse(refusedRelay.accepted)
            XCTAssertTrue(refusedRelay.message.contains("relay"), refusedRelay.message)
            let stale = try NIP42.authEvent(challenge: challenge, relayURL: relay.url, createdAt: TestEvents.now() - 3600, keys: keys, rng: &rng)
            raw.send(ClientMessage.auth(stale).jsonString)
            let refusedStale = try await raw.ok(for: stale.id)
            XCTAssertFalse(refusedStale.accepted)
            XCTAssertTrue(refusedStale.message.contains("created_at"), refusedStale.message)
            let right = try NIP42.authEvent(challenge: challenge, relayURL: relay.url + "/", createdAt: TestEvents.now(), keys: keys, rng: &rng)
            raw.send(ClientMessage.auth(right).jsonString)
            let accepted = try await raw.ok(for: right.id)
            XCTAssertTrue(accepted.accepted, accepted.message)

            // Too fast: 10 events a minute on this connection (3 were spent above, a few may
            // have refilled since).
            let burst = try (0..<25).map { try TestEvents.sign(kind: 1, content: "burst \($0)", keys: keys) }
            for event in burst { raw.send(ClientMessage.event(event).jsonString) }
            var answers: [(accepted: Bool, message: String)] = []
            for event in burst { answers.append(try await raw.ok(for: event.id)) }
            let refused = answers.filter { !$0.accepted }
            XCTAssertGreaterThanOrEqual(refused.count, 13, "\(answers)")
            XCTAssertTrue(refused.allSatisfy { $0.message.hasPrefix("rate-limited:") }, "\(answers)")
            try await goodClientStillWorks("a burst on another connection")

            // A message beyond the frame ceiling (twice the event limit) ends that connection.
            let flooder = RawClient(url: relay.url)
            defer { flooder.close() }
            try await eventually("the flooder's challenge") { flooder.challenge != nil }
            flooder.send("[\"EVENT\",\"" + String(repeating: "A", count: 600_000) + "\"]")
            try await eventually("the flooder's disconnection") { flooder.hasEnded }
            XCTAssertEqual(flooder.serverCloseCode, "messageTooLarge")
            try await eventually("the relay forgetting the flooder") { relay.connectionCount == 2 }
            try await goodClientStillWorks("a frame over the ceiling")
            XCTAssertFalse(raw.hasEnded, "the misbehaving but in-bounds client is still connected")
            await relay.close()
            try await eventually("every connection closed by the shutdown") { raw.hasEnded }
        }
    }
}
