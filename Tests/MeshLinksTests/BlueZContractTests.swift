import DBus
import Foundation
import Mesh
@testable import MeshLinks
import TestSupport
import XCTest

/// `BlueZTransport` against a mock bluetoothd (python-dbusmock, our template) on a private
/// dbus-daemon: what it registers, the peripheral role as a remote central sees it, the central
/// role against a remote node, disconnects, and the start errors (Docs/protocols/mesh.md 11.1, 12).
final class BlueZContractTests: XCTestCase {
    static let serviceUUID = "3fbe0001-b015-4ed5-aa45-fcefd7872a63"
    static let ourShortID: [UInt8] = [0x10, 0x20, 0x30, 0x40]

    override func setUp() async throws {
        try DBusMockPrerequisites.require()
    }

    /// A bus, the mock on it, and our transport started against it.
    static func startWorld(
        adapters: [String] = ["hci0"], adapter: String? = nil, shortID: [UInt8]? = nil, powered: Bool = true
    ) async throws -> (MockBlueZ, BlueZTransport, EventLog) {
        let bus = try await PrivateBus()
        let mock = try await MockBlueZ(bus: bus, adapters: adapters, powered: powered)
        let transport = try await BlueZTransport.start(adapter: adapter, busAddress: bus.address, shortID: shortID ?? BlueZContractTests.ourShortID)
        return (mock, transport, EventLog(transport.events))
    }

    // MARK: Registration

    func testRegistersTheGattApplicationAndTheAdvertisement() async throws {
        try await bounded(60) {
            let (mock, transport, _) = try await BlueZContractTests.startWorld()
            XCTAssertEqual(transport.name, "bluez")
            XCTAssertEqual(transport.adapter, "hci0")

            let log = mock.callLog
            XCTAssertTrue(log.contains("RegisterApplication /org/bluez/hci0"), "\(log)")
            XCTAssertTrue(log.contains("RegisterAdvertisement /org/bluez/hci0"), "\(log)")
            XCTAssertTrue(log.contains("SetDiscoveryFilter /org/bluez/hci0"), "\(log)")
            XCTAssertTrue(log.contains("StartDiscovery /org/bluez/hci0"), "\(log)")

            // The object tree bluetoothd reads back with GetManagedObjects.
            let objects = try XCTUnwrap(mock.call("AppObjects").first?.dictValue)
            let services = objects.compactMap { path, value -> (String, [String: DBusValue])? in
                guard let service = value.dictValue?["org.bluez.GattService1"]?.dictValue else { return nil }
                return (path, service)
            }
            XCTAssertEqual(services.count, 1)
            let (servicePath, service) = try XCTUnwrap(services.first)
            XCTAssertEqual(service["UUID"]?.stringValue, BlueZContractTests.serviceUUID)
            XCTAssertEqual(service["Primary"]?.boolValue, true)
            var characteristics: [String: [String: DBusValue]] = [:]
            for (_, value) in objects {
                guard let characteristic = value.dictValue?["org.bluez.GattCharacteristic1"]?.dictValue,
                      let uuid = characteristic["UUID"]?.stringValue else { continue }
                characteristics[uuid] = characteristic
            }
            XCTAssertEqual(Set(characteristics.keys), ["3fbe0002-b015-4ed5-aa45-fcefd7872a63", "3fbe0003-b015-4ed5-aa45-fcefd7872a63"])
            let inbound = try XCTUnwrap(characteristics["3fbe0002-b015-4ed5-aa45-fcefd7872a63"])
            let outbound = try XCTUnwrap(characteristics["3fbe0003-b015-4ed5-aa45-fcefd7872a63"])
            XCTAssertEqual(inbound["Flags"]?.stringsValue, ["write-without-response"])
            XCTAssertEqual(outbound["Flags"]?.stringsValue, ["notify"])
            XCTAssertEqual(inbound["Service"]?.stringValue, servicePath)
            XCTAssertEqual(outbound["Service"]?.stringValue, servicePath)
            XCTAssertEqual(outbound["Notifying"]?.boolValue, false)

            // Introspection describes the characteristic's methods.
            let xml = try XCTUnwrap(mock.call("AppIntrospect", [.objectPath(BlueZObjects.outbound)]).first?.stringValue)
            XCTAssertTrue(xml.contains("AcquireNotify") && xml.contains("StartNotify"), xml)

            // The advertisement: peripheral, no name, ServiceData 0x01 ‖ short id ‖ flags.
            let advertisement = try XCTUnwrap(mock.call("Advertisement").first?.dictValue)
            XCTAssertEqual(advertisement["Type"]?.stringValue, "peripheral")
            XCTAssertNil(advertisement["LocalName"])
            XCTAssertNil(advertisement["ServiceUUIDs"])
            let serviceData = try XCTUnwrap(advertisement["ServiceData"]?.dictValue)
            XCTAssertEqual(serviceData[BlueZContractTests.serviceUUID]?.bytesValue, [0x01, 0x10, 0x20, 0x30, 0x40, 0x01])
            XCTAssertEqual(advertisement["registrations"]?.intValue, 1)

            // Key rotation and an open invite: the advertisement is registered again.
            try await transport.advertise(shortID: [0xaa, 0xbb, 0xcc, 0xdd], inviteOpen: true)
            let again = try XCTUnwrap(mock.call("Advertisement").first?.dictValue)
            XCTAssertEqual(again["ServiceData"]?.dictValue?[BlueZContractTests.serviceUUID]?.bytesValue, [0x01, 0xaa, 0xbb, 0xcc, 0xdd, 0x03])
            XCTAssertEqual(again["registrations"]?.intValue, 2)
            XCTAssertEqual(again["unregistrations"]?.intValue, 1)

            // Overlapping re-registrations are serialised: both succeed, one advertisement stays.
            async let first: Void = transport.advertise(shortID: [0x01, 0x01, 0x01, 0x01], inviteOpen: false)
            async let second: Void = transport.advertise(shortID: [0x02, 0x02, 0x02, 0x02], inviteOpen: false)
            _ = try await (first, second)
            let settled = try XCTUnwrap(mock.call("Advertisement").first?.dictValue)
            let settledData = settled["ServiceData"]?.dictValue?[BlueZContractTests.serviceUUID]?.bytesValue
            XCTAssertTrue(settledData == [0x01, 0x01, 0x01, 0x01, 0x01, 0x01] || settledData == [0x01, 0x02, 0x02, 0x02, 0x02, 0x01], "\(String(describing: settledData))")
            let registrations = try XCTUnwrap(settled["registrations"]?.intValue)
            let unregistrations = try XCTUnwrap(settled["unregistrations"]?.intValue)
            XCTAssertEqual(registrations - unregistrations, 1)
            XCTAssertGreaterThanOrEqual(registrations, 3)

            do {
                try await transport.advertise(shortID: [1, 2, 3], inviteOpen: false)
                XCTFail("a 3-byte short id was accepted")
            } catch MeshLinkError.invalidLink {}

            await transport.stop()
            try await mock.waitUntil("unregistration") {
                let log = mock.callLog
                return log.contains("UnregisterApplication /org/bluez/hci0") && log.contains("StopDiscovery /org/bluez/hci0")
            }
            let final = try XCTUnwrap(mock.call("Advertisement").first?.dictValue)
            XCTAssertEqual(final["registrations"]?.intValue, final["unregistrations"]?.intValue, "unregistered at stop")
            do {
                try await transport.send([1], on: BlueZTransport.notifyLink)
                XCTFail("send after stop")
            } catch MeshLinkError.notRunning {}
        }
    }

