import Foundation
import Nostr
import Synchronization

/// What a relay session tells the owner of one of its subscriptions.
enum SessionSignal: Sendable {
    /// A verified event that matches the subscription's filters.
    case event(Event)
    /// Stored events are done.
    case eose
    /// The relay closed the subscription; final for this relay.
    case closed(String)
    /// A NOTICE on the connection.
    case notice(String)
    /// Something was wrong (invalid event dropped, malformed message, failed reconnect…).
    case error(RelayClientError)
    /// The connection carrying the subscription ended; live subscriptions will be resumed.
    case connectionLost(RelayClientError)
    /// The connection is back and the subscription was sent again.
    case reconnected
}

/// Receives a session's signals for one subscription. Called from the session actor, so
/// implementations must be quick and thread-safe.
protocol SessionSink: AnyObject, Sendable {
    func receive(_ signal: SessionSignal, from relay: RelayURL)
}

/// Collects one page of a fetch: events until EOSE, or the reason there was no EOSE.
final class PageCollector: SessionSink, Sendable {
    private struct State {
        var events: [Event] = []
        var problems: [RelayClientError] = []
        var progress = 0
    }

    private let state = Mutex(State())
    private let end = OneShot<Void>()

    func receive(_ signal: SessionSignal, from relay: RelayURL) {
        switch signal {
        case .event(let event):
            state.withLock { $0.events.append(event); $0.progress += 1 }
        case .eose:
            end.succeed(())
        case .closed(let message):
            end.fail(RelayClientError.rejected(message.isEmpty ? "subscription closed" : message))
        case .error(let error):
            state.withLock { $0.problems.append(error); $0.progress += 1 }
        case .connectionLost(let error):
            end.fail(error)
        case .notice, .reconnected:
            break
        }
    }

    /// Waits for EOSE. `idleTimeout` bounds each stretch without progress, not the whole page:
    /// a long page that keeps delivering events runs to its end.
    func waitForEnd(idleTimeout: Duration) async throws -> (events: [Event], problems: [RelayClientError]) {
        var lastProgress = 0
        while true {
            do {
                try await end.value(timeout: idleTimeout, waitingFor: "EOSE")
                break
            } catch RelayClientError.timeout(let what) {
                let now = state.withLock { $0.progress }
                if now == lastProgress { throw RelayClientError.timeout(what) }
                lastProgress = now
            }
        }
        return state.withLock { ($0.events, $0.problems) }
    }

    var collectedProblems: [RelayClientError] { state.withLock { $0.problems } }
}
