import Foundation
import TestSupport
import XCTest

/// The family's page (issue 24) in a real browser: headless Chromium from Debian, driven by
/// chromedriver. Alice runs `burrow run --web`; Bob is another home that publishes locations
/// and chats through the relay. Screenshots of each test land in the artifacts (browser/).
final class WebPageTests: XCTestCase {
    var root: URL!
    var relay: RelayProcess!
    var alice: BurrowHome!
    var bob: BurrowHome!
    var run: PeerProcess?
    var browser: Browser?
    var pass: String { root.appendingPathComponent("pass").path }

    static let aliceAt = (lat: -33.8688, lon: 151.2093)
    static let bobAt = (lat: -33.8570, lon: 151.2150)

    override func setUp() async throws {
        try Browser.require()
        guard FileManager.default.isReadableFile(atPath: "/usr/share/javascript/leaflet/leaflet.js") else {
            throw XCTSkip("libjs-leaflet is not installed (make setup installs it)")
        }
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-web-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "web passphrase".write(to: root.appendingPathComponent("pass"), atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start()
        alice = try BurrowHome.create(in: root, name: "alice", relay: relay.url, passphraseFile: pass)
        bob = try BurrowHome.create(in: root, name: "bob", relay: relay.url, passphraseFile: pass)
    }

    override func tearDown() async throws {
        await browser?.close()
        run?.stop()
        relay?.stop()
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    /// Family with Alice and Bob, Bob named `bobName`, both with a location.
    private func family(bobName: String = "Bob") throws {
        try alice.ok(["profile", "set", "--name", "Alice"])
        try bob.ok(["profile", "set", "--name", bobName])
        try bob.ok(["keypackage", "publish"])
        try alice.ok(["group", "create", "Family", "--invite", try bob.pubkey])
        try bob.ok(["sync"])
        try bob.ok(["invite", "accept", "Family"])
        try alice.ok(["sync"])
        try alice.ok(["location", "Family", "--lat", String(Self.aliceAt.lat), "--lon", String(Self.aliceAt.lon), "--acc", "25"])
        try bob.ok(["location", "Family", "--lat", String(Self.bobAt.lat), "--lon", String(Self.bobAt.lon), "--acc", "40"])
        try alice.ok(["sync"])
    }

    /// `run --web` on a free port; the `web` line's login link.
    private func serve(tiles: String = "off", port given: Int? = nil) async throws -> (url: String, login: String) {
        let port = try given ?? LoopbackPorts.free(1, .tcp)[0]
        let process = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", alice.path, "--passphrase-file", pass, "--json", "--timeout", "5", "--no-embedded-relay",
            "--web", "127.0.0.1:\(port)", "--web-tiles", tiles])
        run = process
        let line = try await process.waitForLine(prefix: #"{"type":"web""#, timeout: .seconds(30))
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let url = try XCTUnwrap(object["url"] as? String)
        XCTAssertEqual(url, "http://127.0.0.1:\(port)")
        return (url, try XCTUnwrap(object["login"] as? String))
    }

    private func openPage(_ login: String) async throws -> Browser {
        let browser = try await Browser()
        self.browser = browser
        try await browser.open(login)
        _ = try await browser.wait(until: "the page to load", "return window.burrow && document.querySelectorAll('#members li').length >= 2")
        return browser
    }

    private static func http(_ method: String, _ url: String, cookie: String? = nil, headers: [String: String] = [:],
                             body: String? = nil) async throws -> (status: Int, headers: [String: String], body: String) {
        var fields = headers
        if let cookie { fields["Cookie"] = cookie }
        let answer = try await LoopbackHTTP.request(method, url, headers: fields, body: body.map { Data($0.utf8) })
        return (answer.status, answer.headers, answer.text)
    }

    func testWithoutTheLinkEverythingIs401AndTheLinkWorksOnce() async throws {
        try family()
        let (url, login) = try await serve()
        for path in ["/", "/app.js", "/api/me", "/leaflet/leaflet.js", "/api/card.svg", "/nothing-here"] {
            let answer = try await Self.http("GET", url + path)
            XCTAssertEqual(answer.status, 401, path)
            XCTAssertTrue(answer.headers["content-security-policy"]?.contains("script-src 'self'") ?? false, path)
        }
        let awaited1 = try await Self.http("GET", url + "/?token=" + String(repeating: "0", count: 64)).status
        XCTAssertEqual(awaited1, 401, "a wrong token")

        // The browser logs in; the token leaves the address bar.
        let browser = try await openPage(login)
        let address = try await browser.currentURL()
        XCTAssertEqual(address, url + "/")
        let groupName = try await browser.execute("return document.querySelector('#group option').textContent") as? String
        XCTAssertEqual(groupName, "Family")
        try await browser.screenshot("web-logged-in")
        let awaited2 = try await Self.http("GET", login).status
        XCTAssertEqual(awaited2, 401, "the link works once")

        // A session without its CSRF token, or from another origin, changes nothing.
        let again = try await serve2ndSession(port: try XCTUnwrap(Int(url.split(separator: ":").last ?? "")))
        let me = try await Self.http("GET", url + "/api/me", cookie: again.cookie)
        XCTAssertEqual(me.status, 200)
        XCTAssertFalse(me.body.contains("nsec"), "no secret in the API")
        let group = try XCTUnwrap(try alice.ok(["group", "show", "Family"])["group"] as? [String: Any])
        let chat = url + "/api/groups/\(try XCTUnwrap(group["mls_group_id"] as? String))/chat"
        let body = #"{"text":"forged"}"#
        let awaited3 = try await Self.http("POST", chat, cookie: again.cookie, headers: ["Origin": url], body: body).status
        XCTAssertEqual(awaited3, 403)
        let awaited4 = try await Self.http("POST", chat, cookie: again.cookie, headers: ["Origin": "http://evil.example", "X-Burrow-CSRF": again.csrf],
                                           body: body).status
        XCTAssertEqual(awaited4, 403)
        let sent = try await Self.http("POST", chat, cookie: again.cookie, headers: ["Origin": url, "X-Burrow-CSRF": again.csrf], body: body)
        XCTAssertEqual(sent.status, 200, sent.body)
        _ = url
    }

    /// A second login: `run` restarted (a new one-time link), the old page's session still good.
    private func serve2ndSession(port: Int) async throws -> (cookie: String, csrf: String) {
        run?.stop()
        let (url, login) = try await serve(port: port)
        let answer = try await Self.http("GET", login)
        XCTAssertEqual(answer.status, 303)
        let setCookie = try XCTUnwrap(answer.headers["set-cookie"])
        XCTAssertTrue(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"), setCookie)
        let cookie = String(setCookie.split(separator: ";")[0])
        let me = try await Self.http("GET", url + "/api/me", cookie: cookie)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(me.body.utf8)) as? [String: Any])
        // The browser's session survived the restart: its page reconnects by itself.
        if let browser {
            _ = try await browser.wait(until: "the page to reconnect after run restarted", "return document.getElementById('connection').textContent === 'live'", timeout: .seconds(20))
        }
        return (cookie, try XCTUnwrap(object["csrf"] as? String))
    }