    func testSelectsTheNamedAdapterAndPowersItOn() async throws {
        try await bounded(60) {
            let (mock, transport, _) = try await BlueZContractTests.startWorld(adapters: ["hci0", "hci1"], adapter: "hci1", powered: false)
            XCTAssertEqual(transport.adapter, "hci1")
            let log = mock.callLog
            XCTAssertTrue(log.contains("RegisterApplication /org/bluez/hci1"), "\(log)")
            XCTAssertFalse(log.contains("RegisterApplication /org/bluez/hci0"), "\(log)")
            let powered = try mock.call("Get", [.string("org.bluez.Adapter1"), .string("Powered")], path: "/org/bluez/hci1",
                                        interface: "org.freedesktop.DBus.Properties")
            XCTAssertEqual(powered.first?.boolValue, true)
            await transport.stop()
        }
    }

    func testTheSystemBusAddressComesFromTheEnvironment() async throws {
        try await bounded(60) {
            let bus = try await PrivateBus()
            let mock = try await MockBlueZ(bus: bus)
            let previous = ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"]
            setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address, 1)
            defer {
                if let previous { setenv("DBUS_SYSTEM_BUS_ADDRESS", previous, 1) } else { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
            }
            // No address: the system bus, which DBUS_SYSTEM_BUS_ADDRESS points at the private one.
            let transport = try await BlueZTransport.start(shortID: [1, 2, 3, 4])
            XCTAssertTrue(mock.callLog.contains("RegisterApplication /org/bluez/hci0"), "\(mock.callLog)")
            await transport.stop()
        }
    }

    // MARK: Peripheral role: the notify link

