import Foundation
import XCTest

/// The interop venv's Python for tests that drive a third-party peer directly. A missing venv
/// fails the test: an interop suite that quietly skips proves nothing. Only with
/// `BURROW_ALLOW_MISSING_PEERS=1` (a machine that cannot install the peers, said out loud) is
/// the test skipped instead.
public enum InteropVenv {
    public static let optOutVariable = "BURROW_ALLOW_MISSING_PEERS"

    public struct Missing: Error, CustomStringConvertible {
        public let path: String
        public var description: String {
            "interop venv not found at \(path): run `make setup` or set BURROW_VENV (or \(InteropVenv.optOutVariable)=1 to skip)"
        }
    }

    /// The venv's Python, or a failure (a skip under the opt-out) when it is absent.
    public static func python() throws -> URL {
        let python = Fixtures.venvPython
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            if ProcessInfo.processInfo.environment[optOutVariable] == "1" {
                throw XCTSkip(Missing(path: python.path).description)
            }
            throw Missing(path: python.path)
        }
        return python
    }
}
