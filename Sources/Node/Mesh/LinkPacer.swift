import Foundation
import Logging
import Mesh
import Synchronization

/// Writes the router's frames to the link layer, each link paced by `LinkSendPacing` so that a
/// neighbour's budget (mesh.md 7.4) never drops them: frames within the burst go at once, a
/// long packet's tail follows at the budget's rate. One queue and one writer per link keep its
/// frames in order.
///
/// Bounded: a link queues at most `maximumQueuedFrames` and `maximumQueuedBytes`; past them new
/// frames are dropped and counted (`paced_queue_full`), as the mesh drops what it cannot carry.
/// A stranger's sync wants (answered with up to 2 MiB, 8 a minute) thus cost a link at most
/// ~11 s of backlog, not minutes.
final class LinkPacer: Sendable {
    /// A 4 KiB DM at MTU 23 is ~520 frames: two of them fit. ~11 s at 90 frames/s.
    static let maximumQueuedFrames = 1024
    /// ~8 s of a link's byte budget at full frames.
    static let maximumQueuedBytes = 256 * 1024
    static let queueFull = "paced_queue_full"

    private struct Link {
        var pacing: LinkSendPacing
        var queue: [[UInt8]] = []
        var head = 0
        var queuedBytes = 0
        var writing = false
        var down = false
    }

    private let transport: any MeshTransport
    private let logger: Logger
    private let links = Mutex<[LinkID: Link]>([:])
    private let droppedFrames = Mutex(0)

    /// Frames dropped for a full queue (`mesh status` counts them as `paced_queue_full`).
    var dropped: Int { droppedFrames.withLock { $0 } }

    init(transport: any MeshTransport, logger: Logger) {
        self.transport = transport
        self.logger = logger
    }

    /// Queues a frame on `link`; its writer starts if it is not running.
    func transmit(_ frame: [UInt8], on link: LinkID) {
        let outcome: Outcome = links.withLock { links in
            let now = MeshService.now()
            return Self.enqueue(frame, into: &links[link, default: Link(pacing: LinkSendPacing(now: now))])
        }
        switch outcome {
        case .start: Task { await self.write(link) }
        case .queued: break
        case .full: droppedFrames.withLock { $0 += 1 }
        }
    }

    private enum Outcome { case start, queued, full }

    private static func enqueue(_ frame: [UInt8], into state: inout Link) -> Outcome {
        guard state.queuedBytes + frame.count <= maximumQueuedBytes, state.queue.count - state.head < maximumQueuedFrames else { return .full }
        state.queue.append(frame)
        state.queuedBytes += frame.count
        state.down = false
        let outcome: Outcome = state.writing ? .queued : .start
        state.writing = true
        return outcome
    }

    /// The next frame of a link and how long it must wait (taken from the queue when it need
    /// not); nil when the queue is empty, which ends the writer.
    private static func next(_ state: inout Link, now: UInt64) -> (frame: [UInt8], wait: UInt64)? {
        guard state.head < state.queue.count else {
            state.writing = false
            state.queue = []
            state.head = 0
            return nil
        }
        let frame = state.queue[state.head]
        let wait = state.pacing.delay(frameOf: frame.count, now: now)
        guard wait == 0 else { return (frame, wait) }
        state.head += 1
        state.queuedBytes -= frame.count
        state.pacing.sent(frameOf: frame.count, now: now)
        // What was sent leaves the front now and then, not per frame.
        if state.head >= 256 {
            state.queue.removeFirst(state.head)
            state.head = 0
        }
        return (frame, 0)
    }

    /// Frames a local sender lets wait on a link before it waits itself (`MeshService.send`):
    /// one burst, so a DM behind a feed session waits ~2 s at most at MTU 23.
    static let senderRoom = 180

    /// Returns once every one of `used` queues at most `senderRoom` frames (or the task is
    /// cancelled).
    func waitForRoom(on used: Set<LinkID>) async {
        while used.contains(where: { queued(on: $0) > Self.senderRoom }) {
            guard (try? await Task.sleep(for: .milliseconds(20))) != nil else { return }
        }
    }

    private func queued(on link: LinkID) -> Int { links.withLock { $0[link].map { $0.queue.count - $0.head } ?? 0 } }

    /// The link's writer: each frame waits for the budget, then goes; ends when the queue is empty.
    private func write(_ link: LinkID) async {
        while true {
            let next: (frame: [UInt8], wait: UInt64)? = links.withLock { links in
                guard links[link] != nil else { return nil }
                let next = Self.next(&links[link, default: Link(pacing: LinkSendPacing(now: 0))], now: MeshService.now())
                // A link that went down is forgotten once its writer is done.
                if next == nil, links[link]?.down == true { links[link] = nil }
                return next
            }
            guard let next else { return }
            if next.wait > 0 {
                try? await Task.sleep(for: .milliseconds(Int64(clamping: next.wait)))
                continue
            }
            do { try await transport.send(next.frame, on: link) } catch {
                logger.debug("mesh frame not written", metadata: ["link": "\(link)", "error": "\(error)"])
            }
        }
    }

    /// A link went down: what it still queued is dropped.
    func linkDown(_ link: LinkID) {
        links.withLock { links in
            guard var state = links[link] else { return }
            guard state.writing else {
                links[link] = nil
                return
            }
            state.queue = []
            state.head = 0
            state.queuedBytes = 0
            state.down = true
            links[link] = state
        }
    }
}
