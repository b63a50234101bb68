@testable import Conformance
import Crypto
import Feed
import Foundation
import Mesh
import Nostr
import TestSupport
import XCTest

/// Sessions beyond the transcripts: a short encounter resumed at the next meeting with nothing
/// lost, and hostile packets dropped or refused with no change to what a node holds.
final class FeedSessionTests: XCTestCase {
    private struct Case {
        let entry: JSONValue
        let a: (chains: FeedChains, feedID: [UInt8])
        let b: (chains: FeedChains, feedID: [UInt8])
        let pairKey: [UInt8]
    }

    private func load(_ name: String) throws -> Case {
        let root = try JSONValue.parse([UInt8](try Fixtures.data("feed/sync.json")))
        let entry = try XCTUnwrap(root["cases"]?.arrayValue?.first { $0["name"]?.stringValue == name })
        return Case(entry: entry,
                    a: try FeedConformance.sessionNode(entry["nodes"]?["a"], name: "a", window: 10_000),
                    b: try FeedConformance.sessionNode(entry["nodes"]?["b"], name: "b", window: 10_000),
                    pairKey: try Hex.decode(XCTUnwrap(entry["pair_key"]?.stringValue)))
    }

    private func meshKey(_ byte: UInt8) throws -> [UInt8] { try MeshKey(seed: [UInt8](repeating: byte, count: 32)).publicKey }

    private func sessions(_ c: Case, _ meshA: [UInt8], _ meshB: [UInt8]) -> (FeedSession, FeedSession) {
        (FeedSession(link: FeedConformance.linkPair(pairKey: c.pairKey, own: meshA, peer: meshB), peerFeedID: c.b.feedID),
         FeedSession(link: FeedConformance.linkPair(pairKey: c.pairKey, own: meshB, peer: meshA), peerFeedID: c.a.feedID))
    }

    func testAShortEncounterResumesAtTheNextMeetingWithNothingLost() throws {
        let c = try load("short-encounter")
        let first = sessions(c, try meshKey(1), try meshKey(2))
        var cut = FeedSessionRun(first.0, first.1, mtu: 23, budget: 400)
        try cut.run((c.a.chains, c.b.chains))
        XCTAssertTrue(cut.transcript.contains { !$0.delivered }, "the budget cut the first meeting short")
        let aFeedAtB = try XCTUnwrap(c.b.chains.followed[c.a.feedID])
        XCTAssertEqual(aFeedAtB.held, [7, 8, 9], "what crossed is held, not lost")

        // They meet again later: new mesh keys (a restart), a new link, no budget.
        let second = sessions(c, try meshKey(3), try meshKey(4))
        var resumed = FeedSessionRun(second.0, second.1, mtu: 23, budget: nil)
        try resumed.run((c.a.chains, c.b.chains))
        let ranges = resumed.transcript.filter { $0.side == 1 && $0.packet.type == .range }
        XCTAssertFalse(ranges.isEmpty, "B asks for the gap it holds")

        let aAtB = try XCTUnwrap(c.b.chains.followed[c.a.feedID])
        XCTAssertEqual(aAtB.range, 0...9)
        XCTAssertEqual(aAtB.held, [])
        XCTAssertEqual(aAtB.head, c.a.chains.own.head)
        for sequence in 0...9 as ClosedRange<UInt32> {
            XCTAssertEqual(aAtB.entries[sequence]?.envelope.bytes, c.a.chains.own.entries[sequence]?.envelope.bytes)
        }
        let bAtA = try XCTUnwrap(c.a.chains.followed[c.b.feedID])
        XCTAssertEqual(bAtA.range, 0...5, "A backfills what the first meeting left below its anchor")
        let cAtB = try XCTUnwrap(c.b.chains.followed.first { $0.key != c.a.feedID }?.value)
        XCTAssertEqual(cAtB.range, 0...9, "the third contact's feed, carried by A, arrives too")
    }

    private func summaries(_ chains: FeedChains) -> [[UInt8]: FeedSyncSummary] {
        Dictionary(uniqueKeysWithValues: chains.followedFeedIDs.map { ($0, chains.summary(of: $0)) })
    }

    func testHostilePacketsAreDroppedOrRefusedWithNoChange() throws {
        let c = try load("first-meeting")
        let meshA = try meshKey(5), meshB = try meshKey(6)
        var (a, b) = sessions(c, meshA, meshB)
        let requests = try a.open(c.a.chains)
        _ = try b.open(c.b.chains)
        // B answers A's requests once, so real chunks exist to tamper with.
        let answer = try b.step(delivered: requests.map { ($0.type, $0.payload) }, store: c.b.chains)
        let chunk = try XCTUnwrap(answer.sent.first { $0.type == .chunk })
        let before = summaries(c.a.chains)

        // A stranger without the pair key: the link refuses it.
        var stranger = FeedConformance.linkPair(pairKey: [UInt8](repeating: 9, count: 32), own: meshB, peer: meshA)
        let forged = try stranger.seal(chunk.frames, type: .chunk)
        // A flipped bit in a sealed payload.
        var flipped = chunk.payload
        flipped[flipped.count - 20] ^= 1
        // Frames that break 8.4, sealed with the real key: an offer claiming entries of nothing.
        var bLink = b.link
        let badOffer = try bLink.seal([UInt8](repeating: 1, count: 32) + [0xFF, 0xFF, 0xFF, 0xFF] + [0, 0, 0, 1], type: .offer)
        let tooShort = try bLink.seal([UInt8](repeating: 1, count: 35), type: .request)
        // A chunk whose envelope does not hash to its id, and one for a feed A never asked for.
        var tamperedFrames = chunk.frames
        tamperedFrames[0] ^= 1
        let mismatched = try bLink.seal(tamperedFrames, type: .chunk)
        let outsider = Curve25519.Signing.PrivateKey()
        let unfollowed = try Envelope.sign(audience: "contacts", contentEncoded: [1, 2, 3],
                                           feedID: FeedKeys.feedID(identityKey: Array(outsider.publicKey.rawRepresentation)),
                                           previous: nil, sequence: 0, timestamp: 1, type: "post", identity: outsider)
        let unrequested = try bLink.seal(SyncFrame.chunk(messageID: unfollowed.messageID, envelope: unfollowed.bytes).bytes, type: .chunk)

        let step = try a.step(delivered: [(.chunk, forged), (.chunk, flipped), (.offer, badOffer), (.request, tooShort),
                                          (.chunk, mismatched), (.chunk, unrequested), (.chunk, chunk.payload)], store: c.a.chains)
        let outcomes = step.deliveries.map { delivery -> String in
            switch delivery {
            case .dropped(let error): return error.rawValue
            case .chunk(let received):
                switch received.result {
                case .success(let status): return status.rawValue
                case .failure(let error): return error.rawValue
                }
            case .frames(let count): return "frames \(count)"
            }
        }
        XCTAssertEqual(outcomes, ["link_failed", "link_failed", "bad_frame", "bad_frame", "message_id_mismatch", "feed_id_mismatch",
                                  "link_replay"])
        XCTAssertEqual(summaries(c.a.chains), before, "nothing hostile changed what A holds")
        let acks = try step.sent.filter { $0.type == .ack }.flatMap { try SyncFrame.decode($0.frames, as: .ack) }
        XCTAssertEqual(acks.count, 2)
        XCTAssertTrue(acks.allSatisfy { if case .ack(_, let refused) = $0 { return refused } else { return false } })
    }
}