    func testPinsSitWhereLeafletPutsTheirCoordinates() async throws {
        try family()
        let (_, login) = try await serve()
        let browser = try await openPage(login)
        _ = try await browser.wait(until: "two pins", "return window.burrow.markers.size === 2")
        let aliceKey = try alice.pubkey, bobKey = try bob.pubkey
        for (key, at) in [(aliceKey, Self.aliceAt), (bobKey, Self.bobAt)] {
            let result = try await browser.execute("""
                const map = window.burrow.map, marker = window.burrow.markers.get(arguments[0]);
                const expected = map.latLngToContainerPoint([arguments[1], arguments[2]]);
                const box = marker.getElement().getBoundingClientRect(), frame = map.getContainer().getBoundingClientRect();
                return [expected.x, expected.y, box.left + box.width / 2 - frame.left, box.top + box.height / 2 - frame.top,
                        marker.getElement().classList.contains('me'), marker.getElement().textContent];
                """, [key, at.lat, at.lon])
            let measured = try XCTUnwrap(result as? [Any])
            let numbers = measured.prefix(4).compactMap { ($0 as? NSNumber)?.doubleValue }
            XCTAssertEqual(numbers.count, 4)
            XCTAssertEqual(numbers[0], numbers[2], accuracy: 1.5, "x of \(key.prefix(8))")
            XCTAssertEqual(numbers[1], numbers[3], accuracy: 1.5, "y of \(key.prefix(8))")
            // Inside the map, not off screen.
            XCTAssertTrue((0...900).contains(numbers[2]) && (0...760).contains(numbers[3]), "\(numbers)")
            XCTAssertEqual(measured[4] as? Bool, key == aliceKey, "our own pin is marked")
            XCTAssertEqual(measured[5] as? String, key == aliceKey ? "Alice (you)" : "Bob")
        }
        // Each pin has its accuracy circle (25 m and 40 m here).
        let circles = try await browser.execute("return [...window.burrow.map.getPane('overlayPane').querySelectorAll('path.accuracy')].length") as? Int
        XCTAssertEqual(circles, 2)
        // The scale shows on the plain background, and no tile was asked for.
        let awaited5 = try await browser.execute("return document.querySelectorAll('.leaflet-control-scale').length") as? Int
        XCTAssertEqual(awaited5, 1)
        let awaited6 = try await browser.execute("return document.querySelectorAll('.leaflet-tile').length") as? Int
        XCTAssertEqual(awaited6, 0)
        try await browser.screenshot("web-pins")
    }

