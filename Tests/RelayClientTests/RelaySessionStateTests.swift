import Nostr
import TestSupport
import XCTest
@testable import RelayClient

/// `RelaySessionState` with no relay and no clock: REQ resend, OK matching, EOSE, CLOSED,
/// AUTH and backoff, each decided from the inputs given.
final class RelaySessionStateTests: XCTestCase {
    private func makeState(canAuthenticate: Bool = true) -> RelaySessionState {
        var configuration = RelayConfiguration()
        configuration.resubscribeMargin = .seconds(60)
        configuration.giftWrapResubscribeMargin = .seconds(600)
        return RelaySessionState(settings: .init(configuration: configuration, canAuthenticate: canAuthenticate),
                                 backoff: Backoff(initial: .milliseconds(100), maximum: .seconds(2), multiplier: 2, jitter: 0))
    }

    private func sent(_ actions: [RelaySessionState.Action]) -> [ClientMessageShape] {
        actions.compactMap {
            guard case .send(let text) = $0 else { return nil }
            return ClientMessageShape(text)
        }
    }

    private func eventMessage(_ subscriptionID: String, _ event: Event) -> String {
        "[\"EVENT\",\"\(subscriptionID)\",\(event.jsonString)]"
    }

    private func signals(_ actions: [RelaySessionState.Action]) -> [(String, String)] {
        actions.compactMap {
            guard case .signal(let id, let signal) = $0 else { return nil }
            return (id, "\(signal)".prefix { $0 != "(" }.description)
        }
    }

    func testLiveSubscriptionAsksForAConnectionAndIsResumedFromWhatItSaw() throws {
        var state = makeState()
        let filter = Filter(kinds: [1])
        let subscribed = try state.subscribe(id: "s", filters: [filter], live: true)
        XCTAssertEqual(subscribed.count, 1)
        guard case .connect = subscribed.first else { return XCTFail("\(subscribed)") }
        XCTAssertThrowsError(try state.subscribe(id: "page", filters: [filter], live: false)) {
            XCTAssertEqual($0 as? RelayClientError, .connectionClosed("not connected"))
        }

        let first = sent(state.connectionOpened())
        XCTAssertEqual(first.map(\.type), ["REQ"])
        XCTAssertNil(first[0].since, "the first REQ is what the owner asked")

        let keys = TestEvents.keys()
        let event = try TestEvents.sign(kind: 1, createdAt: 10_000, keys: keys)
        let delivered = state.receive(text: eventMessage("s", event), now: 20_000)
        XCTAssertEqual(signals(delivered).map(\.1), ["event"])
        XCTAssertEqual(signals(state.receive(text: RelayMessage.eose(subscriptionID: "s").jsonString, now: 20_000)).map(\.1), ["eose"])

        let ended = state.connectionEnded(.connectionClosed("gone"))
        XCTAssertEqual(signals(ended).map(\.1), ["connectionLost"])
        XCTAssertTrue(ended.contains { if case .startReconnecting = $0 { true } else { false } })

        let again = state.connectionOpened()
        let resent = sent(again)
        XCTAssertEqual(resent.map(\.type), ["REQ"])
        XCTAssertEqual(resent[0].since, 10_000 - 60, "resumed a margin before the newest event seen")
        XCTAssertEqual(signals(again).map(\.1), ["reconnected"])
        XCTAssertEqual(state.generation, 2)
    }

    func testAResumePointNeverMovesIntoTheFuture() throws {
        var state = makeState()
        _ = try state.subscribe(id: "s", filters: [Filter(kinds: [1])], live: true)
        _ = state.connectionOpened()
        let future = try TestEvents.sign(kind: 1, createdAt: 99_999, keys: TestEvents.keys())
        _ = state.receive(text: eventMessage("s", future), now: 5_000)
        _ = state.connectionEnded(.connectionClosed("gone"))
        XCTAssertEqual(sent(state.connectionOpened()).first?.since, 5_000 - 60)
    }

    func testEventsThatFailVerificationOrTheFiltersAreDroppedWithAnError() throws {
        var state = makeState()
        _ = try state.subscribe(id: "s", filters: [Filter(kinds: [1])], live: true)
        _ = state.connectionOpened()
        let wrongKind = try TestEvents.sign(kind: 7, keys: TestEvents.keys())
        XCTAssertEqual(signals(state.receive(text: eventMessage("s", wrongKind), now: 1)).map(\.1),
                       ["error"])
        var tampered = eventMessage("s", try TestEvents.sign(kind: 1, content: "a", keys: TestEvents.keys()))
        tampered = tampered.replacingOccurrences(of: "\"content\":\"a\"", with: "\"content\":\"b\"")
        XCTAssertEqual(signals(state.receive(text: tampered, now: 1)).map(\.1), ["error"])
        XCTAssertNil(state.subscriptions["s"]?.lastSeenCreatedAt, "nothing dropped moves the resume point")
        XCTAssertEqual(signals(state.receive(text: "[\"EVENT\"", now: 1)).map(\.1), ["error"])
        XCTAssertTrue(state.receive(text: RelayMessage.eose(subscriptionID: "unknown").jsonString, now: 1).isEmpty)
    }

