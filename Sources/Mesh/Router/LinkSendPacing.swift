/// What one link may send so that the neighbour's budget (Docs/protocols/mesh.md 7.4: 100
/// frames/s, burst 200; 32 KiB/s, burst 64 KiB) never refuses it. A packet cut into more
/// fragments than the burst (a 4 KiB DM at MTU 23 is ~500 frames) would otherwise always lose
/// its tail: paced under the budget, it arrives whole, only later. Sans-I/O: the caller asks how
/// long to wait, waits, then spends.
public struct LinkSendPacing: Sendable {
    /// A margin under the receiver's budget for clock and scheduling jitter.
    public static let framesPerSecond = 90.0
    public static let frameBurst = 180.0
    public static let bytesPerSecond = 30.0 * 1024
    public static let byteBurst = 60.0 * 1024

    private var frames: TokenBucket
    private var bytes: TokenBucket

    public init(now: UInt64) {
        frames = TokenBucket(rate: Self.framesPerSecond, burst: Self.frameBurst, now: now)
        bytes = TokenBucket(rate: Self.bytesPerSecond, burst: Self.byteBurst, now: now)
    }

    /// Milliseconds to wait before a frame of `count` bytes may go.
    public func delay(frameOf count: Int, now: UInt64) -> UInt64 {
        max(frames.wait(for: 1, now: now), bytes.wait(for: Double(count), now: now))
    }

    /// Records a frame sent.
    public mutating func sent(frameOf count: Int, now: UInt64) {
        frames.spend(1, now: now)
        bytes.spend(Double(count), now: now)
    }
}
