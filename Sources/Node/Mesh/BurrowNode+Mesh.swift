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
extension BurrowNode {
    /// The running mesh, if `run` (or a nearby-invite command) brought one up.
    public var mesh: MeshService? { meshSlot.withLock { $0 } }

    public func attachMesh(_ service: MeshService?) { meshSlot.withLock { $0 = service } }

    /// This node's Pigeon identity key (mesh DMs to its daily tag are ours), if it has one.
    public func meshDMIdentityKeys() -> [[UInt8]] {
        guard let key = try? store.transaction({ try loadPigeon($0)?.local.identityKey.publicKey.bytes }) else { return [] }
        return [key]
    }

    /// `burrow mesh status`: `mesh_off` unless the mesh is up in this process.
    public func meshStatus() throws -> MeshStatusView {
        guard let mesh else { throw MeshNodeError.meshOff("the mesh is not running: start `burrow run --mesh udp:…` or `--mesh bluez`") }
        return mesh.status()
    }

    // MARK: Receiving

    /// Queues a delivered DM frame for `drainMeshDMs` (called outside the mailbox, at once).
    public func enqueueMeshDM(_ frame: [UInt8], from sender: MeshID) {
        meshDMQueue.withLock { queue in
            queue.append(MeshDMFrame(frame: frame, sender: sender))
            if queue.count > 1024 { queue.removeFirst(queue.count - 1024) }
        }
    }

    /// Steps every queued mesh DM frame through the engine (a mailbox job: `run`'s, or `dm
    /// send` waiting for a handshake answer). Replies go straight back to the frame's sender;
    /// frames for known contacts (queued messages, acks) leave through the DM outbox.
    func drainMeshDMs(report: inout SyncReport) async {
        let frames = meshDMQueue.withLock { queue in
            defer { queue = [] }
            return queue
        }
        guard !frames.isEmpty else { return }
        let before = report.updates.count
        for item in frames {
            do {
                let replies = try deliverDMFrame(item.frame, from: .mesh(item.sender), processedMark: nil, report: &report)
                for reply in replies {
                    try? await mesh?.send(type: .dm, recipient: item.sender, payload: reply)
                }
            } catch {
                report.fail("", "mesh DM frame: \(Self.describe(error))")
            }
        }
        queueReceipts(for: report.updates[before...])
    }

    /// A mesh delivery for `run` (a mailbox job): events go through the pipeline as if from a
    /// relay, and a group event of ours is passed on to the group's relays (8.4); queued DM
    /// frames are stepped. Beacons and invite messages belong to nearby-invite sessions.
    /// `resubscribe`: the set of groups changed, as `handleLive` says.
    public func handleMeshDelivery(_ delivery: MeshDelivery, timeout: Duration) async -> (report: SyncReport, resubscribe: Bool) {
        var report = SyncReport()
        var resubscribe = false
        switch delivery.content {
        case .nostrEvent(let event):
            (report, resubscribe) = await handleMeshEvent(event, timeout: timeout)
        case .dm:
            // `run` queued the frame as it arrived (`enqueueMeshDM`); it may be stepped already.
            await drainMeshDMs(report: &report)
            liveSender.kick(self, deletions: [], timeout: timeout)
        case .beacon, .join:
            break
        }
        return (report, resubscribe)
    }

    /// An event the mesh carried: through the pipeline as if from a relay, then on to the
    /// group's relays (8.4) — only when the pipeline applied it for one of our groups. Anyone in
    /// radio range can sign a 445 with our group's `h` tag; what we could not decrypt, or had
    /// already processed, is not ours to republish.
    func handleMeshEvent(_ event: Event, timeout: Duration) async -> (report: SyncReport, resubscribe: Bool) {
        let (report, resubscribe) = await handleLive(event, timeout: timeout)
        if event.kind == MarmotKind.groupEvent, report.applied.contains(event.id) { bridgeToRelays(event) }
        return (report, resubscribe)
    }

    /// Publishes a group event of ours to the group's relays in the background (a relay that
    /// is down costs the live loop nothing), at most `MeshBridge.maxConcurrent` at once.
    func bridgeToRelays(_ event: Event) {
        guard let hTag = Self.hTag(event), let ours = try? relays(),
              let urls = try? store.transaction({ tx -> [String]? in
                  guard let row = try tx.groups.list().first(where: { Hex.encode($0.nostrGroupID) == hTag && ($0.state == .active || $0.state == .leaving) })
                  else { return nil }
                  return relayURLs(for: try LoadedGroup(row).group, ours: ours)
              }) ?? nil
        else { return }
        if !meshBridge.launch({ [self] in _ = try? await pool(urls).publish(event, timeout: .seconds(10)) }) {
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