    func testOKsAnswerTheirEventAndAnIdlessOKTheOldestWaiter() throws {
        var state = makeState()
        _ = state.connectionOpened()
        let a = try TestEvents.sign(keys: TestEvents.keys()), b = try TestEvents.sign(keys: TestEvents.keys())
        let tokenA = state.expectOK(for: a.id), tokenA2 = state.expectOK(for: a.id), tokenB = state.expectOK(for: b.id)

        let answered = state.receive(text: "[\"OK\",\"\(b.id.hex)\",true,\"\"]", now: 1)
        guard case .answerOK(let token, let answer) = try XCTUnwrap(answered.first), answered.count == 1 else { return XCTFail("\(answered)") }
        XCTAssertEqual(token, tokenB)
        XCTAssertTrue(answer.accepted)

        let both = state.receive(text: "[\"OK\",\"\(a.id.hex)\",false,\"blocked: no\"]", now: 1)
        XCTAssertEqual(both.compactMap { if case .answerOK(let t, _) = $0 { t } else { nil } }, [tokenA, tokenA2])
        XCTAssertTrue(state.pendingOKs.isEmpty)

        let c = try TestEvents.sign(keys: TestEvents.keys())
        let first = state.expectOK(for: c.id), second = state.expectOK(for: a.id)
        let idless = state.receive(text: "[\"OK\",\"\",false,\"invalid: bad\"]", now: 1)
        XCTAssertEqual(idless.compactMap { if case .answerOK(let t, _) = $0 { t } else { nil } }, [first])
        state.forgetOK(second)
        XCTAssertTrue(state.receive(text: "[\"OK\",\"\",false,\"x\"]", now: 1).isEmpty)

        let third = state.expectOK(for: c.id)
        let ended = state.connectionEnded(.connectionClosed("gone"))
        XCTAssertEqual(ended.compactMap { if case .failOK(let t, _) = $0 { t } else { nil } }, [third])
    }

    func testAChallengeIsAnsweredOncePerChallengeAndAnAuthRequiredCloseRetriesOnce() throws {
        var state = makeState()
        _ = try state.subscribe(id: "dm", filters: [Filter(kinds: [1059])], live: true)
        _ = state.connectionOpened()
        XCTAssertEqual(state.authenticationStep(), .awaitChallenge)

        let challenged = state.receive(text: "[\"AUTH\",\"c1\"]", now: 1)
        XCTAssertEqual(challenged.map { "\($0)" }, ["challengeArrived(\"c1\")", "authenticate"])
        XCTAssertEqual(state.authenticationStep(), .start(challenge: "c1"))
        state.authenticationStarted(challenge: "c1")
        XCTAssertEqual(state.authenticationStep(), .joinInFlight(challenge: "c1"))
        state.authenticationEnded(challenge: "c1", accepted: true)
        XCTAssertEqual(state.authenticationStep(), .alreadyAuthenticated)
        _ = state.receive(text: "[\"AUTH\",\"c2\"]", now: 1)
        XCTAssertEqual(state.authenticationStep(), .start(challenge: "c2"), "a new challenge needs a new answer")

        let refused = state.receive(text: "[\"CLOSED\",\"dm\",\"auth-required: who are you\"]", now: 1)
        guard case .authenticateAndResend(let id, _, let generation) = try XCTUnwrap(refused.first) else { return XCTFail("\(refused)") }
        XCTAssertEqual(id, "dm")
        XCTAssertEqual(sent(state.resendAfterAuthentication("dm", generation: generation)).map(\.type), ["REQ"])
        XCTAssertEqual(signals(state.receive(text: "[\"CLOSED\",\"dm\",\"auth-required: still no\"]", now: 1)).map(\.1), ["closed"],
                       "the second refusal is final")
        XCTAssertNil(state.subscriptions["dm"])

        var anonymous = makeState(canAuthenticate: false)
        _ = try anonymous.subscribe(id: "dm", filters: [Filter(kinds: [1059])], live: true)
        _ = anonymous.connectionOpened()
        XCTAssertEqual(anonymous.receive(text: "[\"AUTH\",\"c1\"]", now: 1).map { "\($0)" }, ["challengeArrived(\"c1\")"])
        XCTAssertEqual(signals(anonymous.receive(text: "[\"CLOSED\",\"dm\",\"auth-required: x\"]", now: 1)).map(\.1), ["closed"])
    }

