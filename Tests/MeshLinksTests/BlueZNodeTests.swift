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
        try DBusMockPrerequisites.require()
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

    /// Docs/protocols/mesh.md 11.1 through the real program: "the larger mesh id closes a duplicate connection".
    /// Two nodes near `run` each connect to its peripheral (from one address) and advertise
    /// under another (as with address privacy), so `run` connects to them too: two connections
    /// to each. Node S has a smaller mesh id than ours: once its announce arrives on both, `run`
    /// disconnects its own connection and keeps S's. Node L has a larger one: closing is L's
    /// part, so `run` keeps both.
    func testRunClosesItsDuplicateConnectionOnlyWhenItsMeshIDIsTheLarger() async throws {
        let root: URL = self.root
        try await bounded(120) {
            let bus = try await PrivateBus()
            let mock = try await MockBlueZ(bus: bus)
            let home = BurrowHome(path: root.appendingPathComponent("dup").path, passphraseFile: root.appendingPathComponent("pass").path)
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
            let ours = MeshID(try XCTUnwrap(UInt64(try XCTUnwrap(up["mesh_id"] as? String), radix: 16)))

            var rng = SystemRandomNumberGenerator()
            func key(_ wanted: (MeshID) -> Bool) throws -> MeshKey {
                for _ in 0..<(1 << 22) {
                    let key = MeshKey.generate(using: &rng)
                    if wanted(key.id) { return key }
                }
                throw PeerProcess.Failure.notReady("no mesh key on the wanted side of \(ours)")
            }
            let smaller = try key { $0 < ours }, larger = try key { $0 > ours }
            func announce(_ key: MeshKey) throws -> [UInt8] {
                let now = UInt64(Date().timeIntervalSince1970 * 1000)
                return try Packet.sign(type: .announce, timestamp: now, recipient: nil,
                                       payload: Announce(capabilities: [.relay, .dm], neighbours: []).encoded(), key: key).encoded
            }
            // Each node's central connection to us: its announce arrives on our peripheral.
            let sCentral = "/org/bluez/hci0/dev_5A_00_00_00_00_01", lCentral = "/org/bluez/hci0/dev_1A_00_00_00_00_01"
            try mock.call("CentralWrite", [.objectPath(sCentral), .bytes(try announce(smaller)), .uint16(185)])
            try mock.call("CentralWrite", [.objectPath(lCentral), .bytes(try announce(larger)), .uint16(185)])
            // Each node's advertisement under its other address: we connect (to L at once, to S after 10 s).
            func addNode(_ address: String, _ key: MeshKey) throws -> String {
                try XCTUnwrap(mock.call("AddNode", [
                    .string("hci0"), .string(address), .bytes([0x01] + key.id.bytes.prefix(4) + [0x01]), .uint16(185), .string("acquire"),
                ]).first?.stringValue)
            }
            let sDevice = try addNode("5B:00:00:00:00:02", smaller), lDevice = try addNode("1B:00:00:00:00:02", larger)
            for (device, key) in [(lDevice, larger), (sDevice, smaller)] {
                try await mock.waitUntil("our connection to \(device)", timeout: .seconds(20)) {
                    mock.callLog.contains { $0.hasPrefix("AcquireNotify \(device)/") }
                }
                try await Task.sleep(for: .milliseconds(1100))  // announces: one a second per sender
                try mock.call("NotifyNode", [.objectPath(device), .bytes(try announce(key))])
            }
            try await mock.waitUntil("our duplicate connection to S closed") { mock.callLog.contains("Disconnect \(sDevice)") }
            try await Task.sleep(for: .seconds(2))
            let disconnects = mock.callLog.filter { $0.hasPrefix("Disconnect ") }
            XCTAssertEqual(disconnects, ["Disconnect \(sDevice)"], "only ours to S; L's are L's to close, S's kept")

            let status = try XCTUnwrap(try home.ok(["mesh", "status"])["mesh"] as? [String: Any])
            let links = try XCTUnwrap(status["links"] as? [[String: Any]])
            func roles(_ key: MeshKey) -> [String] {
                links.filter { $0["peer_id"] as? String == key.id.hex }.compactMap { $0["role"] as? String }.sorted()
            }
            XCTAssertEqual(roles(smaller), ["peripheral"], "S's connection to us stays, ours to S is gone: \(links)")
            XCTAssertEqual(roles(larger), ["central", "peripheral"], "both connections with L stay: \(links)")
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
