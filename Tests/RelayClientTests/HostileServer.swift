import Foundation
import TestSupport

/// `Tests/Interop/peers/hostile_ws.py`: a WebSocket server that completes the handshake and
/// then plays a script of bad behaviour (see the script's docstring for the steps).
final class HostileServer {
    let process: PeerProcess
    let url: String
    /// With `tls`, the PEM file of the server's self-signed certificate.
    let certificatePath: String?
    private let scriptFile: URL
    private let tlsDirectory: URL?

    /// Steps are JSON objects, e.g. `["await": "REQ"]`, `["text": "…"]`, `["oversized": 2_000_000]`.
    init(steps: [[String: Any]], tls: Bool = false, timeout: Duration = .seconds(20)) async throws {
        let temporary = FileManager.default.temporaryDirectory
        let name = "burrow-hostile-\(UUID().uuidString)"
        scriptFile = temporary.appendingPathComponent("\(name).json")
        tlsDirectory = tls ? temporary.appendingPathComponent(name) : nil
        try JSONSerialization.data(withJSONObject: steps).write(to: scriptFile)
        var arguments = [Fixtures.peerScript("hostile_ws.py").path, "--script", scriptFile.path, "--lifetime", "300"]
        if let tlsDirectory { arguments += ["--tls-dir", tlsDirectory.path] }
        process = try PeerProcess(executable: Fixtures.venvPython, arguments: arguments)
        do {
            let line = try await process.waitForLine(prefix: "READY ", timeout: timeout)
            url = String(line.dropFirst("READY ".count))
            certificatePath = process.lines.first { $0.hasPrefix("CERT ") }.map { String($0.dropFirst("CERT ".count)) }
        } catch {
            process.stop()
            try? FileManager.default.removeItem(at: scriptFile)
            if let tlsDirectory { try? FileManager.default.removeItem(at: tlsDirectory) }
            throw error
        }
    }

    /// Text messages the client sent, in order.
    var received: [String] {
        process.lines.filter { $0.hasPrefix("RECV ") }.map { String($0.dropFirst(5)) }
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: scriptFile)
        if let tlsDirectory { try? FileManager.default.removeItem(at: tlsDirectory) }
    }

    deinit { stop() }
}