    func testAResendForAnOlderConnectionIsDropped() throws {
        var state = makeState()
        _ = try state.subscribe(id: "dm", filters: [Filter(kinds: [1059])], live: true)
        _ = state.connectionOpened()
        let refused = state.receive(text: "[\"CLOSED\",\"dm\",\"auth-required: x\"]", now: 1)
        guard case .authenticateAndResend(_, _, let generation) = try XCTUnwrap(refused.first) else { return XCTFail() }
        _ = state.connectionEnded(.connectionClosed("gone"))
        _ = state.connectionOpened()
        XCTAssertTrue(state.resendAfterAuthentication("dm", generation: generation).isEmpty)
    }

    func testPagesEndWithTheirConnectionAndUnsubscribeClosesWhatTheRelayHas() throws {
        var state = makeState()
        _ = state.connectionOpened()
        XCTAssertEqual(sent(try state.subscribe(id: "page", filters: [Filter(kinds: [1])], live: false)).map(\.type), ["REQ"])
        XCTAssertEqual(sent(state.unsubscribe(id: "page")).map(\.type), ["CLOSE"])
        XCTAssertTrue(state.unsubscribe(id: "page").isEmpty)

        _ = try state.subscribe(id: "page2", filters: [Filter(kinds: [1])], live: false)
        let ended = state.connectionEnded(.connectionClosed("gone"))
        XCTAssertEqual(signals(ended).map { "\($0.0) \($0.1)" }, ["page2 connectionLost"])
        XCTAssertFalse(ended.contains { if case .startReconnecting = $0 { true } else { false } }, "nothing live to resume")
        XCTAssertNil(state.subscriptions["page2"])
    }

    func testBackoffGrowsWhileFailingAndResetsWhenTheRelaySpeaks() throws {
        var state = makeState()
        var rng = SystemRandomNumberGenerator()
        _ = try state.subscribe(id: "s", filters: [Filter(kinds: [1])], live: true)
        let start = ContinuousClock.now
        let failed = state.connectFailed(.connectionClosed("refused"), now: start)
        XCTAssertEqual(signals(failed).map(\.1), ["error"])
        XCTAssertTrue(failed.contains { if case .startReconnecting = $0 { true } else { false } })
        XCTAssertFalse(state.mayComeBack(forOperationStartedAt: start), "never reached")
        XCTAssertEqual([state.nextReconnectDelay(using: &rng), state.nextReconnectDelay(using: &rng)], [.milliseconds(100), .milliseconds(200)])

        _ = state.connectionOpened()
        XCTAssertEqual(state.backoff.attempts, 2, "a TCP connection alone does not prove the relay works")
        _ = state.receive(text: "[\"NOTICE\",\"hi\"]", now: 1)
        XCTAssertEqual(state.backoff.attempts, 0)
        XCTAssertEqual(state.nextReconnectDelay(using: &rng), .milliseconds(100))
        XCTAssertTrue(state.mayComeBack(forOperationStartedAt: start))
        _ = state.connectionEnded(.connectionClosed("gone"))
        _ = state.connectFailed(.connectionClosed("refused"), now: start.advanced(by: .seconds(5)))
        XCTAssertTrue(state.mayComeBack(forOperationStartedAt: start), "it went away during the operation")
        XCTAssertFalse(state.mayComeBack(forOperationStartedAt: start.advanced(by: .seconds(10))), "it was down before")
    }

    func testShutDownEndsEverySubscriptionAndRefusesNewOnes() throws {
        var state = makeState()
        _ = try state.subscribe(id: "s", filters: [Filter(kinds: [1])], live: true)
        let actions = state.shutDown()
        XCTAssertEqual(signals(actions).map { "\($0.0) \($0.1)" }, ["s connectionLost"])
        XCTAssertTrue(state.subscriptions.isEmpty)
        XCTAssertThrowsError(try state.subscribe(id: "t", filters: [], live: true)) {
            XCTAssertEqual($0 as? RelayClientError, .shutDown)
        }
        XCTAssertTrue(state.receive(text: "[\"NOTICE\",\"late\"]", now: 1).isEmpty)
    }
}

/// The parts of a client message these tests look at.
private struct ClientMessageShape {
    let type: String
    let since: Int64?

    init(_ text: String) {
        let array = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [Any] ?? []
        type = array.first as? String ?? "?"
        since = ((array.count > 2 ? array[2] : nil) as? [String: Any])?["since"].flatMap { ($0 as? NSNumber)?.int64Value }
    }
}
