@testable import Mesh
import XCTest

/// Direct checks on the vector files that the conformance runner does not make.
final class MeshVectorsTests: XCTestCase {
    /// Every refusal name the vectors use is one of `MeshError`'s spec codes, spelled the same.
    func testRefusalNamesAreTheSpecCodes() throws {
        var names = Set<String>()
        for vector in try MeshFixture.vectors("reject.json") {
            if let error = vector["expect"]?["error"]?.stringValue { names.insert(error) }
        }
        XCTAssertEqual(names.count, 23)
        for name in names { XCTAssertNotNil(MeshError(rawValue: name), name) }
        XCTAssertNotNil(MeshError(rawValue: "bad_point"))
    }

    /// The packet vectors are all within their type's caps and decode to their own type.
    func testPacketVectorsRespectTheTypeTable() throws {
        for vector in try MeshFixture.vectors("packets.json") {
            let bytes = MeshFixture.hex(vector["encoded"]?.stringValue ?? "")
            let packet = try UnverifiedPacket.decode(bytes)
            XCTAssertEqual(Int(packet.type.rawValue), Int(vector["type"]?.integerValue ?? -1))
            XCTAssertLessThanOrEqual(packet.payload.count, packet.type.maxPayload)
            XCTAssertEqual(bytes.count, Packet.overhead(directed: packet.type.isDirected) + packet.payload.count)
            XCTAssertLessThanOrEqual(packet.ttl, packet.type.originTTL)
        }
    }
}
