import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import Node
import NIOCore
import QRCode
import RelayServer
import ServiceLifecycle
import HTTPTypes

/// The request context of the page: the client's address, for rate limits before login.
struct WebContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    /// The logged-in session, once `Gate` let the request through.
    var session: WebSessions.Session?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// `burrow run --web`: the family's page, served by the running node (issue 24). A second UI
/// over the same node, so the CLI's rules hold: every change goes through the node's mailbox,
/// strangers' strings are data, and no secret reaches a page, a log or a URL after login.
public final class WebServer: Sendable {
    /// `http://host:port` as bound.
    public let url: String
    /// The one-time login link `run` prints.
    public let loginLink: String
    let hub: WebHub
    private let serviceGroup: ServiceGroup
    private let task: Task<Void, Never>

    /// Warnings and worse only: the server's start is `run`'s `web` line, and requests are not logged.
    public static var quietLogger: Logger {
        var logger = Logger(label: "burrow.web")
        logger.logLevel = .warning
        return logger
    }

    /// Largest POST body accepted (a chat message and its JSON).
    static let maximumBody = 16 * 1024
    /// Messages of a group the page shows.
    static let messageLimit = 100
    /// Leaflet's files the page may load, from Debian's package.
    static let leafletFiles: Set<String> = [
        "leaflet.js", "leaflet.css", "images/marker-icon.png", "images/marker-icon-2x.png", "images/marker-shadow.png",
        "images/layers.png", "images/layers-2x.png",
    ]

    private init(url: String, loginLink: String, hub: WebHub, serviceGroup: ServiceGroup, task: Task<Void, Never>) {
        self.url = url
        self.loginLink = loginLink
        self.hub = hub
        self.serviceGroup = serviceGroup
        self.task = task
    }

    /// Binds and serves; returns once the page is reachable. Throws `WebError.portInUse` when
    /// the address is taken and `leafletMissing` when libjs-leaflet is not installed.
    public static func start(node: BurrowNode, mailbox: NodeMailbox, options: WebOptions, timeout: Duration,
                             logger: Logger = WebServer.quietLogger) async throws -> WebServer {
        guard FileManager.default.isReadableFile(atPath: options.leafletDirectory + "/leaflet.js") else {
            throw WebError.leafletMissing(options.leafletDirectory)
        }
        let sessions = WebSessions(file: node.home.appendingPathComponent("web-sessions.json"))
        let hub = WebHub()
        let api = WebAPI(node: node, mailbox: mailbox, options: options, timeout: timeout)
        let router = Router(context: WebContext.self)
        router.add(middleware: SecurityHeaders(policy: PageAssets.contentSecurityPolicy(tileOrigin: options.tileOrigin)))
        router.add(middleware: Gate(sessions: sessions, limiter: RateLimiter(perSecond: 20, burst: 60),
                                    writes: RateLimiter(perSecond: 2, burst: 10)))
        api.routes(router, sessions: sessions, leafletDirectory: options.leafletDirectory)

        let bound = BindSignal()
        let webSocket = WebSocketServerConfiguration(maxFrameSize: 4096, autoPing: .enabled(timePeriod: .seconds(20)), closeTimeout: .seconds(3))
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(configuration: .init(http1: .init(idleTimeout: .seconds(60)), ws: webSocket)) { head, _, _ in
                guard head.path == "/ws", sessions.session(cookie: WebSessions.cookie(in: head.headerFields[.cookie])) != nil,
                      Gate.sameOrigin(origin: head.headerFields[.origin], host: head.authority) else { return .dontUpgrade }
                return .upgrade([:]) { inbound, outbound, _ in try await hub.serve(inbound: inbound, outbound: outbound) }
            },
            configuration: ApplicationConfiguration(address: .hostname(options.host, port: options.port), serverName: "burrow"),
            onServerRunning: { channel in bound.succeed(channel.localAddress?.port ?? options.port) },
            logger: logger)
        let serviceGroup = ServiceGroup(configuration: ServiceGroupConfiguration(services: [app], logger: logger))
        let task = Task {
            do { try await serviceGroup.run() } catch { bound.fail(error) }
            bound.fail(WebError.listenFailed("closed"))
            hub.finishAll()
        }
        let port: Int
        do {
            port = try await bound.wait()
        } catch {
            await serviceGroup.triggerGracefulShutdown()
            _ = await task.value
            let text = "\(error)"
            if text.contains("in use") || text.contains("EADDRINUSE") { throw WebError.portInUse("\(options.host):\(options.port)") }
            throw WebError.listenFailed(text)
        }
        let host = options.host.contains(":") ? "[\(options.host)]" : options.host
        let url = "http://\(host):\(port)"
        return WebServer(url: url, loginLink: "\(url)/?token=\(sessions.loginToken)", hub: hub, serviceGroup: serviceGroup, task: task)
    }

    /// Tells every open page what changed.
    public func publish(_ update: NodeUpdate) {
        guard let nudge = WebNudge(update) else { return }
        hub.broadcast(nudge.json)
    }

    /// Closes the pages' WebSockets and stops serving.
    public func close() async {
        hub.finishAll()
        await serviceGroup.triggerGracefulShutdown()
        let watchdog = Task { [task] in
            try await Task.sleep(for: .seconds(10))
            task.cancel()
        }
        await task.value
        watchdog.cancel()
    }
}

