import FuzzTargets
import XCTest

/// The mesh decoders' fuzz targets over their seeds and deterministic mutations (see
/// `FuzzSmokeTests.smoke`).
extension FuzzSmokeTests {
    func testMeshPacket() throws {
        let result = try smoke(MeshPacketTarget.self, mutations: 2000)
        for name in ["announce", "leave", "dm", "nostr-event", "sync-request-offer", "sync-request-want", "sync-offer", "beacon", "join-hello"] {
            XCTAssertTrue(result.generated[name]?.description.hasPrefix("accepted as verified.") ?? false,
                          "\(name): \(result.generated[name].map(String.init(describing:)) ?? "missing")")
        }
        XCTAssertGreaterThan(accepted(result.histogram), 50)
        XCTAssertGreaterThan(result.histogram[.rejected("truncated"), default: 0], 20)
    }

    func testMeshFragment() throws {
        let result = try smoke(MeshFragmentTarget.self, mutations: 1500)
        for (name, outcome) in result.generated {
            XCTAssertTrue(outcome.description.hasPrefix("accepted as packet."), "generated seed \(name): \(outcome)")
        }
        XCTAssertGreaterThan(accepted(result.histogram), 50)
    }
}
