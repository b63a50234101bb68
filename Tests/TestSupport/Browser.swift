import Foundation
import XCTest

/// Headless Chromium from Debian, driven over the W3C WebDriver protocol by Debian's
/// chromedriver (plain HTTP and JSON on 127.0.0.1): the page tests run in a real browser.
/// Screenshots land in `BURROW_TEST_ARTIFACTS` (default /tmp/burrow-test-artifacts)/browser.
public final class Browser: @unchecked Sendable {
    public static let chromium = "/usr/bin/chromium"
    public static let chromedriver = "/usr/bin/chromedriver"

    private let driver: PeerProcess
    private let base: String
    private let session: String

    public enum Failure: Error, CustomStringConvertible {
        case webDriver(String)
        public var description: String {
            switch self {
            case .webDriver(let text): return "WebDriver: \(text)"
            }
        }
    }

    /// Skips (only) when the Debian packages `make setup` installs are missing.
    public static func require() throws {
        for path in [chromium, chromedriver] where !FileManager.default.isExecutableFile(atPath: path) {
            throw XCTSkip("\(path) is not installed (make setup installs chromium and chromium-driver)")
        }
    }

    public init(width: Int = 1200, height: Int = 800) async throws {
        let port = try LoopbackPorts.free(1, .tcp)[0]
        driver = try PeerProcess(executable: URL(fileURLWithPath: Self.chromedriver), arguments: ["--port=\(port)", "--allowed-ips=127.0.0.1"])
        base = "http://127.0.0.1:\(port)"
        let deadline = ContinuousClock.now + .seconds(20)
        var problem = "no answer"
        while true {
            do {
                let status = try await Self.request("GET", "\(base)/status", nil)
                if (status["value"] as? [String: Any])?["ready"] as? Bool == true { break }
                problem = "\(status)"
            } catch {
                problem = "\(error)"
            }
            guard ContinuousClock.now < deadline else {
                throw Failure.webDriver("chromedriver did not start (\(problem)): \(driver.standardError)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": [
            "browserName": "chrome",
            "goog:chromeOptions": [
                "binary": Self.chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=\(width),\(height)",
                         "--no-first-run", "--disable-extensions", "--lang=en-GB"],
            ],
            "unhandledPromptBehavior": "ignore",
        ]]]
        let created = try await Self.request("POST", "\(base)/session", capabilities)
        guard let value = created["value"] as? [String: Any], let id = value["sessionId"] as? String else {
            driver.kill()
            throw Failure.webDriver("no session: \(created)")
        }
        session = id
    }

    deinit { driver.kill() }

    /// Ends the browser and its driver.
    public func close() async {
        _ = try? await Self.request("DELETE", "\(base)/session/\(session)", nil)
        driver.kill()
    }

    public func open(_ url: String) async throws {
        _ = try await command("POST", "url", ["url": url])
    }

    /// The page's current address.
    public func currentURL() async throws -> String {
        try await command("GET", "url", nil) as? String ?? ""
    }

    /// Runs `script` (a function body; `arguments[0]…` are `args`) in the page; its return value.
    @discardableResult
    public func execute(_ script: String, _ args: [Any] = []) async throws -> Any? {
        try await command("POST", "execute/sync", ["script": script, "args": args])
    }

    /// Waits until `script` returns something truthy (not null, false, 0 or ""); that value.
    public func wait(until what: String, _ script: String, _ args: [Any] = [], timeout: Duration = .seconds(10)) async throws -> Any {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let value = try await execute(script, args), !(value is NSNull), Self.truthy(value) { return value }
            guard ContinuousClock.now < deadline else { throw Failure.webDriver("waited \(timeout) for \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The text of an open alert, confirm or prompt dialog; nil when none is open.
    public func openDialogText() async throws -> String? {
        do { return try await command("GET", "alert/text", nil) as? String } catch Failure.webDriver(let text) where text.contains("no such alert") {
            return nil
        }
    }

    /// A PNG of the viewport, also written to the artifacts as `name`.png; its path.
    @discardableResult
    public func screenshot(_ name: String) async throws -> URL {
        guard let encoded = try await command("GET", "screenshot", nil) as? String, let png = Data(base64Encoded: encoded) else {
            throw Failure.webDriver("no screenshot")
        }
        let directory = Self.artifacts
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name + ".png")
        try png.write(to: url)
        return url
    }

    public static var artifacts: URL {
        URL(fileURLWithPath: ProcessInfo.processInfo.environment["BURROW_TEST_ARTIFACTS"] ?? "/tmp/burrow-test-artifacts")
            .appendingPathComponent("browser")
    }

    // MARK: The protocol

    private func command(_ method: String, _ path: String, _ body: [String: Any]?) async throws -> Any? {
        let answer = try await Self.request(method, "\(base)/session/\(session)/\(path)", body)
        if let value = answer["value"] as? [String: Any], let error = value["error"] as? String {
            throw Failure.webDriver("\(error): \(value["message"] as? String ?? "")")
        }
        return answer["value"]
    }

    private static func request(_ method: String, _ url: String, _ body: [String: Any]?) async throws -> [String: Any] {
        let payload = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        let answer = try await LoopbackHTTP.request(method, url, headers: payload == nil ? [:] : ["Content-Type": "application/json"], body: payload)
        guard let object = try JSONSerialization.jsonObject(with: answer.body) as? [String: Any] else {
            throw Failure.webDriver("not JSON: \(answer.text.prefix(200))")
        }
        return object
    }

    private static func truthy(_ value: Any) -> Bool {
        switch value {
        case let bool as Bool: return bool
        case let number as NSNumber: return number.doubleValue != 0
        case let string as String: return !string.isEmpty
        default: return true
        }
    }
}