    func testCentralWritesArriveOnTheNotifyLinkAndNotificationsReachSubscribers() async throws {
        try await bounded(60) {
            let (mock, transport, events) = try await BlueZContractTests.startWorld()
            let link = BlueZTransport.notifyLink
            let central = "/org/bluez/hci0/dev_11_11_11_11_11_11"

            // A central writes a frame to 0002 (ATT MTU 185): the notify link comes up, the frame arrives.
            let frame: [UInt8] = Array(0..<150)
            try mock.call("CentralWrite", [.objectPath(central), .bytes(frame), .uint16(185)])
            try await events.wait(for: "notify link up") { $0 == .linkUp(link, mtu: 182) }
            // It arrives on the central's own receive link, which sends on the notify link.
            let receive = try await events.wait(for: "receive link up") {
                if case .receiveLinkUp(_, mtu: 182, sendsOn: link) = $0 { return true } else { return false }
            }
            guard case .receiveLinkUp(let centralLink, _, _) = receive else { return XCTFail("\(receive)") }
            try await events.wait(for: "frame") { $0 == .frame(centralLink, frame) }

            // It subscribes with StartNotify: a frame we send is one Value change.
            try mock.call("CentralStartNotify")
            let outgoing: [UInt8] = [0xde, 0xad, 0xbe, 0xef]
            try await transport.send(outgoing, on: link)
            try await mock.waitUntil("notification") {
                let heard = try mock.call("Notifications").first
                guard case .array(_, let items)? = heard, let first = items.first, case .structure(let pair) = first else { return false }
                XCTAssertEqual(pair.first?.stringValue, "signal")
                XCTAssertEqual(pair.last?.bytesValue, outgoing)
                return true
            }

            // Over the MTU: refused.
            do {
                try await transport.send([UInt8](repeating: 1, count: 183), on: link)
                XCTFail("a frame over the notify link's MTU was sent")
            } catch MeshLinkError.frameRejected {}

            // A second central with a smaller MTU: the link's MTU is the smallest.
            try mock.call("CentralWrite", [.objectPath(central + "2"), .bytes([7]), .uint16(100)])
            try await events.wait(for: "smaller MTU") { $0 == .linkUp(link, mtu: 97) }

            // A frame over 509 bytes is refused at the write.
            XCTAssertThrowsError(try mock.call("CentralWrite", [.objectPath(central), .bytes([UInt8](repeating: 0, count: 510)), .uint16(517)])) {
                XCTAssertTrue("\($0)".contains("InvalidValueLength"), "\($0)")
            }
            // Four centrals at most: a fifth is refused.
            try mock.call("CentralWrite", [.objectPath(central + "3"), .bytes([3]), .uint16(185)])
            try mock.call("CentralWrite", [.objectPath(central + "4"), .bytes([4]), .uint16(185)])
            XCTAssertThrowsError(try mock.call("CentralWrite", [.objectPath(central + "5"), .bytes([5]), .uint16(185)])) {
                XCTAssertTrue("\($0)".contains("NotPermitted"), "\($0)")
            }
            // The advertisement no longer offers a free peripheral slot.
            try await mock.waitUntil("free slot bit cleared") {
                let data = try mock.call("Advertisement").first?.dictValue?["ServiceData"]?.dictValue?[BlueZContractTests.serviceUUID]?.bytesValue
                return data == [0x01, 0x10, 0x20, 0x30, 0x40, 0x00]
            }
            XCTAssertFalse(events.all.contains { if case .frame(_, [5]) = $0 { return true } else { return false } })
            XCTAssertEqual(events.all.filter { if case .frame = $0 { return true } else { return false } }.count, 4)
            await transport.stop()
            try await events.wait(for: "notify link down at stop") { $0 == .linkDown(link) }
        }
    }

    /// Issue 19: the centrals writing to us share the notify link's air, but not its budget. Each
    /// writes on a receive link of its own (frames budget, reassembly slots), so one central
    /// flooding us cannot use up what the others are allowed (Docs/protocols/mesh.md 7.4).
    func testEachCentralWritesOnItsOwnLink() async throws {
        try await bounded(60) {
            let (mock, transport, events) = try await BlueZContractTests.startWorld()
            let central = "/org/bluez/hci0/dev_11_11_11_11_11_11"
            try mock.call("CentralWrite", [.objectPath(central), .bytes([1]), .uint16(185)])
            try mock.call("CentralWrite", [.objectPath(central + "2"), .bytes([2]), .uint16(100)])
            try mock.call("CentralWrite", [.objectPath(central), .bytes([3]), .uint16(185)])
            var received: [[UInt8]: LinkID] = [:]
            try await events.wait(for: "three frames") { _ in
                for case .frame(let link, let frame) in events.all { received[frame] = link }
                return received.count == 3
            }
            let first = try XCTUnwrap(received[[1]]), second = try XCTUnwrap(received[[2]])
            XCTAssertEqual(received[[3]], first, "one central, one link")
            XCTAssertNotEqual(first, second, "each central has its own link")
            XCTAssertNotEqual(first, BlueZTransport.notifyLink)
            XCTAssertNotEqual(second, BlueZTransport.notifyLink)
            XCTAssertTrue(events.all.contains(.receiveLinkUp(first, mtu: 182, sendsOn: BlueZTransport.notifyLink)))
            XCTAssertTrue(events.all.contains(.receiveLinkUp(second, mtu: 97, sendsOn: BlueZTransport.notifyLink)))
            await transport.stop()
            try await events.wait(for: "receive links down at stop") { _ in
                events.all.contains(.linkDown(first)) && events.all.contains(.linkDown(second))
            }
        }
    }

