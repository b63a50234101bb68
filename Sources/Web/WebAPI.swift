import Foundation
import Hummingbird
import Node
import NIOCore
import QRCode

/// The page's routes. Reads and changes alike run as jobs of the node's mailbox, as forwarded
/// commands do, so the page never races `run`'s own work.
struct WebAPI: Sendable {
    let node: BurrowNode
    let mailbox: NodeMailbox
    let options: WebOptions
    let timeout: Duration

    func routes(_ router: Router<WebContext>, sessions: WebSessions, leafletDirectory: String) {
        router.get("/") { _, _ in Self.asset(PageAssets.indexHTML, "text/html; charset=utf-8") }
        router.get("/app.js") { _, _ in Self.asset(PageAssets.appJS, "text/javascript; charset=utf-8") }
        router.get("/app.css") { _, _ in Self.asset(PageAssets.appCSS, "text/css; charset=utf-8") }
        for name in WebServer.leafletFiles {
            let type = name.hasSuffix(".js") ? "text/javascript; charset=utf-8" : name.hasSuffix(".css") ? "text/css; charset=utf-8" : "image/png"
            router.get(RouterPath("/leaflet/" + name)) { _, _ in
                guard let data = FileManager.default.contents(atPath: leafletDirectory + "/" + name) else {
                    throw HTTPError(.notFound, message: "Leaflet's \(name) is not installed")
                }
                return Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(bytes: data)))
            }
        }
        router.get("/api/me") { _, context in try await json(me(csrf: context.session?.csrf ?? "")) }
        router.get("/api/groups/:id") { _, context in
            let id = try context.parameters.require("id")
            return try await json(group(id))
        }
        router.get("/api/card.svg") { _, _ in
            let card = try await run { try await node.directMessages.contactCard(nickname: nil, relays: nil, timeout: timeout) }
            let symbol = try QREncoder.encode(segments: [try .alphanumeric(card.qrText)], level: .low)
            return Self.asset(SVGRenderer.svg(symbol), "image/svg+xml")
        }
        router.post("/api/groups/:id/chat") { request, context in
            let id = try context.parameters.require("id")
            let body = try await Self.body(request, as: ChatBody.self)
            let text = body.text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { throw HTTPError(.badRequest, message: "an empty message") }
            _ = try await run { try await node.groups.chat(id, text: text, timeout: timeout) }
            return try await json(group(id))
        }
        router.post("/api/groups/:id/share") { request, context in
            let id = try context.parameters.require("id")
            let body = try await Self.body(request, as: ShareBody.self)
            try await run {
                switch body.action {
                case "start":
                    let existing = try node.groups.shares().first { $0.mlsGroupID == id }
                    _ = try node.groups.startSharing(id, source: existing?.source ?? "gpsd", interval: body.interval ?? existing?.interval ?? 3600,
                                                     fuzz: existing?.fuzz ?? 0, battery: existing?.battery ?? true)
                case "stop": try node.groups.stopSharing(id)
                case "pause": _ = try node.groups.setSharingPaused(true, group: id)
                case "resume": _ = try node.groups.setSharingPaused(false, group: id)
                default: throw NodeError.invalidInput("share actions are start, stop, pause and resume")
                }
            }
            return try await json(group(id))
        }
        router.post("/api/invites/:id/:action") { _, context in
            let id = try context.parameters.require("id")
            switch try context.parameters.require("action") {
            case "accept": _ = try await run { try await node.groups.acceptInvite(id, timeout: timeout) }
            case "decline": _ = try await run { try node.groups.declineInvite(id) }
            default: throw HTTPError(.notFound)
            }
            return try await json(me(csrf: context.session?.csrf ?? ""))
        }
        router.post("/api/requests/:id/:action") { _, context in
            let id = try context.parameters.require("id")
            switch try context.parameters.require("action") {
            case "approve": _ = try await run { try await node.groups.approveJoinRequest(id, timeout: timeout) }
            case "reject": _ = try await run { try node.groups.rejectJoinRequest(id) }
            default: throw HTTPError(.notFound)
            }
            return Response(status: .noContent)
        }
    }

    // MARK: Views

    private func me(csrf: String) async throws -> WebMe {
        try await run {
            let me = node.publicKey.hex
            let groups = try node.groups.list()
            return WebMe(pubkey: me, name: groups.lazy.compactMap { $0.memberNames[me] }.first, csrf: csrf, tiles: options.tiles,
                         groups: groups.filter { $0.state == "active" || $0.state == "leaving" }
                             .map { WebGroupSummary(id: $0.mlsGroupID, name: $0.name, state: $0.state) },
                         invites: try node.groups.invites().map { WebInvite(id: $0.id, groupName: $0.groupName, from: $0.from, fromName: $0.fromName,
                                                                          who: displayName($0.fromName, key: $0.from)) })
        }
    }

    private func group(_ id: String) async throws -> WebGroup {
        try await run {
            let view = try node.groups.group(id)
            return try WebGroup(view, me: node.publicKey.hex, node: node, messageLimit: WebServer.messageLimit)
        }
    }

    /// A job of the node's mailbox; a node error becomes a 400 with its words (never a secret:
    /// the node's errors are written for people).
    private func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        do {
            node.touch()
            return try await mailbox.write { _ in try await body() }
        } catch let error as HTTPError {
            throw error
        } catch {
            let failure = BurrowFailure(describing: error)
            let status: HTTPResponse.Status = switch failure.code {
            case .unknown_group, .unknown_invite, .unknown_request: .notFound
            case .not_admin: .forbidden
            case .relay_unreachable, .relay_rejected, .timeout: .badGateway
            case .internal: .internalServerError
            case .locked: HTTPResponse.Status(code: 423, reasonPhrase: "Locked")
            default: .badRequest
            }
            throw HTTPError(status, message: "\(failure.code.rawValue): \(failure.message)")
        }
    }

    // MARK: Encoding

    private struct ChatBody: Decodable { let text: String }
    private struct ShareBody: Decodable {
        let action: String
        let interval: Int64?
    }

    private static func body<T: Decodable>(_ request: Request, as type: T.Type) async throws -> T {
        var request = request
        let buffer: ByteBuffer
        do { buffer = try await request.collectBody(upTo: WebServer.maximumBody) } catch {
            throw HTTPError(.contentTooLarge, message: "at most \(WebServer.maximumBody) bytes")
        }
        do { return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView)) } catch {
            throw HTTPError(.badRequest, message: "not the JSON this request takes")
        }
    }

    private func json<T: Encodable>(_ value: T) async throws -> Response {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private static func asset(_ text: String, _ type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
