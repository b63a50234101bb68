import Logging
import Mesh
import MeshLinks

extension MeshService {
    /// BlueZ over D-Bus (Docs/protocols/mesh.md 11.1): the advertisement carries the first four bytes of the
    /// mesh id and is re-registered after each key rotation and when an invite opens or closes.
    static func startBlueZ(_ setup: MeshSetup, adapter: String?, dmIdentityKeys: [[UInt8]], logger: Logger) async throws -> MeshService {
        let identity = newIdentity()
        let transport: BlueZTransport
        do {
            transport = try await BlueZTransport.start(adapter: adapter, shortID: Array(identity.current.id.bytes.prefix(4)))
        } catch let error as MeshLinkError {
            switch error {
            case .noAdapter(let m): throw MeshNodeError.noAdapter(m)
            case .bluetoothDenied(let m): throw MeshNodeError.bluetoothDenied(m)
            case .bluez(let m): throw MeshNodeError.noAdapter("bluetoothd refused the mesh: \(m) (try --mesh udp:PORT,PEER,…)")
            case .invalidLink(let m): throw NodeError.invalidInput("--mesh bluez: \(m)")
            default: throw MeshNodeError.noAdapter("BlueZ did not start: \(error) (try --mesh udp:PORT,PEER,…)")
            }
        }
        let service = MeshService(transport: transport, setup: setup, identity: identity, dmIdentityKeys: dmIdentityKeys, logger: logger) {
            id, inviteOpen in
            do { try await transport.advertise(shortID: Array(id.bytes.prefix(4)), inviteOpen: inviteOpen) } catch {
                logger.warning("the mesh advertisement was not updated", metadata: ["error": "\(error)"])
            }
        }
        service.run()
        return service
    }
}

extension BlueZTransport: LinkRoleReporting {
    /// The notify link is this node's peripheral side; every other link is a connection it made.
    public func role(of link: LinkID) -> String { link == Self.notifyLink ? "peripheral" : "central" }
}
