import Foundation
import HummingbirdWSClient
import Logging
import Nostr
import RelayServer
import TestSupport
import Synchronization
import XCTest

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` (cancellable) until it holds or `seconds` pass.
func eventually(_ what: String, seconds: Double = 10, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw TestFailure("waited \(seconds) s for \(what)")
}

/// A relay started in this process on 127.0.0.1 (free port) over a fresh temporary data
/// directory, which `remove()` deletes.
struct TestRelay {
    let directory: URL

    init() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-relay-test-\(UUID().uuidString)")
    }

    func configuration(_ adjust: (inout RelayServerConfiguration) -> Void = { _ in }) -> RelayServerConfiguration {
        var configuration = RelayServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.dataDirectory = directory.path
        adjust(&configuration)
        return configuration
    }

    func start(_ adjust: (inout RelayServerConfiguration) -> Void = { _ in }) async throws -> RunningRelay {
        var logger = Logger(label: "burrow.relay.test")
        logger.logLevel = .warning
        return try await RunningRelay.start(configuration(adjust), logger: logger)
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A rust-nostr client (nostr-sdk, through `relay_client_peer.py`) connected to one relay.
/// Every request runs on its own queue so the blocking pipe I/O never holds a Swift
/// concurrency thread that the in-process relay needs.
/// `@unchecked Sendable`: `publicKey` is set once in `connect`, before the client is shared;
/// the peer is used only on `queue`.
final class SDKClient: @unchecked Sendable {
    let peer: PythonPeer
    private(set) var publicKey = ""
    private let queue = DispatchQueue(label: "burrow.relay.test.sdk")

    private init(peer: PythonPeer) {
        self.peer = peer
    }

    static func connect(_ url: String, keys: Keys? = nil, authenticate: Bool = true) async throws -> SDKClient {
        let client = SDKClient(peer: try PythonPeer(script: Fixtures.peerScript("relay_client_peer.py")))
        var fields: [String: Any] = ["url": url, "authenticate": authenticate]
        if let keys { fields["secret_key"] = keys.secretKey.hex }
        do {
            client.publicKey = try await client.request("connect", fields).string("public_key")
        } catch {
            client.peer.terminate()
            throw error
        }
        return client
    }

    @discardableResult
    func request(_ op: String, _ fields: [String: Any] = [:], timeout: TimeInterval = 30) async throws -> PythonPeer.Response {
        // JSON-shaped fields go to the queue and are not touched here meanwhile.
        nonisolated(unsafe) let fields = fields
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.peer.request(op, fields, timeout: timeout) })
            }
        }
    }

    struct Published {
        let id: String
        let event: String
        let accepted: Bool
        let message: String
    }

    /// Signs (with `keys`, else the client's own key) and publishes through nostr-sdk.
    func publish(kind: Int, content: String = "", tags: [[String]] = [], createdAt: Int64? = nil, keys: Keys? = nil) async throws -> Published {
        var fields: [String: Any] = ["kind": kind, "content": content, "tags": tags]
        if let createdAt { fields["created_at"] = createdAt }
        if let keys { fields["secret_key"] = keys.secretKey.hex }
        let answer = try await request("publish", fields)
        return Published(id: try answer.string("event_id"), event: try answer.string("event"),
                         accepted: try answer.bool("accepted"), message: try answer.string("message"))
    }

    func publish(_ event: Event) async throws -> (accepted: Bool, message: String) {
        let answer = try await request("publish_event", ["event": event.jsonString])
        return (try answer.bool("accepted"), try answer.string("message"))
    }

    /// Events matching `filters` (JSON objects), as decoded events.
    func fetch(_ filters: [[String: Any]], timeout: Double = 5) async throws -> [UnverifiedEvent] {
        let answer = try await request("fetch", ["filters": filters, "timeout": timeout])
        guard let texts = answer["events"] as? [String] else { throw TestFailure("fetch answer has no events") }
        return try texts.map { try UnverifiedEvent(json: $0) }
    }

    func subscribe(_ id: String, _ filters: [[String: Any]]) async throws {
        try await request("subscribe", ["id": id, "filters": filters])
    }

    struct SubscriptionState {
        let events: [UnverifiedEvent]
        let eose: Bool
        let closed: String?
        let timedOut: Bool
    }

    func wait(_ id: String, count: Int? = nil, eose: Bool = false, closed: Bool = false, timeout: Double = 10) async throws -> SubscriptionState {
        var fields: [String: Any] = ["id": id, "eose": eose, "closed": closed, "timeout": timeout]
        if let count { fields["count"] = count }
        let answer = try await request("wait", fields, timeout: timeout + 10)
        guard let texts = answer["events"] as? [String] else { throw TestFailure("wait answer has no events") }
        return SubscriptionState(
            events: try texts.map { try UnverifiedEvent(json: $0) }, eose: try answer.bool("eose"),
            closed: answer["closed"] as? String, timedOut: try answer.bool("timed_out"))
    }

    /// Every relay message this client received so far, as JSON text.
    func messages() async throws -> [String] {
        let answer = try await request("messages")
        return answer["messages"] as? [String] ?? []
    }

    func close() {
        peer.terminate()
    }
}

/// A bare WebSocket client (hummingbird-websocket) that sends exactly the text or bytes it is
/// given, for the malformed and hostile input a real Nostr client would never send.
/// `@unchecked Sendable`: `task` is set in `init` only; what arrives is kept in `inbox`.
final class RawClient: @unchecked Sendable {
    enum Outgoing: Sendable {
        case text(String)
        case binary([UInt8])
    }

    /// What the connection received, shared with its task.
    private final class Inbox: Sendable {
        let state = Mutex((received: [String](), closeCode: String?.none, ended: false))
    }

    private let inbox = Inbox()
    private let continuation: AsyncStream<Outgoing>.Continuation
    private var task: Task<Void, Never>?

    init(url: String, maxFrameSize: Int = 4 << 20) {
        let (stream, continuation) = AsyncStream.makeStream(of: Outgoing.self)
        self.continuation = continuation
        var logger = Logger(label: "raw-client")
        logger.logLevel = .critical
        let inbox = self.inbox
        task = Task {
            do {
                let frame = try await WebSocketClient.connect(
                    url: url, configuration: .init(maxFrameSize: maxFrameSize), logger: logger
                ) { inbound, outbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await item in stream {
                                switch item {
                                case .text(let text): try await outbound.write(.text(text))
                                case .binary(let bytes): try await outbound.write(.binary(.init(bytes: bytes)))
                                }
                            }
                        }
                        for try await message in inbound.messages(maxSize: maxFrameSize) {
                            if case .text(let text) = message { inbox.state.withLock { $0.received.append(text) } }
                        }
                        group.cancelAll()
                    }
                }
                let code = frame.map { "\($0.closeCode)" }
                inbox.state.withLock { $0.closeCode = code }
            } catch {}
            inbox.state.withLock { $0.ended = true }
        }
    }

    deinit { close() }

    func send(_ text: String) { continuation.yield(.text(text)) }
    func send(binary: [UInt8]) { continuation.yield(.binary(binary)) }

    var messages: [String] { inbox.state.withLock { $0.received } }
    var hasEnded: Bool { inbox.state.withLock { $0.ended } }
    /// The close code the relay sent, as text (e.g. "messageTooLarge").
    var serverCloseCode: String? { inbox.state.withLock { $0.closeCode } }

    /// The received messages decoded as relay messages (undecodable ones are dropped).
    var relayMessages: [RelayMessage] { messages.compactMap { try? RelayMessage(json: $0) } }

    /// Waits for a received relay message that satisfies `predicate` and returns it.
    func next(_ what: String, seconds: Double = 10, where predicate: @escaping (RelayMessage) -> Bool) async throws -> RelayMessage {
        var found: RelayMessage?
        try await eventually(what, seconds: seconds) {
            found = relayMessages.first(where: predicate)
            return found != nil
        }
        guard let found else { throw TestFailure("no \(what)") }
        return found
    }

    func ok(for id: EventID, seconds: Double = 10) async throws -> (accepted: Bool, message: String) {
        let message = try await next("OK for \(id.hex.prefix(8))", seconds: seconds) {
            if case .ok(let eventID, _, _) = $0 { return eventID == id } else { return false }
        }
        guard case .ok(_, let accepted, let text) = message else { throw TestFailure("not an OK") }
        return (accepted, text)
    }

    func closed(_ subscriptionID: String, seconds: Double = 10) async throws -> String {
        let message = try await next("CLOSED \(subscriptionID)", seconds: seconds) {
            if case .closed(let id, _) = $0 { return id == subscriptionID } else { return false }
        }
        guard case .closed(_, let text) = message else { throw TestFailure("not CLOSED") }
        return text
    }

    func notice(containing text: String, seconds: Double = 10) async throws -> String {
        let message = try await next("NOTICE containing \(text)", seconds: seconds) {
            if case .notice(let body) = $0 { return body.contains(text) } else { return false }
        }
        guard case .notice(let body) = message else { throw TestFailure("not NOTICE") }
        return body
    }

    var challenge: String? {
        for message in relayMessages { if case .auth(let challenge) = message { return challenge } }
        return nil
    }

    func close() {
        continuation.finish()
        task?.cancel()
    }
}
