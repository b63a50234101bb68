@testable import Mesh
import TestSupport
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
            let bytes = hex(vector["encoded"]?.stringValue ?? "")
            let packet = try UnverifiedPacket.decode(bytes)
            XCTAssertEqual(Int(packet.type.rawValue), Int(vector["type"]?.integerValue ?? -1))
            XCTAssertLessThanOrEqual(packet.payload.count, packet.type.maxPayload)
            XCTAssertEqual(bytes.count, Packet.overhead(directed: packet.type.isDirected) + packet.payload.count)
            XCTAssertLessThanOrEqual(packet.ttl, packet.type.originTTL)
        }
    }
}

final class ImpairmentTests: XCTestCase {
    func testSpecParsingAndDrawOrder() throws {
        let parsed = try UDPImpairment(spec: "loss=0.25,dup=0.5,delay=10-20,seed=42")
        XCTAssertEqual(parsed, UDPImpairment(loss: 0.25, duplication: 0.5, delay: 10...20, seed: 42))
        for bad in ["loss=2", "dup=x", "delay=20-10", "seed=-1", "jitter=1", "loss"] {
            XCTAssertThrowsError(try UDPImpairment(spec: bad), bad)
        }
        // The same draws by hand, in the spec's order.
        var impairment = parsed
        var rng = SplitMix64(seed: 42)
        for _ in 0..<1000 {
            var expected: [UInt64] = []
            if rng.unit() >= 0.25 {
                let copies = rng.unit() < 0.5 ? 2 : 1
                for _ in 0..<copies { expected.append(10 + UInt64(rng.unit() * 11)) }
            }
            let fate = impairment.next()
            XCTAssertEqual(fate, expected)
            XCTAssertTrue(fate.allSatisfy { (10...20).contains($0) })
        }
        // SplitMix64's first outputs for seed 0 (Vigna's reference): the generator is the standard one.
        var zero = SplitMix64(seed: 0)
        XCTAssertEqual(zero.next(), 0xE220_A839_7B1D_CDAF)
        XCTAssertEqual(zero.next(), 0x6E78_9E6A_A1B9_65F4)
    }
}
