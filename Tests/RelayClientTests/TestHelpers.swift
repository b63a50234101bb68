import Foundation
import Nostr
import XCTest
@testable import RelayClient
import TestSupport

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A pool that is always closed, however the body ends.
func withPool<T: Sendable>(
    _ urls: [String], keys: Keys? = nil, configuration: RelayConfiguration = .forTests,
    _ body: (RelayPool) async throws -> T
) async throws -> T {
    let pool = try RelayPool(urls: urls, authKeys: keys, configuration: configuration)
    do {
        let result = try await body(pool)
        await pool.close()
        return result
    } catch {
        await pool.close()
        throw error
    }
}

extension RelayConfiguration {
    /// Short waits so failing tests fail fast; quick reconnects.
    static var forTests: RelayConfiguration {
        var configuration = RelayConfiguration()
        configuration.connectTimeout = .seconds(5)
        configuration.eoseTimeout = .seconds(10)
        configuration.authTimeout = .seconds(5)
        configuration.backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(1), multiplier: 2, jitter: 0.1)
        return configuration
    }
}

/// Consumes a pool subscription in the background so tests can wait for what arrives.
final class StreamProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var _items: [RelayPoolEvent] = []
    private var _ended = false
    private var task: Task<Void, Never>?

    init(_ stream: AsyncStream<RelayPoolEvent>) {
        task = Task { [weak self] in
            for await item in stream {
                self?.lock.withLock { self?._items.append(item) }
            }
            self?.lock.withLock { self?._ended = true }
        }
    }

    deinit { task?.cancel() }

    var items: [RelayPoolEvent] { lock.withLock { _items } }
    var ended: Bool { lock.withLock { _ended } }

    var events: [Event] {
        items.compactMap { if case .event(let event, _) = $0 { return event } else { return nil } }
    }

    var errors: [RelayClientError] {
        items.compactMap { if case .error(_, let error) = $0 { return error } else { return nil } }
    }

    func count(where predicate: (RelayPoolEvent) -> Bool) -> Int { items.filter(predicate).count }

    /// Waits (polling, cancellable) until `predicate` holds over everything received so far.
    func wait(
        _ what: String, seconds: Double = 15, file: StaticString = #filePath, line: UInt = #line,
        until predicate: ([RelayPoolEvent]) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if predicate(items) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTFail("waited \(seconds) s for \(what); got \(items.map(Self.describe))", file: file, line: line)
        throw TestTimedOut(seconds: seconds)
    }

    /// Stops listening (the pool then sends CLOSE).
    func stop() { task?.cancel() }

    static func describe(_ item: RelayPoolEvent) -> String {
        switch item {
        case .event(let event, let relay): return "event(\(event.id.hex.prefix(8)) kind \(event.kind) from \(relay))"
        case .eose(let relay): return "eose(\(relay))"
        case .eoseAll: return "eoseAll"
        case .notice(let relay, let message): return "notice(\(relay): \(message))"
        case .closed(let relay, let message): return "closed(\(relay): \(message))"
        case .error(let relay, let error): return "error(\(relay): \(error))"
        case .reconnected(let relay): return "reconnected(\(relay))"
        }
    }
}

extension RelayPoolEvent {
    var isEOSEAll: Bool { if case .eoseAll = self { return true } else { return false } }
    var isReconnected: Bool { if case .reconnected = self { return true } else { return false } }
    func isEOSE(from relay: String) -> Bool { if case .eose(let r) = self { return r == relay } else { return false } }
}

extension TestEvents {
    /// The event's JSON with one field replaced (for tampered copies).
    static func tampered(_ event: Event, field: String, value: Any) throws -> String {
        guard var object = try JSONSerialization.jsonObject(with: Data(event.jsonString.utf8)) as? [String: Any] else {
            throw TestFailure("event JSON is not an object")
        }
        object[field] = value
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }
}
