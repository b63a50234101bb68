import NIOCore

/// Where a WebSocket client connects from, as far as per-address limits care: its host
/// (without the port), and whether it is this machine.
struct ClientAddress: Sendable, Equatable {
    /// The IP address text, or nil when unknown (e.g. a Unix socket).
    let host: String?
    let isLoopback: Bool

    init(_ address: SocketAddress?) {
        switch address {
        case .v4(let v4)?:
            let host = address?.ipAddress
            self.host = host
            // 127.0.0.0/8
            isLoopback = (UInt32(bigEndian: v4.address.sin_addr.s_addr) >> 24) == 127
        case .v6?:
            let host = address?.ipAddress
            self.host = host
            isLoopback = host == "::1" || (host?.hasPrefix("::ffff:127.") ?? false)
        default:
            host = nil
            isLoopback = true
        }
    }
}
