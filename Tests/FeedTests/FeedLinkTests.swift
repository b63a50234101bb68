import Feed
import Mesh
import XCTest

/// Link sealing across a pair-key rotation (feed.md 8.3): packets are sealed with the newest
/// pair key, a receiver also opens what the peer sealed with the previous one, and counters
/// belong to the pair of mesh keys, so they go on under the new key.
final class FeedLinkTests: XCTestCase {
    private let oldKey = [UInt8](repeating: 0x11, count: 32)
    private let newKey = [UInt8](repeating: 0x22, count: 32)
    private let strangerKey = [UInt8](repeating: 0x33, count: 32)

    private func link(_ key: [UInt8], previous: [UInt8]? = nil, own: MeshKey, peer: MeshKey) -> FeedLink {
        FeedLink(pairKey: key, previousPairKey: previous, ownMeshKey: own.publicKey, peerMeshKey: peer.publicKey, ownMeshID: own.id.bytes,
                 peerMeshID: peer.id.bytes)
    }

    func testAReceiverOpensThePreviousPairKeyAndNothingOlder() throws {
        let alice = try MeshKey(seed: [UInt8](repeating: 1, count: 32)), bob = try MeshKey(seed: [UInt8](repeating: 2, count: 32))
        // Alice has not made the new pair key yet; Bob has, and keeps the old one for receipt.
        var aliceOld = link(oldKey, own: alice, peer: bob)
        var bobNew = link(newKey, previous: oldKey, own: bob, peer: alice)
        let frames = [UInt8](repeating: 0xAB, count: 36)

        let sealedOld = try aliceOld.seal(frames, type: .request)
        XCTAssertEqual(try bobNew.open(sealedOld, type: .request), frames, "the previous pair key still opens")

        // Alice makes the new key too; her link goes on from counter 1.
        var aliceNew = aliceOld.rekeyed(pairKey: newKey, previousPairKey: oldKey, ownMeshKey: alice.publicKey, peerMeshKey: bob.publicKey)
        let sealedNew = try aliceNew.seal(frames, type: .request)
        XCTAssertEqual(try bobNew.open(sealedNew, type: .request), frames, "the newest opens")

        // Bob seals with the newest only: Alice's old link cannot open it.
        let fromBob = try bobNew.seal(frames, type: .request)
        XCTAssertThrowsError(try aliceOld.open(fromBob, type: .request)) { XCTAssertEqual($0 as? FeedError, .linkFailed) }
        XCTAssertEqual(try aliceNew.open(fromBob, type: .request), frames)

        // A key older than the previous one is refused.
        var stranger = link(strangerKey, own: alice, peer: bob)
        for _ in 0..<5 { _ = try stranger.seal(frames, type: .request) }
        let sealedStranger = try stranger.seal(frames, type: .request)
        XCTAssertThrowsError(try bobNew.open(sealedStranger, type: .request)) { XCTAssertEqual($0 as? FeedError, .linkFailed) }
    }

    func testCountersGoOnAcrossARekeySoAnOldPacketIsAReplay() throws {
        let alice = try MeshKey(seed: [UInt8](repeating: 1, count: 32)), bob = try MeshKey(seed: [UInt8](repeating: 2, count: 32))
        var aliceLink = link(oldKey, own: alice, peer: bob)
        var bobLink = link(oldKey, own: bob, peer: alice)
        let frames = [UInt8](repeating: 0x5A, count: 36)
        let first = try aliceLink.seal(frames, type: .request)
        let second = try aliceLink.seal(frames, type: .request)
        XCTAssertEqual(try bobLink.open(first, type: .request), frames)
        XCTAssertEqual(try bobLink.open(second, type: .request), frames)

        // Both make the new pair key; the links go on with their counters.
        aliceLink = aliceLink.rekeyed(pairKey: newKey, previousPairKey: oldKey, ownMeshKey: alice.publicKey, peerMeshKey: bob.publicKey)
        bobLink = bobLink.rekeyed(pairKey: newKey, previousPairKey: oldKey, ownMeshKey: bob.publicKey, peerMeshKey: alice.publicKey)
        XCTAssertEqual(aliceLink.nextCounter, 2, "no counter is reused under the new key")
        XCTAssertEqual(bobLink.lastReceived, 1)

        // A packet sealed under the old key, replayed after the rekey, opens with the previous
        // key but its counter is not above the last accepted.
        XCTAssertThrowsError(try bobLink.open(second, type: .request)) { XCTAssertEqual($0 as? FeedError, .linkReplay) }
        let third = try aliceLink.seal(frames, type: .request)
        XCTAssertEqual(try bobLink.open(third, type: .request), frames)
        XCTAssertEqual(bobLink.lastReceived, 2)
    }
}
