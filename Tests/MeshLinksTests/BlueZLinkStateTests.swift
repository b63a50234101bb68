import DBus
import Mesh
@testable import MeshLinks
import XCTest

/// The BlueZ layer's pure parts: advertisement bytes, MTUs, the notify link's peers, who connects.
final class BlueZLinkStateTests: XCTestCase {
    func testAdvertisementServiceDataRoundTrips() throws {
        let ad = MeshAdvertisement(shortID: [0xde, 0xad, 0xbe, 0xef], freeSlot: true, inviteOpen: true)
        XCTAssertEqual(ad.serviceData, [0x01, 0xde, 0xad, 0xbe, 0xef, 0x03])
        XCTAssertEqual(MeshAdvertisement(serviceData: ad.serviceData), ad)
        XCTAssertEqual(MeshAdvertisement(shortID: [1, 2, 3, 4], freeSlot: false, inviteOpen: false).serviceData, [1, 1, 2, 3, 4, 0])
        XCTAssertNil(MeshAdvertisement(serviceData: [0x02, 1, 2, 3, 4, 1]), "another version")
        XCTAssertNil(MeshAdvertisement(serviceData: [0x01, 1, 2, 3, 4]), "short")
        XCTAssertNil(MeshAdvertisement(serviceData: [0x01, 1, 2, 3, 4, 1, 0]), "long")
        // 3 (flags AD) + 2 + 16 (UUID) + 6 fits a 31-byte legacy advertisement.
        XCTAssertLessThanOrEqual(3 + 2 + 16 + ad.serviceData.count, 31)
    }

    func testLinkMTUIsATTMinusThreeCappedAt509() {
        XCTAssertEqual(linkMTU(attMTU: 23), 20)
        XCTAssertEqual(linkMTU(attMTU: 185), 182)
        XCTAssertEqual(linkMTU(attMTU: 512), 509)
        XCTAssertEqual(linkMTU(attMTU: 517), 509)
        XCTAssertEqual(linkMTU(attMTU: 5), 20, "never below the mesh minimum")
    }

    func testNotifyLinkTakesTheSmallestMTUAndAtMostFourCentrals() {
        var state = NotifyLinkState()
        XCTAssertFalse(state.isUp)
        state.notifying = true
        XCTAssertTrue(state.isUp)
        XCTAssertEqual(state.mtu, 20, "no central has said its MTU")
        XCTAssertTrue(state.admit(device: "/a", attMTU: 247))
        XCTAssertEqual(state.mtu, 244)
        XCTAssertTrue(state.admit(device: "/b", attMTU: 100))
        XCTAssertEqual(state.mtu, 97)
        XCTAssertTrue(state.admit(device: "/b", attMTU: nil), "a known central stays, keeping its MTU")
        XCTAssertEqual(state.mtu, 97)
        XCTAssertTrue(state.admit(device: "/c", attMTU: nil))
        XCTAssertTrue(state.hasFreeSlot)
        XCTAssertTrue(state.admit(device: "/d", attMTU: 300))
        XCTAssertFalse(state.hasFreeSlot)
        XCTAssertFalse(state.admit(device: "/e", attMTU: 300))
        XCTAssertTrue(state.admit(device: "/a", attMTU: 247), "known centrals are still served when full")
        state.remove(device: "/b")
        XCTAssertEqual(state.mtu, 244)
        XCTAssertTrue(state.admit(device: "/e", attMTU: 300))
        state.notifying = false
        for device in ["/a", "/c", "/d", "/e"] { state.remove(device: device) }
        XCTAssertFalse(state.isUp)
    }

    func testSmallerShortIDConnectsAtOnceLargerWaitsTenSeconds() {
        XCTAssertEqual(centralConnectDelay(ours: [0, 0, 0, 1], theirs: [0, 0, 0, 2]), 0)
        XCTAssertEqual(centralConnectDelay(ours: [0, 0, 0, 2], theirs: [0, 0, 0, 1]), 10)
        XCTAssertEqual(centralConnectDelay(ours: [0xff, 0, 0, 0], theirs: [0x01, 0xff, 0xff, 0xff]), 10)
        XCTAssertEqual(centralConnectDelay(ours: [1, 2, 3, 4], theirs: [1, 2, 3, 4]), 0)
    }

    func testDBusValueSignatures() {
        XCTAssertEqual(DBusValue.properties(["a": .bool(true)]).signature, "a{sv}")
        XCTAssertEqual(GattApplicationState().managedObjects.signature, "a{oa{sa{sv}}}")
        XCTAssertEqual(DBusValue.structure([.fd(3), .uint16(23)]).signature, "(hq)")
        XCTAssertEqual(DBusValue.variant(.bytes([1])).unwrapped.bytesValue, [1])
        XCTAssertNil(DBusValue.string("x").bytesValue)
        XCTAssertNil(DBusValue.array(element: "s", [.string("x")]).bytesValue)
    }
}
