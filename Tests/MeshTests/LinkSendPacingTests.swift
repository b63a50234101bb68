import Mesh
import XCTest

/// A sender paced by `LinkSendPacing` is never refused by the receiver's per-link budget
/// (mesh.md 7.4: 100 frames/s burst 200, 32 KiB/s burst 64 KiB), however long the packet.
final class LinkSendPacingTests: XCTestCase {
    /// Sends `count` frames of `size` bytes as a paced writer would (wait, then send), through
    /// the receiver's two buckets; returns the milliseconds it took and the frames refused.
    private func send(_ count: Int, of size: Int) -> (elapsed: UInt64, refused: Int) {
        let start: UInt64 = 1_000_000
        var now = start
        var pacing = LinkSendPacing(now: now)
        var frames = TokenBucket(rate: 100, burst: 200, now: now)
        var bytes = TokenBucket(rate: 32 * 1024, burst: 64 * 1024, now: now)
        var refused = 0
        for _ in 0..<count {
            now += pacing.delay(frameOf: size, now: now)
            XCTAssertEqual(pacing.delay(frameOf: size, now: now), 0)
            pacing.sent(frameOf: size, now: now)
            if !(frames.take(now: now) && bytes.take(Double(size), now: now)) { refused += 1 }
        }
        return (now - start, refused)
    }

    func testA4KiBDMAtMTU23ArrivesWholeAtTheFrameBudget() {
        // ~520 frames of 23 bytes: the first 180 at once, the rest at 90 a second.
        let (elapsed, refused) = send(520, of: 23)
        XCTAssertEqual(refused, 0)
        XCTAssertEqual(Double(elapsed), Double(520 - 180) / 90 * 1000, accuracy: 50)
    }

    func testFullFramesAreHeldToTheByteBudget() {
        // 509-byte frames: 60 KiB go at once (120 frames), then 30 KiB a second.
        let (elapsed, refused) = send(400, of: 509)
        XCTAssertEqual(refused, 0)
        XCTAssertEqual(Double(elapsed), Double(400 * 509 - 60 * 1024) / (30 * 1024) * 1000, accuracy: 100)
    }

    func testWithinTheBurstNothingWaits() {
        let (elapsed, refused) = send(180, of: 185)
        XCTAssertEqual(elapsed, 0)
        XCTAssertEqual(refused, 0)
    }

    func testAnUnpacedBurstIsRefusedWhichIsWhyWePace() {
        var frames = TokenBucket(rate: 100, burst: 200, now: 0)
        let refused = (0..<520).filter { _ in !frames.take(now: 0) }.count
        XCTAssertEqual(refused, 320, "without pacing a 520-frame packet loses its tail at the receiver")
    }
}
