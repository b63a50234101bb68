import Foundation
import Synchronization
import TestSupport
@testable import Web
import XCTest

/// The page's settings, logins and limits, without a server.
final class WebOptionsAndSessionsTests: XCTestCase {
    func testAddressesAndTheRemoteRule() throws {
        let plain = try WebOptions(address: nil, allowRemote: false, tiles: nil)
        XCTAssertEqual(plain.host, "127.0.0.1")
        XCTAssertEqual(plain.port, 8040)
        XCTAssertEqual(plain.tiles, WebOptions.defaultTiles)
        XCTAssertEqual(try WebOptions(address: "127.0.0.1:9000", allowRemote: false, tiles: "off").port, 9000)
        XCTAssertNil(try WebOptions(address: ":9001", allowRemote: false, tiles: "off").tiles)
        XCTAssertEqual(try WebOptions(address: "9002", allowRemote: false, tiles: nil).port, 9002)
        XCTAssertEqual(try WebOptions(address: "[::1]:9003", allowRemote: false, tiles: nil).host, "::1")
        XCTAssertEqual(try WebOptions(address: "localhost", allowRemote: false, tiles: nil).host, "localhost")
        for remote in ["0.0.0.0:8040", "192.168.1.5", "[::]:80", "example.org:8040"] {
            XCTAssertThrowsError(try WebOptions(address: remote, allowRemote: false, tiles: nil), remote) {
                guard case .remoteNotAllowed = $0 as? WebError else { return XCTFail("\($0)") }
            }
            XCTAssertFalse(try WebOptions(address: remote, allowRemote: true, tiles: nil).isLoopback, remote)
        }
        for bad in ["127.0.0.1:99999", "127.0.0.1:port", "[::1", "host with space", "127.0.0.1:-1"] {
            XCTAssertThrowsError(try WebOptions(address: bad, allowRemote: true, tiles: nil), bad) {
                guard case .invalidAddress = $0 as? WebError else { return XCTFail("\(bad): \($0)") }
            }
        }
        XCTAssertEqual(WebError.portInUse("127.0.0.1:8040").failure.code.rawValue, "web_port_in_use")
        XCTAssertEqual(WebError.leafletMissing("/x").failure.code.rawValue, "web_unavailable")
        XCTAssertEqual(WebError.remoteNotAllowed("0.0.0.0").failure.code.rawValue, "invalid_input")
    }

    func testTileTemplatesAndThePolicy() throws {
        let osm = try WebOptions(address: nil, allowRemote: false, tiles: nil)
        XCTAssertEqual(osm.tileOrigin, "https://tile.openstreetmap.org")
        let local = try WebOptions(address: nil, allowRemote: false, tiles: "http://127.0.0.1:8081/tiles/{z}/{x}/{y}.png")
        XCTAssertEqual(local.tileOrigin, "http://127.0.0.1:8081")
        for bad in ["ftp://x/{z}/{x}/{y}", "https://x/tiles.png", "https://x/{z}/{x}/{y}.png'; script-src *", "javascript:{z}{x}{y}"] {
            XCTAssertThrowsError(try WebOptions(address: nil, allowRemote: false, tiles: bad), bad)
        }
        let policy = PageAssets.contentSecurityPolicy(tileOrigin: local.tileOrigin)
        XCTAssertTrue(policy.contains("script-src 'self';"), policy)
        XCTAssertTrue(policy.contains("img-src 'self' data: http://127.0.0.1:8081;"), policy)
        XCTAssertFalse(policy.contains("unsafe-inline") || policy.contains("unsafe-eval"), policy)
        XCTAssertEqual(PageAssets.contentSecurityPolicy(tileOrigin: nil).contains("img-src 'self' data:;"), true)
        // Nothing in the page runs inline or writes HTML from data.
        XCTAssertFalse(PageAssets.indexHTML.contains("<script>") || PageAssets.indexHTML.contains(" on"), "inline script or handler")
        XCTAssertFalse(PageAssets.appJS.contains("innerHTML") || PageAssets.appJS.contains("insertAdjacentHTML") || PageAssets.appJS.contains("eval("))
    }

    func testTheLoginLinkWorksOnceAndSessionsLastThirtyDaysAcrossRestarts() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("web-sessions-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let now = Mutex(1_800_000_000 as Int64)
        let clock: @Sendable () -> Int64 = { now.withLock { $0 } }
        let sessions = WebSessions(file: file, clock: clock)
        XCTAssertEqual(sessions.loginToken.count, 64)
        XCTAssertNil(sessions.logIn(token: String(repeating: "0", count: 64)), "a wrong token")
        XCTAssertNil(sessions.logIn(token: String(sessions.loginToken.dropLast())), "a short token")
        let (cookie, csrf) = try XCTUnwrap(sessions.logIn(token: sessions.loginToken))
        XCTAssertNil(sessions.logIn(token: sessions.loginToken), "the link works once")
        let session = try XCTUnwrap(sessions.session(cookie: cookie))
        XCTAssertTrue(WebSessions.csrfMatches(session, csrf))
        XCTAssertFalse(WebSessions.csrfMatches(session, String(csrf.dropLast()) + "x"))
        XCTAssertFalse(WebSessions.csrfMatches(session, nil))
        XCTAssertNil(sessions.session(cookie: String(repeating: "a", count: 64)))
        // The file holds digests, never the cookie; it is the owner's only.
        let saved = try String(contentsOf: file, encoding: .utf8)
        XCTAssertFalse(saved.contains(cookie))
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        // A restarted `run`: a new link, the old session still good until its 30 days are up.
        let restarted = WebSessions(file: file, clock: clock)
        XCTAssertNotEqual(restarted.loginToken, sessions.loginToken)
        XCTAssertNotNil(restarted.session(cookie: cookie))
        now.withLock { $0 += WebSessions.lifetime - 1 }
        XCTAssertNotNil(restarted.session(cookie: cookie))
        now.withLock { $0 += 1 }
        XCTAssertNil(restarted.session(cookie: cookie), "expired after 30 days")
        XCTAssertEqual(WebSessions.cookie(in: "a=1; burrow_session=\(cookie); b=2"), cookie)
    }

    func testAtMostSixteenSessions() throws {
        // Sixteen logins (each `run` has one link) fill the store; a seventeenth pushes the oldest out.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("web-sessions-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        var mine: [String] = []
        let now = Mutex(1_800_000_000 as Int64)
        for _ in 0..<(WebSessions.maximumSessions + 1) {
            now.withLock { $0 += 1 }
            let sessions = WebSessions(file: file, clock: { now.withLock { $0 } })
            mine.append(try XCTUnwrap(sessions.logIn(token: sessions.loginToken)).cookie)
        }
        let last = WebSessions(file: file, clock: { now.withLock { $0 } })
        XCTAssertNil(last.session(cookie: mine[0]), "the oldest made way")
        for cookie in mine.dropFirst() { XCTAssertNotNil(last.session(cookie: cookie)) }
    }

    func testTheRateLimitAtItsBound() {
        let limiter = RateLimiter(perSecond: 2, burst: 10)
        let start = ContinuousClock.now
        for _ in 0..<10 { XCTAssertTrue(limiter.allow("a", now: start)) }
        XCTAssertFalse(limiter.allow("a", now: start), "the eleventh at once")
        XCTAssertTrue(limiter.allow("b", now: start), "another client has its own bucket")
        XCTAssertTrue(limiter.allow("a", now: start + .milliseconds(500)), "refilled at 2 a second")
        XCTAssertFalse(limiter.allow("a", now: start + .milliseconds(500)))
    }
}
