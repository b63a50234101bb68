import Backup
import Foundation
import XCTest

/// The backup's content (issue 25): it round-trips, and a content with a malformed row or
/// another format is refused before a restore writes anything.
final class BackupContentTests: XCTestCase {
    private func sample() -> BackupContent {
        let id = Data(repeating: 1, count: 32)
        return BackupContent(
            createdAt: 1_795_000_000, parts: BackupContent.Part.allCases,
            identity: .init(nostrSecretKey: Data(repeating: 7, count: 32), createdAt: 1, dmIdentity: Data([1, 2, 3])),
            relays: [.init(url: "ws://127.0.0.1:7447", read: true, write: true, addedAt: 2)],
            contacts: [.init(identity: id, name: "Bob", addedAt: 3, record: Data([9]))],
            directMessages: [.init(contact: id, direction: "in", msgID: Data(repeating: 2, count: 16), kind: 1, sentAt: 4, receivedAt: 5,
                                   body: Data("hi".utf8), status: "received")],
            groups: [.init(mlsGroupID: Data([4, 4]), nostrGroupID: id, state: "active", mlsState: Data([5]), createdAt: 6, lastSelfUpdate: 7,
                           syncSince: 8, name: "Family", epoch: 3)],
            groupMessages: [.init(mlsGroupID: Data([4, 4]), id: id, eventID: id, sender: id, kind: 9, createdAt: 9, content: "hello",
                                  rumorJSON: "{}", epoch: 3, receivedAt: 10, generation: 0)],
            memberNames: [.init(pubkey: id, mlsGroupID: Data([4, 4]), name: "Bobby", updatedAt: 11)],
            handledEvents: [id])
    }

    func testRoundTrip() throws {
        let content = sample()
        XCTAssertEqual(try BackupContent.decode(try content.encoded()), content)
        XCTAssertFalse(content.description.contains("7, 7"), "the description holds no key")
    }

    func testMalformedContentIsRefused() throws {
        var badKey = sample()
        badKey.identity?.nostrSecretKey = Data(repeating: 7, count: 31)
        var badState = sample()
        badState.groups[0].state = "pending"
        var badDM = sample()
        badDM.directMessages[0].msgID = Data([1])
        var orphanGroups = sample()
        orphanGroups.identity = nil
        var badEvent = sample()
        badEvent.handledEvents = [Data([1])]
        for content in [badKey, badState, badDM, orphanGroups, badEvent] {
            XCTAssertThrowsError(try BackupContent.decode(try content.encoded())) {
                guard case BackupError.corrupt = $0 else { return XCTFail("\($0)") }
            }
        }
        var newer = sample()
        newer.version = 2
        XCTAssertThrowsError(try BackupContent.decode(try newer.encoded())) {
            guard case BackupError.unsupported = $0 else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try BackupContent.decode(Array("{}".utf8)))
        XCTAssertThrowsError(try BackupContent.decode(Array("not json".utf8)))
    }
}
