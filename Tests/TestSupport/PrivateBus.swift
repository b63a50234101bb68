import Foundation
import XCTest

/// The D-Bus contract tests' world (BlueZ, GeoClue): a private `dbus-daemon` (unix socket in a
/// temp dir, its own config) and, on it, python-dbusmock with one of our templates in
/// `Tests/Fixtures` as the system service. Each test drives its mock through a control interface
/// of the template.
public enum DBusMockPrerequisites {
    public static let dbusDaemon = "/usr/bin/dbus-daemon"
    public static let python = "/usr/bin/python3"

    /// Skips (only) when the Debian packages `make setup` installs are missing.
    public static func require() throws {
        guard FileManager.default.isExecutableFile(atPath: dbusDaemon) else {
            throw XCTSkip("dbus-daemon is not installed (make setup installs the dbus package)")
        }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: python)
        probe.arguments = ["-c", "import dbusmock, dbus, gi"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        do { try probe.run() } catch { throw XCTSkip("\(python) is missing") }
        probe.waitUntilExit()
        guard probe.terminationStatus == 0 else {
            throw XCTSkip("\(python) cannot import dbusmock (make setup installs python3-dbusmock)")
        }
    }
}

/// A dbus-daemon of our own; `denyBlueZ` adds a policy refusing every message to org.bluez, as a
/// system bus does for users it does not allow to use Bluetooth.
public final class PrivateBus: @unchecked Sendable {
    public let directory: URL
    public let address: String
    private let daemon: PeerProcess

    public init(denyBlueZ: Bool = false) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let policy = denyBlueZ ? "<deny send_destination=\"org.bluez\"/>" : ""
        let config = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(directory.path)/bus</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
            \(policy)
          </policy>
        </busconfig>
        """
        let configURL = directory.appendingPathComponent("bus.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        daemon = try PeerProcess(
            executable: URL(fileURLWithPath: DBusMockPrerequisites.dbusDaemon),
            arguments: ["--config-file=\(configURL.path)", "--nofork", "--print-address"]
        )
        address = try await daemon.waitForLine(prefix: "unix:", timeout: .seconds(10))
    }

    /// Ends the daemon at once. SIGKILL, not `PeerProcess.stop`'s SIGTERM: children of the test
    /// runner inherit its blocked signal mask, so a SIGTERM would only wait out the timeout.
    public func stop() { daemon.kill() }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