    func testALocationAndAChatFromAnotherHomeAppearWithoutReloadAndAChatFromThePageArrives() async throws {
        try family()
        let (_, login) = try await serve()
        let browser = try await openPage(login)
        try await browser.execute("window.notReloaded = true")
        let bobKey = try bob.pubkey
        // Bob moves 1 km north: the pin follows within 3 s, without a reload.
        let north = Self.bobAt.lat + 0.009
        try bob.ok(["location", "Family", "--lat", String(north), "--lon", String(Self.bobAt.lon)])
        let moved = ContinuousClock.now
        _ = try await browser.wait(until: "Bob's new position on the page",
                                   "return Math.abs(window.burrow.markers.get(arguments[0]).getLatLng().lat - arguments[1]) < 1e-6",
                                   [bobKey, north], timeout: .seconds(3))
        let took = ContinuousClock.now - moved
        XCTAssertLessThan(took, .seconds(3))
        let awaited7 = try await browser.execute("return window.notReloaded === true") as? Bool
        XCTAssertEqual(awaited7, true)

        // Bob writes; the page shows it.
        try bob.ok(["chat", "Family", "Dinner at seven"])
        _ = try await browser.wait(until: "Bob's chat on the page",
                                   "return [...document.querySelectorAll('#messages li .text')].some(e => e.textContent === 'Dinner at seven')",
                                   timeout: .seconds(3))
        // Alice writes on the page; Bob's home reads it.
        try await browser.execute("""
            document.getElementById('chat-text').value = 'Coming!';
            document.getElementById('chat-form').requestSubmit();
            """)
        _ = try await browser.wait(until: "the page's own chat in the list", "return [...document.querySelectorAll('#messages li.mine .text')].some(e => e.textContent === 'Coming!')")
        let deadline = ContinuousClock.now + .seconds(15)
        var texts: [String] = []
        while ContinuousClock.now < deadline, !texts.contains("Coming!") {
            texts = (try bob.ok(["messages", "Family", "--sync"])["messages"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
            if !texts.contains("Coming!") { try await Task.sleep(for: .milliseconds(300)) }
        }
        XCTAssertTrue(texts.contains("Coming!"), "\(texts)")
        try await browser.screenshot("web-live-chat")
    }

    func testAMemberNamedLikeHTMLIsShownAsTextAndNoDialogOpens() async throws {
        let hostile = "<img src=x onerror=alert(1)>"
        try family(bobName: hostile)
        try bob.ok(["chat", "Family", "<script>alert(2)</script>"])
        try alice.ok(["sync"])
        let (_, login) = try await serve()
        let browser = try await openPage(login)
        _ = try await browser.wait(until: "two pins", "return window.burrow.markers.size === 2")
        // Give an injected handler every chance to run.
        try await Task.sleep(for: .milliseconds(500))
        let dialog = try await browser.openDialogText()
        XCTAssertNil(dialog, "a dialog opened: \(dialog ?? "")")
        let awaited8 = try await browser.execute("return document.querySelectorAll('img[src=\"x\"], script:not([src])').length") as? Int
        XCTAssertEqual(awaited8, 0)
        let members = try await browser.execute("return [...document.querySelectorAll('#members li')].map(e => e.firstChild.textContent)") as? [String]
        XCTAssertTrue(members?.contains(hostile) ?? false, "\(members ?? [])")
        let label = try await browser.execute("return window.burrow.markers.get(arguments[0]).getElement().textContent", [try bob.pubkey]) as? String
        XCTAssertEqual(label, hostile)
        let chats = try await browser.execute("return [...document.querySelectorAll('#messages li .text')].map(e => e.textContent)") as? [String]
        XCTAssertTrue(chats?.contains("<script>alert(2)</script>") ?? false, "\(chats ?? [])")
        try await browser.screenshot("web-hostile-name")
    }

    func testThePageWorksWithTilesUnreachable() async throws {
        try family()
        // Nothing listens on port 9 of loopback: every tile fails.
        let (_, login) = try await serve(tiles: "http://127.0.0.1:9/{z}/{x}/{y}.png")
        let browser = try await openPage(login)
        _ = try await browser.wait(until: "two pins", "return window.burrow.markers.size === 2")
        _ = try await browser.wait(until: "tiles asked for", "return document.querySelectorAll('.leaflet-tile').length > 0")
        let awaited9 = try await browser.execute("return document.querySelectorAll('.leaflet-control-scale').length") as? Int
        XCTAssertEqual(awaited9, 1)
        let visible = try await browser.execute("""
            const frame = window.burrow.map.getContainer().getBoundingClientRect();
            return [...window.burrow.markers.values()].every(m => {
              const r = m.getElement().getBoundingClientRect();
              return r.left >= frame.left && r.right <= frame.right && r.top >= frame.top && r.bottom <= frame.bottom;
            });
            """) as? Bool
        XCTAssertEqual(visible, true)
        try await browser.screenshot("web-no-tiles")
    }

    func testAPortInUseARemoteAddressAndTooManyRequestsAreRefusedClearly() async throws {
        try alice.ok(["group", "create", "Family"])
        let (url, login) = try await serve()
        let port = try XCTUnwrap(Int(url.split(separator: ":").last ?? ""))
        // A second node's page on the same port: web_port_in_use, and that `run` ends.
        // After its `ready` line, as a mesh that cannot start: the error is the last line.
        let refused = try bob.human(["run", "--no-embedded-relay", "--web", "127.0.0.1:\(port)", "--json"])
        XCTAssertEqual(refused.status, 1)
        let last = try XCTUnwrap(refused.stdout.split(separator: "\n").last)
        let error = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])["error"] as? [String: Any]
        XCTAssertEqual(error?["code"] as? String, "web_port_in_use")
        XCTAssertEqual(try bob.errorCode(["run", "--no-embedded-relay", "--web", "0.0.0.0:\(port + 1)"]), "invalid_input",
                       "a remote address needs --web-allow-remote")
        XCTAssertTrue(try bob.human(["run", "--no-embedded-relay", "--web", "0.0.0.0:1"]).stderr.contains("--web-allow-remote"))
        // A WebSocket without the session cookie is not upgraded (the upgrade is refused: 400).
        let socket = try await Self.http("GET", url + "/ws", headers: [
            "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="])
        XCTAssertEqual(socket.status, 400)
        // One client asking too fast gets 429 past its burst of 60, and nothing breaks.
        let answer = try await Self.http("GET", login)
        let cookie = String(try XCTUnwrap(answer.headers["set-cookie"]).split(separator: ";")[0])
        var statuses: [Int] = []
        for _ in 0..<80 { statuses.append(try await Self.http("GET", url + "/api/me", cookie: cookie).status) }
        XCTAssertEqual(statuses.prefix(50).filter { $0 == 200 }.count, 50)
        XCTAssertTrue(statuses.contains(429), "\(statuses)")
        try await Task.sleep(for: .seconds(1))
        let awaitedLater = try await Self.http("GET", url + "/api/me", cookie: cookie).status
        XCTAssertEqual(awaitedLater, 200, "the bucket refills")
    }

