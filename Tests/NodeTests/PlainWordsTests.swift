@testable import Node
import XCTest

/// Issue 22, item 9: no Swift value dumps in what people read.
final class PlainWordsTests: XCTestCase {
    func testSwiftValuesBecomeWords() {
        XCTAssertEqual(PlainWords.humanize("mls(MLS.MLSError.handshakeFromPastEpoch(epoch: 1))"), "handshake from past epoch (epoch 1)")
        XCTAssertEqual(PlainWords.humanize("Marmot.MarmotError.groupInactive"), "group inactive")
        XCTAssertEqual(PlainWords.humanize("handshakeStale"), "handshake stale")
        XCTAssertEqual(PlainWords.humanize(#"Marmot.MarmotError.welcomeInviterMismatch("the welcome\'s author signed its GroupInfo.")"#),
                       "welcome inviter mismatch: the welcome's author signed its GroupInfo.")
    }

    func testSentencesStayAsTheyAre() {
        for text in ["the group is stale", "no group matches Family", "timeout", "older than the 45-day event window (created_at 5)"] {
            XCTAssertEqual(PlainWords.humanize(text), text)
        }
    }
}
