import Backup
import Foundation
@_spi(StoreAccess) import Node
import Store
import XCTest

/// The node's half of backups (issue 25): what `backupContent` copies and `restore` writes back.
final class BackupNodeTests: XCTestCase {
    func testContentOfAFreshNodeEncodesAndRestores() throws {
        let root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-bnode-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let node = try BurrowNode.initialize(home: root.appendingPathComponent("a"), passphrase: Array("p".utf8), kdfMemoryMiB: 8, importing: nil)
        _ = try node.addRelays(["ws://127.0.0.1:9"])
        let content = try node.backupContent(parts: Set(BackupContent.Part.allCases))
        node.close()
        let bytes = try content.encoded()
        let decoded = try BackupContent.decode(bytes)
        XCTAssertEqual(decoded, content)
        let (restored, summary) = try BurrowNode.restore(decoded, home: root.appendingPathComponent("b"), passphrase: Array("q".utf8), kdfMemoryMiB: 8)
        defer { restored.close() }
        XCTAssertEqual(summary.npub, node.publicKey.npub)
        XCTAssertEqual(try restored.relays(), ["ws://127.0.0.1:9"])
    }
}