    func testAcquireNotifySocketCarriesNotificationsAndDisconnectsTakeTheLinkDown() async throws {
        try await bounded(60) {
            let (mock, transport, events) = try await BlueZContractTests.startWorld()
            let link = BlueZTransport.notifyLink
            // The subscribing central, as a device object bluetoothd knows (not a mesh advertiser).
            let central = try XCTUnwrap(mock.call("AddNode", [.string("hci0"), .string("22:22:22:22:22:22"), .bytes([]), .uint16(23), .string("acquire")]).first?.stringValue)

            let answered = try mock.call("CentralAcquireNotify", [.objectPath(central), .uint16(247)])
            XCTAssertEqual(answered.first?.intValue, 247)
            try await events.wait(for: "notify link up") { $0 == .linkUp(link, mtu: 244) }
            let outgoing: [UInt8] = Array(repeating: 0x5a, count: 244)
            try await transport.send(outgoing, on: link)
            try await transport.send([1, 2, 3], on: link)
            var heard: [(String, [UInt8])] = []
            try await mock.waitUntil("two notifications on the socket") {
                if case .array(_, let items)? = try mock.call("Notifications").first {
                    for item in items {
                        if case .structure(let pair) = item, let source = pair.first?.stringValue, let bytes = pair.last?.bytesValue {
                            heard.append((source, bytes))
                        }
                    }
                }
                return heard.count >= 2
            }
            XCTAssertEqual(heard.map(\.0), ["fd", "fd"])
            XCTAssertEqual(heard.map(\.1), [outgoing, [1, 2, 3]], "one read is one frame, in order")

            // The subscriber goes (socket closed) and the central disconnects: the link is down.
            try mock.call("CentralReleaseNotify", [.objectPath(central)])
            try mock.call("DropConnection", [.objectPath(central)])
            try await events.wait(for: "notify link down") { $0 == .linkDown(link) }
            do {
                try await transport.send([1], on: link)
                XCTFail("sent on a link that is down")
            } catch MeshLinkError.frameRejected {}
            await transport.stop()
        }
    }

    func testOnlyBluetoothdMayWriteOrSubscribeButAnyoneMayReadProperties() async throws {
        try await bounded(60) {
            let (mock, transport, events) = try await BlueZContractTests.startWorld()
            let node = try XCTUnwrap(mock.call("AppOwner").first?.stringValue)
            XCTAssertTrue(node.hasPrefix(":"), node)
            // Another process on the bus (the test's client) is not bluetoothd.
            XCTAssertThrowsError(try mock.call(destination: node, BlueZObjects.inbound, "org.bluez.GattCharacteristic1", "WriteValue", [
                .bytes([1, 2, 3]), .properties(["device": .objectPath("/org/bluez/hci0/dev_66_66_66_66_66_66")]),
            ])) { XCTAssertTrue("\($0)".contains("NotAuthorized"), "\($0)") }
            XCTAssertThrowsError(try mock.call(destination: node, BlueZObjects.outbound, "org.bluez.GattCharacteristic1", "StartNotify")) {
                XCTAssertTrue("\($0)".contains("NotAuthorized"), "\($0)")
            }
            let uuid = try mock.call(destination: node, BlueZObjects.outbound, "org.freedesktop.DBus.Properties", "Get", [
                .string("org.bluez.GattCharacteristic1"), .string("UUID"),
            ])
            XCTAssertEqual(uuid.first?.stringValue, "3fbe0003-b015-4ed5-aa45-fcefd7872a63")
            XCTAssertThrowsError(try mock.call(destination: node, BlueZObjects.outbound, "org.freedesktop.DBus.Properties", "Get", [
                .string("org.bluez.GattCharacteristic1"), .string("NoSuchProperty"),
            ]))
            XCTAssertThrowsError(try mock.call(destination: node, "/org/burrow/mesh/nothing", "org.freedesktop.DBus.Properties", "GetAll", [
                .string("org.bluez.GattCharacteristic1"),
            ]))
            try await Task.sleep(for: .milliseconds(200))
            XCTAssertTrue(events.all.isEmpty, "\(events.all)")
            await transport.stop()
        }
    }

    // MARK: Central role

    func testCentralConnectsToASmallerNodeAcquiresSocketsAndExchangesFrames() async throws {
        try await bounded(60) {
            let (mock, transport, events) = try await BlueZContractTests.startWorld(shortID: [0x00, 0x00, 0x00, 0x01])
            // A node with a larger short id and a free slot: we connect at once.
            let device = try XCTUnwrap(mock.call("AddNode", [
                .string("hci0"), .string("AA:BB:CC:DD:EE:01"), .bytes([0x01, 0x00, 0x00, 0x00, 0x09, 0x01]), .uint16(247), .string("acquire"),
            ]).first?.stringValue)
            let up = try await events.wait(for: "central link up") {
                if case .linkUp(let link, _) = $0 { return link != BlueZTransport.notifyLink }
                return false
            }
            guard case .linkUp(let link, let mtu) = up else { return XCTFail() }
            XCTAssertEqual(mtu, 244, "min(ATT MTU − 3, 509)")
            let log = mock.callLog
            XCTAssertTrue(log.contains("Connect \(device)"), "\(log)")
            XCTAssertTrue(log.contains { $0.hasPrefix("AcquireWrite \(device)/") }, "\(log)")
            XCTAssertTrue(log.contains { $0.hasPrefix("AcquireNotify \(device)/") }, "\(log)")

            // Our frames arrive on the remote's AcquireWrite socket, one read per frame.
            let first: [UInt8] = Array(repeating: 0x42, count: 244)
            try await transport.send(first, on: link)
            try await transport.send([9, 8, 7], on: link)
            var received: [[UInt8]] = []
            try await mock.waitUntil("frames at the remote") {
                if case .array(_, let items)? = try mock.call("ReceivedFromNode", [.objectPath(device)]).first {
                    received += items.compactMap(\.bytesValue)
                }
                return received.count >= 2
            }
            XCTAssertEqual(received, [first, [9, 8, 7]])
            do {
                try await transport.send([UInt8](repeating: 0, count: 245), on: link)
                XCTFail("a frame over the central link's MTU was sent")
            } catch MeshLinkError.frameRejected {}

            // Its notifications arrive as frames on that link.
            try mock.call("NotifyNode", [.objectPath(device), .bytes([0xca, 0xfe])])
            try await events.wait(for: "notified frame") { $0 == .frame(link, [0xca, 0xfe]) }

            // The connection drops: the link is down.
            try mock.call("DropConnection", [.objectPath(device)])
            try await events.wait(for: "central link down") { $0 == .linkDown(link) }
            await transport.stop()
        }
    }