    func testSharingTheCardAndAnInviteFromThePage() async throws {
        try alice.ok(["profile", "set", "--name", "Alice"])
        try bob.ok(["keypackage", "publish"])
        // Bob's family invites Alice: the invitation waits on Alice's page.
        try bob.ok(["group", "create", "Cousins", "--invite", try alice.pubkey])
        try alice.ok(["group", "create", "Family"])
        let (_, login) = try await serve()
        let browser = try await Browser()
        self.browser = browser
        try await browser.open(login)
        _ = try await browser.wait(until: "the invitation", "return !document.getElementById('invites-section').hidden")
        let invite = try await browser.execute("return document.querySelector('#invites li').firstChild.textContent") as? String
        // Bob has no name: the start of his npub, as the CLI shows it.
        XCTAssertTrue(invite?.hasPrefix("Cousins from npub1") ?? false, invite ?? "")
        try await browser.execute("[...document.querySelectorAll('#invites li button')].find(b => b.textContent === 'Join').click()")
        _ = try await browser.wait(until: "Cousins in the group switcher",
                                   "return [...document.querySelectorAll('#group option')].some(o => o.textContent === 'Cousins')",
                                   timeout: .seconds(20))
        XCTAssertEqual((try alice.ok(["group", "show", "Cousins"])["group"] as? [String: Any])?["state"] as? String, "active")

        // Sharing from the page: every 5 minutes (the stored share's default source: gpsd).
        try await browser.execute("""
            const select = document.getElementById('group');
            select.value = [...select.options].find(o => o.textContent === 'Family').value;
            select.dispatchEvent(new Event('change'));
            """)
        _ = try await browser.wait(until: "Family's sharing controls", "return !document.getElementById('share-start').hidden")
        try await browser.execute("document.getElementById('share-interval').value = '300'; document.getElementById('share-start').click()")
        _ = try await browser.wait(until: "sharing shown", "return document.getElementById('share-state').textContent.startsWith('Sharing every 5 minutes')")
        let share = try XCTUnwrap((try alice.ok(["share", "status"])["shares"] as? [[String: Any]])?.first)
        XCTAssertEqual(share["interval"] as? Int, 300)
        try await browser.execute("document.getElementById('share-pause').click()")
        _ = try await browser.wait(until: "paused", "return document.getElementById('share-state').textContent.startsWith('Paused')")
        XCTAssertEqual((try alice.ok(["share", "status"])["shares"] as? [[String: Any]])?.first?["paused"] as? Bool, true)

        // The contact card as a QR code the page draws from the node's card.
        try await browser.execute("document.getElementById('card-show').click()")
        _ = try await browser.wait(until: "the card's QR code",
                                   "const i = document.getElementById('card'); return i.complete && i.naturalWidth > 0")
        let picture = try await browser.screenshot("web-card-and-sharing")
        // A camera reads Alice's card off the page.
        let card = try XCTUnwrap(try alice.ok(["contact", "card"])["card"] as? String)
        XCTAssertEqual(try Zbar.decode(file: picture), card.uppercased())
    }
}
