import Foundation
import Logging
import Node
import RelayServer

/// The offline default: when the node's relays include the embedded relay's address and
/// nothing listens there, `burrow run` serves it in-process (RelayServer), with its data in its
/// own directory — never inside the encrypted home: it holds other people's events.
public enum EmbeddedRelay {
    static let host = BurrowNode.embeddedRelayHost
    static let port = BurrowNode.embeddedRelayPort

    public static func startIfNeeded(relays: [String], dataDirectory: String?) async throws -> RunningRelay? {
        guard relays.contains(BurrowNode.embeddedRelay), !isListening(host: host, port: port) else { return nil }
        var configuration = RelayServerConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.dataDirectory = dataDirectory ?? defaultDataDirectory
        try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        var logger = Logger(label: "burrow.relay")
        logger.logLevel = .warning
        return try await RunningRelay.start(configuration, logger: logger)
    }

    /// `$XDG_DATA_HOME/burrow-relay`, else `~/.local/share/burrow-relay`.
    public static var defaultDataDirectory: String {
        if let xdg = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], !xdg.isEmpty { return xdg + "/burrow-relay" }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/burrow-relay").path
    }

    /// Whether a TCP connection to host:port is accepted (a loopback connect answers at once).
    public static func isListening(host: String, port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return false }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