    func testCentralFallsBackToStartNotifyAndASocketHangUpTakesTheLinkDown() async throws {
        try await bounded(60) {
            let (mock, transport, events) = try await BlueZContractTests.startWorld(shortID: [0x00, 0x00, 0x00, 0x01])
            // No AcquireNotify on this remote; an ATT MTU of 600 still gives a 509-byte link.
            let device = try XCTUnwrap(mock.call("AddNode", [
                .string("hci0"), .string("AA:BB:CC:DD:EE:02"), .bytes([0x01, 0x7f, 0x00, 0x00, 0x00, 0x01]), .uint16(600), .string("start"),
            ]).first?.stringValue)
            let up = try await events.wait(for: "central link up") {
                if case .linkUp(let link, _) = $0 { return link != BlueZTransport.notifyLink }
                return false
            }
            guard case .linkUp(let link, let mtu) = up else { return XCTFail() }
            XCTAssertEqual(mtu, 509)
            XCTAssertTrue(mock.callLog.contains { $0.hasPrefix("StartNotify \(device)/") }, "\(mock.callLog)")

            try mock.call("NotifyNode", [.objectPath(device), .bytes([1, 2, 3, 4])])
            try await events.wait(for: "frame by PropertiesChanged") { $0 == .frame(link, [1, 2, 3, 4]) }

            // bluetoothd closes the sockets: the link is down even before Connected changes.
            try mock.call("HangUp", [.objectPath(device)])
            try await events.wait(for: "link down on hang-up") { $0 == .linkDown(link) }
            await transport.stop()
        }
    }

