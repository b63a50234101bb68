import Foundation
import Mesh
@testable import MeshLinks
import TestSupport
import XCTest

/// The real program on BlueZ: `burrow run --mesh bluez` against the mock bluetoothd on a private
/// bus (reached through `DBUS_SYSTEM_BUS_ADDRESS`, as on a real system), and `no_adapter` when
/// bluetoothd is not there.
final class BlueZNodeTests: XCTestCase {
    var root: URL!

    override func setUp() async throws {
        try MockBlueZPrerequisites.require()
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-bluez-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "bluez passphrase".write(to: root.appendingPathComponent("pass"), atomically: true, encoding: .utf8)
    }

    override func tearDown() async throws {
        try? FileManager.default.removeItem(at: root)
    }

    func testRunRegistersTheMeshWithBluetoothdAndAdvertisesItsMeshID() async throws {
        let root: URL = self.root
        try await bounded(90) {
            let bus = try await PrivateBus()
            let mock = try await MockBlueZ(bus: bus)
            let home = BurrowHome(path: root.appendingPathComponent("alice").path, passphraseFile: root.appendingPathComponent("pass").path)
            try home.ok(["init", "--kdf-memory-mib", "8"])
            try home.ok(["relay", "add", "ws://127.0.0.1:9"])
            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
            let run = try PeerProcess(executable: BurrowProcess.binary, arguments: [
                "run", "--mesh", "bluez", "--home", home.path, "--passphrase-file", home.passphraseFile, "--json", "--timeout", "2",
            ], environment: environment)
            defer { run.kill() }
            let line = try await run.waitForLine(containing: #""type":"mesh""#, timeout: .seconds(30))
            let up = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            XCTAssertEqual(up["transport"] as? String, "bluez")
            let meshID = try XCTUnwrap(up["mesh_id"] as? String)

            XCTAssertTrue(mock.callLog.contains("RegisterApplication /org/bluez/hci0"), "\(mock.callLog)")
            let advertisement = try XCTUnwrap(mock.call("Advertisement").first?.dictValue)
            let serviceData = try XCTUnwrap(advertisement["ServiceData"]?.dictValue?[BlueZContractTests.serviceUUID]?.bytesValue)
            XCTAssertEqual(serviceData.count, 6)
            XCTAssertEqual(serviceData.dropFirst().prefix(4).map { String(format: "%02x", $0) }.joined(), String(meshID.prefix(8)),
                           "the advertised short id is the mesh id's first four bytes")

            let status = try XCTUnwrap(try home.ok(["mesh", "status"])["mesh"] as? [String: Any])
            XCTAssertEqual(status["transport"] as? String, "bluez")
            XCTAssertEqual(status["adapter"] as? String, "hci0")
            XCTAssertEqual(status["mesh_id"] as? String, meshID)
        }
    }

    func testNoBluetoothdIsNoAdapterAndSuggestsTheUDPRadio() async throws {
        let root: URL = self.root
        try await bounded(60) {
            let bus = try await PrivateBus()
            let home = BurrowHome(path: root.appendingPathComponent("bob").path, passphraseFile: root.appendingPathComponent("pass").path)
            try home.ok(["init", "--kdf-memory-mib", "8"])
            try home.ok(["relay", "add", "ws://127.0.0.1:9"])
            let result = try home.run(["run", "--mesh", "bluez"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
            XCTAssertEqual(result.status, 1)
            let last = try XCTUnwrap(result.stdout.split(separator: "\n").last.map(String.init))
            let error = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])?["error"] as? [String: Any])
            XCTAssertEqual(error["code"] as? String, "no_adapter", result.stdout)
            XCTAssertTrue((error["message"] as? String ?? "").contains("--mesh udp"), "\(error)")
            let nearby = try home.run(["invite", "nearby", "Family"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
            XCTAssertEqual((try nearby.json()["error"] as? [String: Any])?["code"] as? String, "no_adapter", "invite nearby defaults to bluez")
        }
    }
}
