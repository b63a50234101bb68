import Foundation

/// Ports on 127.0.0.1 for the suites' processes and radios: free ones (bound to port 0 and
/// released together, so the kernel hands out distinct ones), and whether one can be bound now.
public enum LoopbackPorts {
    public enum Kind {
        case udp, tcp
        var socketType: Int32 { self == .udp ? Int32(SOCK_DGRAM.rawValue) : Int32(SOCK_STREAM.rawValue) }
    }

    /// `count` ports free right now.
    public static func free(_ count: Int, _ kind: Kind = .udp) throws -> [Int] {
        var ports: [Int] = []
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        for _ in 0..<count {
            let fd = socket(AF_INET, kind.socketType, 0)
            guard fd >= 0 else { throw POSIXFailure(call: "socket", errno: errno) }
            sockets.append(fd)
            var address = loopback(port: 0)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            guard bound else { throw POSIXFailure(call: "bind", errno: errno) }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }

    /// Whether 127.0.0.1:`port` can be bound now (nobody holds it).
    public static func canBind(_ port: Int, _ kind: Kind = .udp) -> Bool {
        let fd = socket(AF_INET, kind.socketType, 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        return address
    }
}