    func testLargerShortIDWaitsTenSecondsAndFullNodesAreLeftAlone() async throws {
        try await bounded(60) {
            let (mock, transport, events) = try await BlueZContractTests.startWorld(shortID: [0xff, 0x00, 0x00, 0x00])
            let start = ContinuousClock.now
            // Smaller short id than ours: it should connect to us; we wait 10 s first.
            let device = try XCTUnwrap(mock.call("AddNode", [
                .string("hci0"), .string("AA:BB:CC:DD:EE:03"), .bytes([0x01, 0x01, 0x00, 0x00, 0x00, 0x01]), .uint16(185), .string("acquire"),
            ]).first?.stringValue)
            // No free peripheral slot (flag bit 0 clear): never connected to.
            let full = try XCTUnwrap(mock.call("AddNode", [
                .string("hci0"), .string("AA:BB:CC:DD:EE:04"), .bytes([0x01, 0x00, 0x00, 0x00, 0x01, 0x00]), .uint16(185), .string("acquire"),
            ]).first?.stringValue)
            // Not a Burrow advertisement (version 2): ignored.
            _ = try mock.call("AddNode", [
                .string("hci0"), .string("AA:BB:CC:DD:EE:05"), .bytes([0x02, 0x00, 0x00, 0x00, 0x01, 0x01]), .uint16(185), .string("acquire"),
            ])
            try await Task.sleep(for: .seconds(5))
            XCTAssertFalse(mock.callLog.contains { $0.hasPrefix("Connect ") }, "connected before its turn: \(mock.callLog)")

            try await events.wait(for: "central link up after the wait", timeout: .seconds(15)) {
                if case .linkUp(let link, _) = $0 { return link != BlueZTransport.notifyLink }
                return false
            }
            XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .seconds(9.5))
            let connects = mock.callLog.filter { $0.hasPrefix("Connect ") }
            XCTAssertEqual(connects, ["Connect \(device)"], "only the free node with our service data")
            XCTAssertFalse(connects.contains("Connect \(full)"))
            await transport.stop()
        }
    }

    func testAtMostFourCentralConnectionsAndStopDisconnectsThem() async throws {
        try await bounded(60) {
            let (mock, transport, events) = try await BlueZContractTests.startWorld(shortID: [0x00, 0x00, 0x00, 0x01])
            var devices: [String] = []
            for index in 1...5 {
                let device = try XCTUnwrap(mock.call("AddNode", [
                    .string("hci0"), .string("AA:BB:CC:DD:EF:0\(index)"), .bytes([0x01, 0x10, 0x00, 0x00, UInt8(index), 0x01]),
                    .uint16(185), .string("acquire"),
                ]).first?.stringValue)
                devices.append(device)
            }
            let isCentralUp: (TransportEvent) -> Bool = {
                if case .linkUp(let link, _) = $0 { return link != BlueZTransport.notifyLink }
                return false
            }
            try await mock.waitUntil("four central links") { events.all.filter(isCentralUp).count == 4 }
            try await Task.sleep(for: .seconds(1))
            XCTAssertEqual(events.all.filter(isCentralUp).count, 4)
            let connects = mock.callLog.filter { $0.hasPrefix("Connect ") }
            XCTAssertEqual(connects.count, 4, "\(connects)")
            XCTAssertEqual(Set(events.all.compactMap { event -> LinkID? in
                if case .linkUp(let link, _) = event, link != BlueZTransport.notifyLink { return link }
                return nil
            }).count, 4, "one link id per connection")

            await transport.stop()
            try await mock.waitUntil("disconnects and links down") {
                mock.callLog.filter { $0.hasPrefix("Disconnect ") }.count == 4
                    && events.all.filter { if case .linkDown = $0 { return true } else { return false } }.count == 4
            }
            let disconnects = mock.callLog.filter { $0.hasPrefix("Disconnect ") }
            XCTAssertEqual(Set(disconnects.map { String($0.dropFirst("Disconnect ".count)) }), Set(connects.map { String($0.dropFirst("Connect ".count)) }))
            XCTAssertEqual(Set(devices).intersection(disconnects.map { String($0.dropFirst("Disconnect ".count)) }).count, 4)
        }
    }

    // MARK: Closing a duplicate connection (11.1)

    /// The router found our central connection to a node duplicates that node's connection to
    /// us (under another address): `close` disconnects it, and we do not connect to the device
    /// again while the duplicate may stand — not even after the retry delay. When a central
    /// leaves us (maybe that node's, the connection kept), the device is considered again.
    func testClosingOurDuplicateConnectionHoldsTheDeviceUntilALinkGoesDown() async throws {
        try await bounded(90) {
            let (mock, transport, events) = try await BlueZContractTests.startWorld(shortID: [0x00, 0x00, 0x00, 0x01])
            // The node's connection to us, from another address.
            let theirs = try XCTUnwrap(mock.call("AddNode", [.string("hci0"), .string("22:22:22:22:22:22"), .bytes([]), .uint16(185), .string("acquire")]).first?.stringValue)
            try mock.call("CentralWrite", [.objectPath(theirs), .bytes([1]), .uint16(185)])
            try await events.wait(for: "their connection") { if case .receiveLinkUp = $0 { return true } else { return false } }
            // Ours, to its advertisement.
            let device = try XCTUnwrap(mock.call("AddNode", [
                .string("hci0"), .string("AA:BB:CC:DD:EE:01"), .bytes([0x01, 0x7f, 0x00, 0x00, 0x00, 0x01]), .uint16(185), .string("acquire"),
            ]).first?.stringValue)
            let up = try await events.wait(for: "our connection") {
                if case .linkUp(let link, _) = $0 { return link != BlueZTransport.notifyLink } else { return false }
            }
            guard case .linkUp(let ours, _) = up else { return XCTFail("\(up)") }

            await transport.close(ours)
            try await events.wait(for: "our connection down") { $0 == .linkDown(ours) }
            try await mock.waitUntil("disconnected") { mock.callLog.contains("Disconnect \(device)") }
            XCTAssertFalse(mock.callLog.contains("Disconnect \(theirs)"), "their connection to us stays")
            XCTAssertEqual(try mock.call("DeviceProperties", [.objectPath(device)]).first?.dictValue?["Connected"]?.boolValue, false)
            // A lost connection is tried again after 15 s; a closed duplicate is not.
            try await Task.sleep(for: .seconds(BlueZLimits.retryDelay + 2))
            XCTAssertEqual(mock.callLog.filter { $0 == "Connect \(device)" }.count, 1, "not connected again: \(mock.callLog)")

            // Their connection goes: ours may be the only one now, so we connect again.
            let before = events.all.count
            try mock.call("DropConnection", [.objectPath(theirs)])
            try await events.wait(for: "connected again", since: before) {
                if case .linkUp(let link, _) = $0 { return link != BlueZTransport.notifyLink } else { return false }
            }
            XCTAssertEqual(mock.callLog.filter { $0 == "Connect \(device)" }.count, 2)
            await transport.stop()
        }
    }

    /// A central's connection to us found to be the duplicate: `close` disconnects that central
    /// and its link goes down; the notify link carries every central and is never closed.
    func testClosingACentralsConnectionDisconnectsItAndTheNotifyLinkStays() async throws {
        try await bounded(60) {
            let (mock, transport, events) = try await BlueZContractTests.startWorld()
            var links: [String: LinkID] = [:]
            for address in ["33:33:33:33:33:01", "33:33:33:33:33:02"] {
                let central = try XCTUnwrap(mock.call("AddNode", [.string("hci0"), .string(address), .bytes([]), .uint16(185), .string("acquire")]).first?.stringValue)
                let before = events.all.count
                try mock.call("CentralWrite", [.objectPath(central), .bytes([2]), .uint16(185)])
                let up = try await events.wait(for: "receive link", since: before) { if case .receiveLinkUp = $0 { return true } else { return false } }
                guard case .receiveLinkUp(let link, _, _) = up else { return XCTFail("\(up)") }
                links[central] = link
            }
            let (first, second) = (try XCTUnwrap(links.keys.sorted().first), try XCTUnwrap(links.keys.sorted().last))
            await transport.close(try XCTUnwrap(links[first]))
            try await events.wait(for: "its link down") { $0 == .linkDown(links[first] ?? BlueZTransport.notifyLink) }
            try await mock.waitUntil("disconnected") { mock.callLog.contains("Disconnect \(first)") }

            await transport.close(BlueZTransport.notifyLink)
            try await Task.sleep(for: .milliseconds(300))
            XCTAssertFalse(events.all.contains(.linkDown(BlueZTransport.notifyLink)), "the notify link stays")
            XCTAssertFalse(events.all.contains(.linkDown(links[second] ?? BlueZTransport.notifyLink)))
            XCTAssertFalse(mock.callLog.contains("Disconnect \(second)"))
            try await transport.send([7], on: BlueZTransport.notifyLink)
            await transport.stop()
        }
    }

    // MARK: bluetoothd restarts

    /// bluetoothd restarting forgets every registration (org.bluez loses its owner, a new
    /// process takes the name). The transport registers the GATT application and the
    /// advertisement again with the new one, with the advertisement's latest data, starts
    /// discovery again, and links come up again both ways. Twice: once with the adapter there
    /// when the name is taken, once with it reported later, as a restarted bluetoothd does.
    func testRegistersAgainWhenBluetoothdRestarts() async throws {
        try await bounded(120) {
            let (mock, transport, events) = try await BlueZContractTests.startWorld(shortID: [0x00, 0x00, 0x00, 0x01])
            var link = try await BlueZContractTests.linksWork(mock, transport, events, round: 0)

            try await BlueZContractTests.dropBluetoothd(mock, events, centralLink: link)
            try await mock.restore()
            try await BlueZContractTests.registeredAgain(mock, serviceData: [0x01, 0x00, 0x00, 0x00, 0x01, 0x01])
            link = try await BlueZContractTests.linksWork(mock, transport, events, round: 1)

            // This time the key rotates while bluetoothd is away, and the adapter comes later.
            try await BlueZContractTests.dropBluetoothd(mock, events, centralLink: link)
            try await transport.advertise(shortID: [0x00, 0x00, 0x00, 0x02], inviteOpen: true)
            try await mock.restore(adapterDelay: .milliseconds(800))
            try await BlueZContractTests.registeredAgain(mock, serviceData: [0x01, 0x00, 0x00, 0x00, 0x02, 0x03])
            _ = try await BlueZContractTests.linksWork(mock, transport, events, round: 2)

            await transport.stop()
            try await mock.waitUntil("unregistered from the new bluetoothd") {
                let log = mock.callLog
                return log.contains("UnregisterApplication /org/bluez/hci0") && log.contains("UnregisterAdvertisement /org/bluez/hci0")
            }
        }
    }

    /// A central writes a frame that arrives, and we connect to a node and write to it: both
    /// roles work with the bluetoothd now running. Returns our central link.
    static func linksWork(_ mock: MockBlueZ, _ transport: BlueZTransport, _ events: EventLog, round: UInt8) async throws -> LinkID {
        let since = events.all.count
        let frame: [UInt8] = [0xb0, round]
        try mock.call("CentralWrite", [.objectPath("/org/bluez/hci0/dev_11_11_11_11_11_11"), .bytes(frame), .uint16(185)])
        try await events.wait(for: "a central's frame", since: since) {
            if case .frame(_, frame) = $0 { return true } else { return false }
        }
        let device = try XCTUnwrap(mock.call("AddNode", [
            .string("hci0"), .string("AA:BB:CC:DD:EE:01"), .bytes([0x01, 0x7f, 0x00, 0x00, 0x00, 0x01]), .uint16(185), .string("acquire"),
        ]).first?.stringValue)
        let up = try await events.wait(for: "central link up", since: since) {
            if case .linkUp(let link, _) = $0 { return link != BlueZTransport.notifyLink } else { return false }
        }
        guard case .linkUp(let link, _) = up else { throw PeerProcess.Failure.notReady("\(up)") }
        try await transport.send([0xc0, round], on: link)
        try await mock.waitUntil("our frame at the remote node") {
            guard case .array(_, let items)? = try mock.call("ReceivedFromNode", [.objectPath(device)]).first else { return false }
            return items.contains { $0.bytesValue == [0xc0, round] }
        }
        return link
    }

    /// bluetoothd goes away: every link is down.
    static func dropBluetoothd(_ mock: MockBlueZ, _ events: EventLog, centralLink: LinkID) async throws {
        let since = events.all.count
        try await mock.drop()
        try await events.wait(for: "links down", since: since) { _ in
            let later = events.all.dropFirst(since)
            return later.contains(.linkDown(BlueZTransport.notifyLink)) && later.contains(.linkDown(centralLink))
        }
    }

    /// The new bluetoothd holds our GATT application and one advertisement carrying `serviceData`,
    /// and we discover with it.
    static func registeredAgain(_ mock: MockBlueZ, serviceData: [UInt8]) async throws {
        try await mock.waitUntil("registered with the new bluetoothd", timeout: .seconds(15)) {
            let log = mock.callLog
            return log.contains("RegisterApplication /org/bluez/hci0") && log.contains("RegisterAdvertisement /org/bluez/hci0")
                && log.contains("StartDiscovery /org/bluez/hci0")
        }
        let objects = try XCTUnwrap(mock.call("AppObjects").first?.dictValue)
        XCTAssertEqual(objects.values.filter { $0.dictValue?["org.bluez.GattService1"] != nil }.count, 1, "the GATT application")
        let advertisement = try XCTUnwrap(mock.call("Advertisement").first?.dictValue)
        XCTAssertEqual(advertisement["ServiceData"]?.dictValue?[BlueZContractTests.serviceUUID]?.bytesValue, serviceData)
        XCTAssertEqual(advertisement["registrations"]?.intValue, 1)
    }

    // MARK: Errors

    func testNoBlueZOnTheBusIsNoAdapter() async throws {
        try await bounded(30) {
            let bus = try await PrivateBus()
            do {
                _ = try await BlueZTransport.start(busAddress: bus.address, shortID: [1, 2, 3, 4])
                XCTFail("started without org.bluez")
            } catch MeshLinkError.noAdapter(let message) {
                XCTAssertTrue(message.contains("org.bluez"), message)
                XCTAssertTrue(message.contains("--mesh udp:"), message)
            }
        }
    }

    func testBlueZWithoutAdaptersIsNoAdapter() async throws {
        try await bounded(30) {
            let bus = try await PrivateBus()
            let mock = try await MockBlueZ(bus: bus, adapters: [])
            do {
                _ = try await BlueZTransport.start(busAddress: bus.address, shortID: [1, 2, 3, 4])
                XCTFail("started without an adapter")
            } catch MeshLinkError.noAdapter(let message) {
                XCTAssertTrue(message.contains("no Bluetooth adapter"), message)
                XCTAssertTrue(message.contains("--mesh udp:"), message)
            }
            XCTAssertFalse(mock.callLog.contains { $0.hasPrefix("RegisterApplication") })
        }
    }

    func testAMissingNamedAdapterIsNoAdapterNamingThePresentOnes() async throws {
        try await bounded(30) {
            let bus = try await PrivateBus()
            let mock = try await MockBlueZ(bus: bus, adapters: ["hci0"])
            do {
                _ = try await BlueZTransport.start(adapter: "hci1", busAddress: bus.address, shortID: [1, 2, 3, 4])
                XCTFail("started on a missing adapter")
            } catch MeshLinkError.noAdapter(let message) {
                XCTAssertTrue(message.contains("hci1") && message.contains("hci0"), message)
            }
            XCTAssertTrue(mock.callLog.isEmpty, "\(mock.callLog)")
        }
    }

    func testAnAdapterThatCannotBePoweredIsNoAdapter() async throws {
        try await bounded(30) {
            let bus = try await PrivateBus()
            let mock = try await MockBlueZ(bus: bus, adapters: ["hci0"], powered: false, powerable: false)
            do {
                _ = try await BlueZTransport.start(busAddress: bus.address, shortID: [1, 2, 3, 4])
                XCTFail("started on an adapter that stays off")
            } catch MeshLinkError.noAdapter(let message) {
                XCTAssertTrue(message.contains("hci0") && message.contains("cannot be powered"), message)
                XCTAssertTrue(message.contains("rfkill"), message)
            }
            XCTAssertFalse(mock.callLog.contains { $0.hasPrefix("RegisterApplication") })
        }
    }

    func testAnUnreachableBusIsNoAdapter() async throws {
        do {
            _ = try await BlueZTransport.start(busAddress: "unix:path=/nonexistent/burrow-test-bus", shortID: [1, 2, 3, 4])
            XCTFail("started without a bus")
        } catch MeshLinkError.noAdapter(let message) {
            XCTAssertTrue(message.contains("--mesh udp:"), message)
        }
    }

    func testAccessDeniedByTheBusIsBluetoothDenied() async throws {
        try await bounded(30) {
            let bus = try await PrivateBus(denyBlueZ: true)
            let mock = try await MockBlueZ(bus: bus)
            do {
                _ = try await BlueZTransport.start(busAddress: bus.address, shortID: [1, 2, 3, 4])
                XCTFail("started though the bus denies org.bluez")
            } catch MeshLinkError.bluetoothDenied(let message) {
                XCTAssertFalse(message.isEmpty)
            }
            _ = mock
        }
    }

    func testBadArgumentsAreRefusedBeforeTouchingTheBus() async throws {
        do {
            _ = try await BlueZTransport.start(busAddress: "unix:path=/nonexistent", shortID: [1, 2, 3])
            XCTFail("3-byte short id")
        } catch MeshLinkError.invalidLink {}
        do {
            _ = try await BlueZTransport.start(adapter: "../hci0", busAddress: "unix:path=/nonexistent", shortID: [1, 2, 3, 4])
            XCTFail("adapter name with a slash")
        } catch MeshLinkError.invalidLink {}
    }
}
