import Nostr
import TestSupport
import XCTest
@testable import RelayClient

/// The pool dials Nostr's `RelayURL` (rust-nostr's rules, tested in NostrTests) and adds what a
/// socket needs.
final class RelayURLDialingTests: XCTestCase {
    func testDialingParts() throws {
        let a = try RelayURL.dialable("wss://Relay.Example.com")
        XCTAssertEqual(a.scheme, .wss)
        XCTAssertEqual(a.host, "relay.example.com")
        XCTAssertEqual(a.port, 443)
        XCTAssertEqual(a.path, "/")
        XCTAssertEqual(a.description, "wss://relay.example.com")
        XCTAssertTrue(a.isTLS)

        let b = try RelayURL.dialable("  ws://127.0.0.1:7000/nostr?x=1#frag ")
        XCTAssertEqual(b.port, 7000)
        XCTAssertEqual(b.path, "/nostr?x=1")
        XCTAssertEqual(b.dialString, "ws://127.0.0.1:7000/nostr?x=1")
        XCTAssertFalse(b.isTLS)
        XCTAssertTrue(b.isLoopback)

        XCTAssertEqual(try RelayURL.dialable("wss://relay.example.com:443/"), try RelayURL.dialable("wss://relay.example.com"))
        XCTAssertEqual(try RelayURL.dialable("ws://[::1]:8080").bareHost, "::1")
        XCTAssertEqual(try RelayURL.dialable("ws://[::1]:8080").description, "ws://[::1]:8080")
        XCTAssertEqual(try RelayURL.dialable("ws://a.example:8080/x/?q").path, "/x/?q")
    }

    func testRejectsWhatWeCannotDial() {
        for text in ["", "relay.example.com", "http://relay.example.com", "wss://", "wss://:443", "wss://host:0",
                     "wss://host:65536", "wss://host:port", "wss://user@host", "wss://ho st", "wss://[::1", "ftp://x"] {
            XCTAssertThrowsError(try RelayURL.dialable(text), text) { error in
                XCTAssertEqual(error as? RelayClientError, .invalidURL(text), text)
            }
        }
    }
}

final class BackoffTests: XCTestCase {
    func testGrowsExponentiallyUpToTheCapAndResets() {
        var backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(2), multiplier: 2, jitter: 0)
        var rng = SystemRandomNumberGenerator()
        let delays = (0..<8).map { _ in backoff.nextDelay(using: &rng) }
        XCTAssertEqual(delays, [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
                                .milliseconds(1600), .seconds(2), .seconds(2), .seconds(2)])
        XCTAssertEqual(backoff.attempts, 8)
        backoff.reset()
        XCTAssertEqual(backoff.nextDelay(using: &rng), .milliseconds(100))
    }

    func testJitterStaysWithinItsBand() {
        var backoff = Backoff(initial: .seconds(1), maximum: .seconds(1), multiplier: 2, jitter: 0.25)
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let delay = backoff.nextDelay(using: &rng)
            XCTAssertGreaterThanOrEqual(delay, .milliseconds(750))
            XCTAssertLessThanOrEqual(delay, .milliseconds(1250))
        }
    }
}

final class PaginatorTests: XCTestCase {
    /// A relay that answers like LocalRelay: newest first, at most `cap` (or `limit`).
    private func serve(_ store: [Event], _ filter: Filter, cap: Int) -> [Event] {
        let matching = store.filter { filter.matches($0) }
            .sorted { $0.createdAt != $1.createdAt ? $0.createdAt > $1.createdAt : $0.id < $1.id }
        return Array(matching.prefix(min(cap, filter.limit ?? cap)))
    }

    private func makeStore(count: Int, secondsApart: (Int) -> Int64) throws -> [Event] {
        let keys = TestEvents.keys()
        return try (0..<count).map { try TestEvents.sign(content: "\($0)", createdAt: 1_700_000_000 + secondsApart($0), keys: keys) }
    }

    private func fetchAll(_ store: [Event], filter: Filter, cap: Int, smallestCap: Int = 1) -> (events: [Event], pages: Int) {
        var paginator = Paginator(filter: filter, smallestCap: smallestCap)
        var all: [Event] = []
        while let next = paginator.nextFilter, paginator.pages < 1000 {
            all += paginator.record(page: serve(store, next, cap: cap))
        }
        return (all, paginator.pages)
    }

