import Foundation
import TestSupport
import XCTest

/// Homes for the mesh tests through the real program (CLIMeshTests, FeedMeshTests): each test
/// gets its own directory and passphrase file, homes whose only relay is an address nothing
/// listens on (every relay wait fails at once), and `burrow` processes on them.
class MeshCLITestCase: XCTestCase {
    var root: URL!
    var pass: String { root.appendingPathComponent("pass").path }
    /// A relay address nothing listens on.
    let deadRelay = "ws://127.0.0.1:9"
    /// Each home's commands wait this long for the relays (or a running node).
    var commandTimeout: TimeInterval { 2 }

    override func setUp() async throws {
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-mesh-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "mesh test passphrase".write(to: root.appendingPathComponent("pass"), atomically: true, encoding: .utf8)
    }

    override func tearDown() async throws {
        try? FileManager.default.removeItem(at: root)
    }

    func home(_ name: String) throws -> BurrowHome {
        let home = BurrowHome(path: root.appendingPathComponent(name).path, passphraseFile: pass, timeout: commandTimeout)
        try home.ok(["init", "--kdf-memory-mib", "8"])
        try home.ok(["relay", "add", deadRelay])
        return home
    }

    /// `burrow ARGS` on `home` as a process whose lines the test reads; `logLevel` sets
    /// `BURROW_LOG_LEVEL` for it (debug: what a failure message should show).
    func process(_ home: BurrowHome, _ args: [String], logLevel: String? = nil) throws -> PeerProcess {
        var environment: [String: String]?
        if let logLevel { environment = ProcessInfo.processInfo.environment.merging(["BURROW_LOG_LEVEL": logLevel]) { $1 } }
        return try PeerProcess(executable: BurrowProcess.binary,
                               arguments: args + ["--home", home.path, "--passphrase-file", pass, "--json", "--timeout", "2"],
                               environment: environment)
    }

    func object(_ line: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
    }
}