/// Headers every answer carries: the Content-Security-Policy (no inline script, nothing from
/// elsewhere but tiles), no sniffing, no framing, no referrer (tile requests would otherwise
/// carry the page's address), and nothing cached.
struct SecurityHeaders: RouterMiddleware {
    typealias Context = WebContext
    let policy: String

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        var response: Response
        do { response = try await next(request, context) } catch let error as HTTPError {
            response = Response(status: error.status, headers: [.contentType: "text/plain; charset=utf-8"],
                                body: .init(byteBuffer: ByteBuffer(string: (error.body ?? error.status.reasonPhrase) + "\n")))
        }
        response.headers[.contentSecurityPolicy] = policy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[.cacheControl] = "no-store"
        return response
    }
}

/// Login, sessions, CSRF and rate limits in front of every route. Without a session cookie
/// everything is 401 but the login link itself; a POST also needs the session's CSRF token
/// and the page's own origin.
struct Gate: RouterMiddleware {
    typealias Context = WebContext
    let sessions: WebSessions
    let limiter: RateLimiter
    let writes: RateLimiter

    static let csrfHeader = HTTPField.Name("X-Burrow-CSRF")!

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        let cookie = WebSessions.cookie(in: request.headers[.cookie])
        let session = sessions.session(cookie: cookie)
        let client = session.map { "session:" + $0.csrf.prefix(16) } ?? "address:" + (context.remoteAddress?.ipAddress ?? "unknown")
        guard limiter.allow(client) else { throw HTTPError(.tooManyRequests, message: "too many requests: slow down") }
        if request.uri.path == "/", request.method == .get, let token = request.uri.queryParameters["token"] {
            guard let (cookie, _) = sessions.logIn(token: String(token)) else {
                throw HTTPError(.unauthorized, message: "this login link is not valid (or was used already): restart `burrow run --web` for a new one")
            }
            // The token leaves the address bar at once.
            return Response(status: .seeOther, headers: [
                .location: "/",
                .setCookie: "\(WebSessions.cookieName)=\(cookie); HttpOnly; SameSite=Strict; Path=/",
            ])
        }
        guard let session else {
            throw HTTPError(.unauthorized, message: "log in with the link `burrow run --web` printed")
        }
        if request.method == .post {
            guard writes.allow(client) else { throw HTTPError(.tooManyRequests, message: "too many changes: slow down") }
            guard WebSessions.csrfMatches(session, request.headers[Self.csrfHeader]),
                  Self.sameOrigin(origin: request.headers[.origin], host: request.head.authority) else {
                throw HTTPError(.forbidden, message: "this request did not come from the page")
            }
        }
        var context = context
        context.session = session
        return try await next(request, context)
    }

    /// Whether a browser's Origin is this page's: `http://` + the Host it asked for.
    static func sameOrigin(origin: String?, host: String?) -> Bool {
        guard let origin, let host else { return false }
        return origin == "http://\(host)"
    }
}
