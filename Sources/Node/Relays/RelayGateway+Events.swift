import Foundation
import Nostr
import RelayClient
import Store

/// Plain events: sign and publish, fetch with one filter. Everything fetched is verified by the
/// relay pool before it reaches here, and is recorded in the store's raw-event table.
extension RelayGateway {
    /// Signs a plain event with the identity key, records it, and publishes it to every relay.
    public func publish(kind: Int, content: String, tags: [[String]], timeout: Duration) async throws -> (Event, [PublishResult]) {
        try await publish(kind: kind, content: content, tags: tags, createdAt: Self.now(), timeout: timeout)
    }

    func publish(kind: Int, content: String, tags: [[String]], createdAt: Int64, timeout: Duration) async throws -> (Event, [PublishResult]) {
        guard (0...65535).contains(kind) else { throw NodeError.invalidInput("kind must be 0…65535") }
        var rng = SystemRandomNumberGenerator()
        let event = try Event.sign(kind: kind, content: content, tags: tags, createdAt: createdAt, keys: keys, rng: &rng)
        _ = try store.insertEvent(Self.stored(event))
        let pool = try connectPool()
        let results = await pool.publish(event, timeout: timeout)
        await pool.close()
        return (event, results)
    }

    /// Runs one filter against every relay (paginating past relay caps) and returns the
    /// verified events, newest first, each once.
    public func fetch(_ filter: Filter, timeout: Duration) async throws -> [Event] {
        let pool = try connectPool()
        let result: FetchResult
        do {
            result = try await pool.fetch(filter, timeout: timeout)
        } catch {
            await pool.close()
            throw error
        }
        await pool.close()
        for failure in result.errors { logger.warning("relay failed during fetch", metadata: ["relay": "\(failure)"]) }
        try store.transaction { tx in
            for event in result.events { _ = try tx.events.insert(Self.stored(event)) }
        }
        return result.events.sorted { ($0.createdAt, $1.id.hex) > ($1.createdAt, $0.id.hex) }
    }

    func connectPool() throws -> RelayPool {
        let urls = try relays()
        guard !urls.isEmpty else { throw NodeError.invalidInput("no relays configured: add one with `burrow relay add URL`") }
        // Authenticate (NIP-42) only when a relay refuses with `auth-required:`, so relays that
        // merely ask do not learn who we are.
        var configuration = RelayConfiguration()
        configuration.authenticateWhenChallenged = false
        return try RelayPool(urls: urls, authKeys: keys, configuration: configuration, logger: logger)
    }

    static func stored(_ event: Event) -> StoredEvent {
        StoredEvent(
            id: event.id.bytes, kind: event.kind, pubkey: event.pubkey.bytes,
            createdAt: event.createdAt, json: event.jsonString, receivedAt: now()
        )
    }

    /// Publishes every queued event whose prerequisite was sent (welcomes after their commit).
    func flushOutbox(timeout: Duration) async {
        guard let ready = try? store.transaction({ try $0.outbox.ready() }) else { return }
        // Commits are never re-sent from here: `recoverPendingCommits` asks the relays first.
        for entry in ready where entry.purpose != .commit {
            guard let event = try? UnverifiedEvent(json: entry.json).verified() else {
                _ = try? store.transaction { try $0.outbox.setState(eventID: entry.eventID, .failed) }
                continue
            }
            do {
                try await publishAccepted(event, to: entry.relays, timeout: timeout)
                Failpoint.outboxPublished.check()
                if entry.purpose == .welcome { Failpoint.welcomePublished.check() }
                _ = try? store.transaction { try $0.outbox.setState(eventID: entry.eventID, .sent) }
            } catch {
                logger.warning("queued event not published yet", metadata: ["event": "\(event.id.hex)", "error": "\(BurrowNode.describe(error))"])
            }
        }
    }
}