    func testWalksPastTheCapExactlyOnce() throws {
        let store = try makeStore(count: 1234, secondsApart: { Int64($0 / 3) })  // three events per second
        let result = fetchAll(store, filter: Filter(kinds: [1]), cap: 500)
        XCTAssertEqual(result.events.count, 1234)
        XCTAssertEqual(Set(result.events.map(\.id)), Set(store.map(\.id)))
        XCTAssertLessThanOrEqual(result.pages, 5)
    }

    func testSmallResultsNeedFewRoundTrips() throws {
        let store = try makeStore(count: 10, secondsApart: { Int64($0) })
        // Without a floor on relay caps: one more REQ confirms nothing older is hidden.
        let checked = fetchAll(store, filter: Filter(kinds: [1]), cap: 500)
        XCTAssertEqual(checked.events.count, 10)
        XCTAssertEqual(checked.pages, 2)
        XCTAssertEqual(fetchAll([], filter: Filter(kinds: [1]), cap: 500).pages, 1)
        // Fewer events than any relay's cap: the first answer is complete.
        let single = fetchAll(Array(store.prefix(1)), filter: Filter(kinds: [1]), cap: 500, smallestCap: 10)
        XCTAssertEqual(single.events.count, 1)
        XCTAssertEqual(single.pages, 1)
        // One event alone in its second, no floor: stepped past once, then done.
        XCTAssertEqual(fetchAll(Array(store.prefix(1)), filter: Filter(kinds: [1]), cap: 500).pages, 3)
    }

    func testSecondFullerThanAPageIsSteppedOver() throws {
        // 30 events in one second, then 20 older ones; cap 10: the second's overflow is
        // unreachable through NIP-01, but everything older still arrives.
        let store = try makeStore(count: 50, secondsApart: { $0 < 30 ? 100 : Int64(50 - $0) })
        let result = fetchAll(store, filter: Filter(kinds: [1]), cap: 10)
        let older = store.filter { $0.createdAt < 1_700_000_100 }
        XCTAssertTrue(Set(older.map(\.id)).isSubset(of: Set(result.events.map(\.id))))
        XCTAssertEqual(Set(result.events.map(\.id)).count, result.events.count)
    }

    func testLimitBoundsTheTotal() throws {
        let store = try makeStore(count: 300, secondsApart: { Int64($0) })
        let result = fetchAll(store, filter: Filter(kinds: [1], limit: 120), cap: 50)
        XCTAssertGreaterThanOrEqual(result.events.count, 120)
        XCTAssertLessThan(result.events.count, 170)
    }
}

final class ResubscriptionTests: XCTestCase {
    func testResumesFromLastSeenMinusMargin() {
        let margin = Duration.seconds(600)
        let week = Duration.seconds(7 * 24 * 3600)
        let notes = Filter(kinds: [1], since: 100)
        let wraps = Filter(kinds: [1059], tags: ["p": ["x"]])
        let any = Filter(authors: nil)

        let resumed = Resubscription.filters([notes, wraps, any], lastSeenCreatedAt: 2_000_000, eoseAt: nil,
                                             margin: margin, giftWrapMargin: week)
        XCTAssertEqual(resumed[0].since, 2_000_000 - 600)
        XCTAssertEqual(resumed[1].since, 2_000_000 - 7 * 24 * 3600)
        XCTAssertEqual(resumed[2].since, 2_000_000 - 7 * 24 * 3600, "no kinds may match gift wraps")
        XCTAssertEqual(resumed[1].tags, wraps.tags)

        // Without events the EOSE time anchors; without either, the original is re-sent.
        XCTAssertEqual(Resubscription.filters([notes], lastSeenCreatedAt: nil, eoseAt: 5000, margin: margin, giftWrapMargin: week)[0].since, 4400)
        XCTAssertEqual(Resubscription.filters([notes], lastSeenCreatedAt: nil, eoseAt: nil, margin: margin, giftWrapMargin: week), [notes])
        // Never earlier than asked, never past `until`.
        XCTAssertEqual(Resubscription.filters([notes], lastSeenCreatedAt: 200, eoseAt: nil, margin: margin, giftWrapMargin: week)[0].since, 100)
        let window = Filter(kinds: [1], until: 1000)
        XCTAssertEqual(Resubscription.filters([window], lastSeenCreatedAt: 5000, eoseAt: nil, margin: margin, giftWrapMargin: week), [window])
    }
}
