import Crypto
import Foundation
import Nostr
import Synchronization

/// Who may use the page. `run` prints one login link with a random token; the first browser
/// that opens it gets a session cookie (HttpOnly, SameSite=Strict) and the token is spent, so a
/// link left in a terminal's scrollback or a browser's history opens nothing later. Each
/// session has its own CSRF token, sent back on every POST.
///
/// Cookies and tokens are looked up by their SHA-256, so a lookup's timing says nothing about
/// the secret; the login token is compared in constant time. Sessions outlive a restart of
/// `run` (an open page reconnects by itself): their digests and CSRF tokens are kept in the
/// home, readable by its owner only; a digest cannot be turned back into a cookie. A session
/// lasts 30 days.
public final class WebSessions: Sendable {
    /// At most this many browsers are logged in at once; the oldest makes way.
    public static let maximumSessions = 16

    /// How long a login lasts.
    public static let lifetime: Int64 = 30 * 86_400

    struct Session: Sendable, Codable {
        let csrf: String
        /// Unix seconds.
        let created: Int64
    }

    private struct Saved: Codable {
        var sessions: [String: Session]
    }

    private struct State {
        var loginToken: [UInt8]?
        var sessions: [Data: Session] = [:]
    }

    private let state: Mutex<State>
    /// Where sessions are kept between runs (nil: in memory only).
    private let file: URL?
    private let clock: @Sendable () -> Int64

    /// The token of the login link (hex), shown once by `run`.
    public let loginToken: String

    public init(file: URL? = nil, clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        let token = Self.randomBytes(32)
        loginToken = Hex.encode(token)
        self.file = file
        self.clock = clock
        var initial = State(loginToken: Array(loginToken.utf8))
        let now = clock()
        if let file, let data = try? Data(contentsOf: file), let saved = try? JSONDecoder().decode(Saved.self, from: data) {
            for (digest, session) in saved.sessions.prefix(Self.maximumSessions) where now - session.created < Self.lifetime {
                if let key = try? Hex.decode(digest, length: 32) { initial.sessions[Data(key)] = session }
            }
        }
        state = Mutex(initial)
    }

    /// Spends the login token: a new session's cookie value, or nil when the token is wrong or
    /// was used already.
    func logIn(token: String) -> (cookie: String, csrf: String)? {
        state.withLock { state in
            guard let expected = state.loginToken else { return nil }
            let offered = Array(token.utf8)
            guard offered.count == expected.count, SymmetricKey(data: offered) == SymmetricKey(data: expected) else { return nil }
            state.loginToken = nil
            if state.sessions.count >= Self.maximumSessions,
               let oldest = state.sessions.min(by: { $0.value.created < $1.value.created })?.key {
                state.sessions[oldest] = nil
            }
            let cookie = Hex.encode(Self.randomBytes(32))
            let csrf = Hex.encode(Self.randomBytes(32))
            state.sessions[Self.digest(cookie)] = Session(csrf: csrf, created: clock())
            save(state.sessions)
            return (cookie, csrf)
        }
    }

    /// The session a cookie value names.
    func session(cookie: String?) -> Session? {
        guard let cookie, cookie.utf8.count == 64 else { return nil }
        let now = clock()
        return state.withLock { $0.sessions[Self.digest(cookie)] }.flatMap { now - $0.created < Self.lifetime ? $0 : nil }
    }

    /// Writes the sessions for the next run: a temporary file (owner-only), then a rename.
    private func save(_ sessions: [Data: Session]) {
        guard let file else { return }
        let saved = Saved(sessions: Dictionary(uniqueKeysWithValues: sessions.map { (Hex.encode(Array($0.key)), $0.value) }))
        guard let data = try? JSONEncoder().encode(saved) else { return }
        let temporary = file.appendingPathExtension("tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else { return }
        if rename(temporary.path, file.path) != 0 { try? FileManager.default.removeItem(at: temporary) }
    }

    /// Whether `offered` is the session's CSRF token (constant time).
    static func csrfMatches(_ session: Session, _ offered: String?) -> Bool {
        guard let offered else { return false }
        let a = Array(offered.utf8), b = Array(session.csrf.utf8)
        return a.count == b.count && SymmetricKey(data: a) == SymmetricKey(data: b)
    }

    private static func digest(_ text: String) -> Data { Data(SHA256.hash(data: Array(text.utf8))) }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The cookie's name.
    static let cookieName = "burrow_session"

    /// The value of `burrow_session` in a Cookie header.
    static func cookie(in header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.trimmingCharacters(in: .whitespaces)
            if pair.hasPrefix(cookieName + "=") { return String(pair.dropFirst(cookieName.count + 1)) }
        }
        return nil
    }
}

/// A token bucket per client: `burst` requests at once, refilled at `perSecond`. A client that
/// is over gets 429; the table of clients is bounded (the least recently seen goes).
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var last: ContinuousClock.Instant
    }

    let perSecond: Double
    let burst: Double
    static let maximumClients = 1024
    private let buckets = Mutex<[String: Bucket]>([:])

    init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond
        self.burst = burst
    }

    func allow(_ client: String, now: ContinuousClock.Instant = .now) -> Bool {
        buckets.withLock { buckets in
            var bucket = buckets[client] ?? Bucket(tokens: burst, last: now)
            let elapsed = Double((now - bucket.last).components.seconds) + Double((now - bucket.last).components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + max(0, elapsed) * perSecond)
            bucket.last = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            if buckets[client] == nil, buckets.count >= Self.maximumClients,
               let stalest = buckets.min(by: { $0.value.last < $1.value.last })?.key {
                buckets[stalest] = nil
            }
            buckets[client] = bucket
            return allowed
        }
    }
}
