import Foundation
import Marmot
import Mesh
import Nostr
import Store

/// How `dm send` routes: the relays of Docs/protocols/pigeon-dm.md 6.1, the mesh of 6.2, or both (`auto`,
/// the mesh only when `run` has it up).
public enum DMVia: String, Sendable {
    case auto, nostr, mesh
}

/// A DM frame the mesh delivered and the mesh id that sent it (where replies go).
struct MeshDMFrame: Sendable {
    let frame: [UInt8]
    let sender: MeshID
}

/// The node's side of the mesh (Docs/protocols/mesh.md 8.3, 8.4): carried events enter the Marmot pipeline
/// as if from a relay, DM frames the Pigeon engine; our own events and our groups' recent
/// group events go out on it.
extension MeshBridgeService {
    /// The running mesh, if `run` (or a nearby-invite command) brought one up.
    public var mesh: MeshService? { slot.withLock { $0 } }

    public func attachMesh(_ service: MeshService?) { slot.withLock { $0 = service } }

    /// `burrow mesh status`: `mesh_off` unless the mesh is up in this process.
    public func meshStatus() throws -> MeshStatusView {
        guard let mesh else { throw MeshNodeError.meshOff("the mesh is not running: start `burrow run --mesh udp:…` or `--mesh bluez`") }
        return mesh.status()
    }

    // MARK: Receiving

    /// Queues a delivered DM frame for `drainMeshDMs` (called outside the mailbox, at once).
    public func enqueueMeshDM(_ frame: [UInt8], from sender: MeshID) {
        dmQueue.withLock { queue in
            queue.append(MeshDMFrame(frame: frame, sender: sender))
            if queue.count > 1024 { queue.removeFirst(queue.count - 1024) }
        }
    }

    /// The queued DM frames, taken off the queue (for a mailbox job to step).
    func takeDMFrames() -> [MeshDMFrame] {
        dmQueue.withLock { queue in
            defer { queue = [] }
            return queue
        }
    }

    /// Publishes a group event of ours to its group's relays `urls` in the background (a relay
    /// that is down costs the live loop nothing), at most `BridgePublisher.maxConcurrent` at once.
    func bridgeToRelays(_ event: Event, urls: [String]) {
        guard !urls.isEmpty else { return }
        if !publisher.launch({ [gateway] in _ = try? await gateway.pool(urls).publish(event, timeout: .seconds(10)) }) {
            logger.debug("mesh event not bridged: every bridge slot is busy")
        }
    }

    /// An error's kind without its message (`NodeError.invalidInput`): messages can name keys
    /// (`… is already a member`), and mesh warnings name no one.
    static func errorKind(_ error: Error) -> String {
        let type = String(describing: Swift.type(of: error))
        let mirror = Mirror(reflecting: error)
        guard mirror.displayStyle == .enum else { return type }
        if let label = mirror.children.first?.label { return "\(type).\(label)" }
        return "\(type).\(error)"
    }

    // MARK: Sending

    /// Puts one of our events (or a group event of ours the relays gave us within the hour) on
    /// the mesh; whether the mesh is up.
    @discardableResult
    func carryOnMesh(_ event: Event) async -> Bool {
        guard let mesh else { return false }
        await mesh.sendEvent(event)
        return true
    }
}
