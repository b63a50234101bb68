import HummingbirdWebSocket
import Synchronization

/// The pages' WebSockets: each gets every nudge, through a small queue (a page that reads too
/// slowly loses the oldest nudges, which only ask it to fetch again). Bounded in number.
final class WebHub: Sendable {
    static let maximumClients = 32
    static let queueLength = 64

    private struct State {
        var next = 0
        var clients: [Int: AsyncStream<String>.Continuation] = [:]
        var finished = false
    }

    private let state = Mutex(State())

    func broadcast(_ text: String) {
        let clients = state.withLock { Array($0.clients.values) }
        for client in clients { client.yield(text) }
    }

    func finishAll() {
        let clients = state.withLock { state -> [AsyncStream<String>.Continuation] in
            state.finished = true
            defer { state.clients = [:] }
            return Array(state.clients.values)
        }
        for client in clients { client.finish() }
    }

    /// Sends nudges until the page goes or the hub finishes; what the page sends is read and
    /// dropped (at most 4 KiB a frame, the configured maximum).
    func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(Self.queueLength))
        let id: Int? = state.withLock { state in
            guard !state.finished, state.clients.count < Self.maximumClients else { return nil }
            state.next += 1
            state.clients[state.next] = continuation
            return state.next
        }
        guard let id else {
            try? await outbound.close(.unknown(1013), reason: "too many pages open")
            return
        }
        defer { _ = state.withLock { $0.clients.removeValue(forKey: id) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await outbound.write(.text(#"{"type":"hello"}"#))
                for await text in stream { try await outbound.write(.text(text)) }
                try? await outbound.close(.normalClosure, reason: nil)
            }
            group.addTask {
                for try await _ in inbound {}
                continuation.finish()
            }
            try await group.next()
            group.cancelAll()
        }
    }
}
