import Foundation

/// Locates the vendored vectors under `Tests/Fixtures` and the repository root, so tests run
/// from any working directory (a clone has no `../shared`).
public enum Fixtures {
    /// `Tests/TestSupport/Fixtures.swift` → repository root.
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static let directory: URL = repositoryRoot.appendingPathComponent("Tests/Fixtures")

    public static func url(_ relativePath: String) -> URL { directory.appendingPathComponent(relativePath) }

    public static func data(_ relativePath: String) throws -> Data { try Data(contentsOf: url(relativePath)) }

    /// The Python of the interop venv `make setup` creates (`$BURROW_VENV` overrides `.venv`).
    public static var venvPython: URL {
        if let venv = ProcessInfo.processInfo.environment["BURROW_VENV"], !venv.isEmpty {
            return URL(fileURLWithPath: venv).appendingPathComponent("bin/python")
        }
        return repositoryRoot.appendingPathComponent(".venv/bin/python")
    }

    /// Python scripts that drive third-party peers (nostr-sdk, mdk-python, relays).
    public static func peerScript(_ name: String) -> URL {
        repositoryRoot.appendingPathComponent("Tests/Interop/peers").appendingPathComponent(name)
    }
}
