/// What starting or using the node's mesh fails with, beside the router's own `MeshError`
/// refusals; each names a CLI error code of Docs/protocols/mesh.md section 12.
public enum MeshNodeError: Error, Equatable, Sendable {
    /// `no_adapter`: no bluetoothd, no adapter, or one that cannot be powered (says which).
    case noAdapter(String)
    /// `bluetooth_denied`: D-Bus refused access to BlueZ.
    case bluetoothDenied(String)
    /// `mesh_off`: the command needs the running node's mesh.
    case meshOff(String)
    /// `mesh_port_in_use`: the loopback radio's port is taken.
    case portInUse(String)
    /// `no_invites`: no beacon heard (or none matching `--invite`).
    case noInvites(String)
    /// A nearby-invite outcome with its spec code (`wrong_code`, `invite_expired`, …).
    case join(code: String, message: String)
}

extension MeshNodeError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .noAdapter(let m), .bluetoothDenied(let m), .meshOff(let m), .portInUse(let m), .noInvites(let m): return m
        case .join(_, let m): return m
        }
    }
}
