/// What the link layers can fail with (`burrow run --mesh udp:…|bluez…` maps these to CLI codes).
public enum MeshLinkError: Error, Equatable, Sendable {
    /// `mesh_port_in_use`: the port to bind is taken.
    case portInUse(Int)
    /// A port or MTU outside its range, or a port listed twice; a short id that is not 4 bytes.
    case invalidLink(String)
    /// `no_adapter`: org.bluez absent, no (such) adapter, no LE support, or the adapter cannot be
    /// powered. The message says which and suggests `--mesh udp:…`.
    case noAdapter(String)
    /// `bluetooth_denied`: the bus or bluetoothd answered AccessDenied.
    case bluetoothDenied(String)
    /// bluetoothd refused something else during start (a registration, discovery).
    case bluez(String)
    /// A frame over the link's MTU, or for a link that does not exist: a caller bug.
    case frameRejected
    case notRunning
}
