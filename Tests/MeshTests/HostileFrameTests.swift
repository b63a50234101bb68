@testable import Mesh
import TestSupport
import XCTest

/// The hostile frames issue 14 names, each refused with its spec name and leaving the router
/// exactly as it was (caches, store, assemblies, links, deliveries, transmissions), and no
/// action out.
final class HostileFrameTests: XCTestCase {
    let link = LinkID(1)

    /// Feeds `frame` to `router` and checks the refusal and that nothing changed but the count.
    func assertRefused(_ frame: [UInt8], _ expected: MeshError, router: inout MeshRouter<SplitMix64>, now: UInt64 = MeshFixture.now,
                       file: StaticString = #filePath, line: UInt = #line) {
        let before = RouterSnapshot(router)
        let dropped = router.counters.dropped[expected.rawValue, default: 0]
        var actions: [MeshAction] = []
        let refusal = router.receive(frame, on: link, now: now, actions: &actions)
        XCTAssertEqual(refusal, expected, file: file, line: line)
        XCTAssertTrue(actions.isEmpty, "a refused frame produced actions", file: file, line: line)
        XCTAssertEqual(RouterSnapshot(router), before, "a refused frame changed the router", file: file, line: line)
        XCTAssertEqual(router.counters.dropped[expected.rawValue, default: 0], dropped + 1, file: file, line: line)
        // Time passing does not release anything either.
        XCTAssertTrue(router.tick(now: now + 100).isEmpty, file: file, line: line)
    }

    func testBadSignatureIsRefusedAndDoesNotPoisonTheSeenCache() throws {
        var router = MeshFixture.receiver()
        let packet = try MeshFixture.dm()
        var forged = packet.encoded
        forged[forged.count - 1] ^= 0x01
        assertRefused(forged, .badSignature, router: &router)
        var payloadAltered = packet.encoded
        payloadAltered[30] ^= 0x01
        assertRefused(payloadAltered, .badSignature, router: &router)
        // The genuine packet with the same id is still accepted afterwards.
        XCTAssertNil(feed(&router, packet.encoded, now: MeshFixture.now))
    }

    /// Receives one frame on link 1; returns the refusal, if any.
    func feed(_ router: inout MeshRouter<SplitMix64>, _ frame: [UInt8], now: UInt64 = MeshFixture.now) -> MeshError? {
        var actions: [MeshAction] = []
        return router.receive(frame, on: link, now: now, actions: &actions)
    }

    func testTTLAboveSevenAndZeroAreRefused() throws {
        var router = MeshFixture.receiver()
        var bytes = try MeshFixture.dm().encoded
        bytes[2] = 8
        assertRefused(bytes, .badTTL, router: &router)
        bytes[2] = 0xFF
        assertRefused(bytes, .badTTL, router: &router)
        bytes[2] = 0
        assertRefused(bytes, .badTTL, router: &router)
    }

    func testTruncatedFramesAreRefused() throws {
        var router = MeshFixture.receiver()
        let bytes = try MeshFixture.dm().encoded
        for length in [0, 1, 15, 19, 27, 29, 40, bytes.count - 65, bytes.count - 1] {
            assertRefused(Array(bytes.prefix(length)), .truncated, router: &router)
        }
        assertRefused(bytes + [0], .trailingBytes, router: &router)
    }

    func testFragmentIndexAtOrBeyondTotalIsRefused() throws {
        var router = MeshFixture.receiver()
        let frame = FragmentFrame(fragmentID: 0x0102_0304_0506_0708, index: 3, total: 3, originalType: .dm,
                                  chunk: [UInt8](repeating: 0, count: 100))
        assertRefused(frame.encoded, .fragmentIndex, router: &router)
        var beyond = frame.encoded
        beyond[10] = 0xFF
        assertRefused(beyond, .fragmentIndex, router: &router)
        let single = FragmentFrame(fragmentID: 1, index: 0, total: 1, originalType: .dm, chunk: [1, 2, 3, 4, 5])
        assertRefused(single.encoded, .fragmentTotal, router: &router)
        assertRefused(Array(frame.encoded.prefix(15)), .truncated, router: &router)
    }

    func testOversizedReassemblyIsRefusedBeforeBuffering() throws {
        var router = MeshFixture.receiver()
        // 500 chunks of 494 bytes claim ~247 KB for a type capped at 65535 + 126.
        let huge = FragmentFrame(fragmentID: 0x4343, index: 0, total: 500, originalType: .nostrEvent, chunk: [UInt8](repeating: 0, count: 494))
        assertRefused(huge.encoded, .reassemblyTooLarge, router: &router)
        // A final chunk alone: c counts as 5, and 13200 chunks of 5 are over the cap too.
        let final = FragmentFrame(fragmentID: 0x4344, index: 13199, total: 13200, originalType: .nostrEvent, chunk: [1])
        assertRefused(final.encoded, .reassemblyTooLarge, router: &router)
        // An announce (≤ 638 bytes) cannot take 100 chunks of 170.
        let announce = FragmentFrame(fragmentID: 0x4242, index: 0, total: 100, originalType: .announce, chunk: [UInt8](repeating: 0, count: 170))
        assertRefused(announce.encoded, .reassemblyTooLarge, router: &router)
        XCTAssertEqual(router.footprint.assemblies, 0)
    }

    func testStaleAndFutureTimestampsAreRefused() throws {
        var router = MeshFixture.receiver()
        let now = MeshFixture.now
        assertRefused(try MeshFixture.dm(at: now - 24 * 3_600_000 - 1).encoded, .stale, router: &router)
        assertRefused(try MeshFixture.dm(at: now + 60_001).encoded, .future, router: &router)
        let announce = try Packet.sign(type: .announce, timestamp: now - 120_001, recipient: nil,
                                       payload: Announce(capabilities: [.dm], neighbours: []).encoded(), key: MeshFixture.key(9))
        assertRefused(announce.encoded, .stale, router: &router)
        // The edges of the window pass.
        XCTAssertNil(feed(&router, try MeshFixture.dm(at: now - 24 * 3_600_000).encoded, now: now))
        XCTAssertNil(feed(&router, try MeshFixture.dm(at: now + 60_000).encoded, now: now))
    }

    func testReplayIsADuplicateWhateverTheTTL() throws {
        var router = MeshFixture.receiver()
        let packet = try MeshFixture.dm()
        XCTAssertNil(feed(&router, packet.encoded, now: MeshFixture.now))
        assertRefused(packet.encoded(ttl: 3), .duplicate, router: &router)
        XCTAssertEqual(router.counters.duplicates, 1)
    }

    func testOtherStructuralRefusals() throws {
        var router = MeshFixture.receiver()
        var bytes = try MeshFixture.dm().encoded
        bytes[0] = 2
        assertRefused(bytes, .badVersion, router: &router)
        bytes[0] = 1
        bytes[1] = 0x99
        assertRefused(bytes, .unknownType, router: &router)
        bytes[1] = 0x10
        bytes[3] = 0x03
        assertRefused(bytes, .badFlags, router: &router)
        assertRefused([UInt8](repeating: 1, count: 510), .frameTooLarge, router: &router)
        // A sender id that is not the key's.
        var mismatch = try MeshFixture.dm().encoded
        mismatch[12] ^= 0x80
        assertRefused(mismatch, .senderMismatch, router: &router)
    }
}
