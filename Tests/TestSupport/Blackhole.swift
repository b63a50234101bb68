import Foundation

/// A TCP listener on 127.0.0.1 that never reads or answers: a relay that swallows time.
public final class Blackhole: @unchecked Sendable {
    public let fd: Int32
    public let url: String

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        guard withUnsafePointer(to: &address, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }) == 0,
              listen(fd, 64) == 0,
              withUnsafeMutablePointer(to: &address, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }) == 0
        else { throw POSIXError(.EADDRINUSE) }
        url = "ws://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    /// Connections that reached the backlog so far (accepted and closed here).
    public func acceptedConnections() -> Int {
        var count = 0
        while true {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return count }
            Glibc.close(client)
            count += 1
        }
    }

    public func close() { Glibc.close(fd) }
}

