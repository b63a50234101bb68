import XCTest
@testable import Mesh

final class MeshVectorsTests: XCTestCase {
    func testVersion() { XCTAssertEqual(MeshProtocol.version, 1) }
}
