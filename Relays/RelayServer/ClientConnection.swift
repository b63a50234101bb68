import Foundation
import Nostr

/// One WebSocket client's state, shared between its reader (which handles its messages in
/// order) and the hub (which delivers other clients' new events to it): its NIP-42 challenge
/// and proven keys, its subscriptions, its rate limits, and its outbox.
///
/// Everything mutable is behind one lock and no lock is held across an `await`. Outgoing text
/// goes into an unbounded stream that one writer task drains; the queued messages are bounded
/// by count (`outboundQueue`) and bytes (`outboundBytes`), and a client that falls further
/// behind is disconnected (`overflowed`) instead of making the relay buffer for it without end.
///
/// `@unchecked Sendable`: every mutable field is read and written only under `lock`.
final class ClientConnection: @unchecked Sendable {
    let number: Int
    /// The NIP-42 challenge sent when the connection opened (one per connection).
    let challenge: String
    let outgoing: AsyncStream<String>

    private let continuation: AsyncStream<String>.Continuation
    private let queueLimit: Int
    private let byteLimit: Int
    private let requestByteLimit: Int
    private let authKeyLimit: Int
    private let lock = NSLock()
    // Guarded by `lock`:
    private var authenticatedKeys: Set<PublicKey> = []
    private var authenticatedHex: Set<String> = []
    private var subscriptions: [String: Subscription] = [:]
    private var generation = 0
    private var pending = 0
    private var pendingBytes = 0
    private var finished = false
    private(set) var overflowed = false
    private var eventBucket: TokenBucket
    private var requestBucket: TokenBucket
    private var authBucket: TokenBucket

    /// A subscription's filters and whether its stored events are still being sent (live
    /// events that match meanwhile wait in `held`, then follow the EOSE).
    private struct Subscription {
        var filters: [Filter]
        var generation: Int
        var catchingUp = true
        var held: [(id: EventID, json: [UInt8])] = []
        var heldBytes = 0
        /// More live events arrived while catching up than `requestBytes` holds: the
        /// subscription is CLOSED after its EOSE instead of silently missing some.
        var heldOverflowed = false
    }

    init(number: Int, challenge: String, limits: RelayServerConfiguration.Limits, now: Double) {
        self.number = number
        self.challenge = challenge
        self.queueLimit = limits.outboundQueue
        self.byteLimit = limits.outboundBytes
        self.requestByteLimit = limits.requestBytes
        self.authKeyLimit = limits.maxAuthKeys
        (outgoing, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        eventBucket = TokenBucket(perMinute: limits.eventsPerMinute, now: now)
        requestBucket = TokenBucket(perMinute: limits.requestsPerMinute, now: now)
        authBucket = TokenBucket(perMinute: limits.authPerMinute, now: now)
    }

    // MARK: - Outbox

    /// Queues a message for the writer; past the queue limit the connection is marked
    /// overflowed and its outbox closed (the writer then closes the socket).
    func send(_ text: String) {
        lock.withLock { sendLocked(text) }
    }

    func send(_ message: RelayMessage) {
        send(message.jsonString)
    }

    private func sendLocked(_ text: String) {
        guard !finished else { return }
        let size = text.utf8.count
        guard pending < queueLimit, pendingBytes + size <= byteLimit else {
            overflowed = true
            finished = true
            continuation.finish()
            return
        }
        pending += 1
        pendingBytes += size
        continuation.yield(text)
    }

    /// The writer wrote one message of `bytes` bytes.
    func didWrite(bytes: Int) {
        lock.withLock {
            pending -= 1
            pendingBytes -= bytes
        }
    }

    /// Bytes queued for the writer (for tests).
    var queuedBytes: Int { lock.withLock { pendingBytes } }

    /// No more messages will be queued (the reader ended or the relay is closing).
    func finishOutbox() {
        lock.withLock {
            finished = true
            continuation.finish()
        }
    }

    var isOverflowed: Bool { lock.withLock { overflowed } }

    // MARK: - Authentication and limits

    var authenticated: Set<PublicKey> { lock.withLock { authenticatedKeys } }

    /// Adds a proven key; false when the connection already holds `maxAuthKeys` others.
    func authenticate(_ key: PublicKey) -> Bool {
        lock.withLock {
            guard authenticatedKeys.contains(key) || authenticatedKeys.count < authKeyLimit else { return false }
            authenticatedKeys.insert(key)
            authenticatedHex.insert(key.hex)
            return true
        }
    }

    func takeAuthToken(now: Double) -> Bool { lock.withLock { authBucket.take(now: now) } }

    func takeEventToken(now: Double) -> Bool { lock.withLock { eventBucket.take(now: now) } }

    func takeRequestToken(now: Double) -> Bool { lock.withLock { requestBucket.take(now: now) } }

    // MARK: - Subscriptions

    /// Registers (or replaces) a subscription in its catching-up state. Returns its generation,
    /// or nil when this would exceed `limit` subscriptions.
    func open(_ id: String, filters: [Filter], limit: Int) -> Int? {
        lock.withLock {
            guard subscriptions[id] != nil || subscriptions.count < limit else { return nil }
            generation += 1
            subscriptions[id] = Subscription(filters: filters, generation: generation)
            return generation
        }
    }

    func close(_ id: String) {
        lock.withLock { _ = subscriptions.removeValue(forKey: id) }
    }

    func closeIfCurrent(_ id: String, generation: Int) {
        lock.withLock {
            if subscriptions[id]?.generation == generation { subscriptions.removeValue(forKey: id) }
        }
    }

    var subscriptionCount: Int { lock.withLock { subscriptions.count } }

    /// Sends a subscription's stored events (newest first, at most `requestBytes` of them) and
    /// EOSE, then the live events held meanwhile (without repeating any), and makes it live.
    /// Does nothing if the subscription was closed or replaced while its query ran. Returns how
    /// many stored events were left out by the byte budget.
    @discardableResult
    func finishCatchingUp(_ id: String, generation: Int, stored: [StoredEvent]) -> Int {
        lock.withLock {
            guard var subscription = subscriptions[id], subscription.generation == generation else { return 0 }
            var sent = Set<[UInt8]>()
            var bytes = 0
            var leftOut = 0
            for event in stored {
                guard bytes + event.json.count <= requestByteLimit else {
                    leftOut += 1
                    continue
                }
                bytes += event.json.count
                sent.insert(event.id)
                sendLocked(Self.eventMessage(subscriptionID: id, json: event.json))
            }
            sendLocked(RelayMessage.eose(subscriptionID: id).jsonString)
            if subscription.heldOverflowed {
                subscriptions[id] = nil
                sendLocked(RelayMessage.closed(subscriptionID: id,
                                               message: "error: more live events arrived while catching up than one reply holds; subscribe again").jsonString)
                return leftOut
            }
            for held in subscription.held where !sent.contains(held.id.bytes) {
                sendLocked(Self.eventMessage(subscriptionID: id, json: held.json))
            }
            subscription.held = []
            subscription.heldBytes = 0
            subscription.catchingUp = false
            subscriptions[id] = subscription
            return leftOut
        }
    }

    /// Offers a newly accepted event to every matching subscription this connection may see it on.
    func deliver(_ event: Event, json: [UInt8]) {
        lock.withLock {
            guard !finished, !subscriptions.isEmpty,
                  Visibility.canSee(kind: event.kind, tags: event.tags, authenticated: authenticatedHex) else { return }
            for (id, subscription) in subscriptions where subscription.filters.contains(where: { $0.matches(event) }) {
                if subscription.catchingUp {
                    if subscription.heldOverflowed { continue }
                    if subscription.heldBytes + json.count <= requestByteLimit {
                        subscriptions[id]?.held.append((event.id, json))
                        subscriptions[id]?.heldBytes += json.count
                    } else {
                        subscriptions[id]?.held = []
                        subscriptions[id]?.heldBytes = 0
                        subscriptions[id]?.heldOverflowed = true
                    }
                } else {
                    sendLocked(Self.eventMessage(subscriptionID: id, json: json))
                }
            }
        }
    }

    /// `["EVENT",<id>,<event JSON>]` around an event's stored bytes, without re-encoding them.
    static func eventMessage(subscriptionID: String, json: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(json.count + subscriptionID.utf8.count + 16)
        out.append(contentsOf: "[\"EVENT\",".utf8)
        JSONWriter.writeString(subscriptionID, to: &out)
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: json)
        out.append(UInt8(ascii: "]"))
        return String(decoding: out, as: UTF8.self)
    }
}

/// Every open connection, for delivering new events and counting against `max_connections`
/// and `max_connections_per_ip`.
///
/// `@unchecked Sendable`: every mutable field is read and written only under `lock`.
final class ConnectionHub: @unchecked Sendable {
    /// Why a connection was not registered.
    enum Refusal: Error {
        case tooManyConnections
        case tooManyFromAddress
    }

    private let lock = NSLock()
    private var connections: [Int: ClientConnection] = [:]
    private var addresses: [Int: String] = [:]
    private var perAddress: [String: Int] = [:]
    private var nextNumber = 0
    private let limit: Int
    private let perAddressLimit: Int

    init(limit: Int, perAddressLimit: Int = .max) {
        self.limit = limit
        self.perAddressLimit = perAddressLimit
    }

    /// Registers a new connection from `address` (nil: not counted per address), or says
    /// which limit it would break.
    func register(from address: String? = nil, _ make: (Int) -> ClientConnection) -> Result<ClientConnection, Refusal> {
        lock.withLock {
            guard connections.count < limit else { return .failure(.tooManyConnections) }
            if let address, perAddress[address, default: 0] >= perAddressLimit { return .failure(.tooManyFromAddress) }
            nextNumber += 1
            let connection = make(nextNumber)
            connections[nextNumber] = connection
            if let address {
                addresses[nextNumber] = address
                perAddress[address, default: 0] += 1
            }
            return .success(connection)
        }
    }

    func remove(_ connection: ClientConnection) {
        lock.withLock {
            _ = connections.removeValue(forKey: connection.number)
            if let address = addresses.removeValue(forKey: connection.number) {
                perAddress[address, default: 1] -= 1
                if perAddress[address] == 0 { perAddress[address] = nil }
            }
        }
    }

    var count: Int { lock.withLock { connections.count } }

    /// Delivers an accepted event to every connection's matching subscriptions.
    func broadcast(_ event: Event, json: [UInt8]) {
        let current = lock.withLock { Array(connections.values) }
        for connection in current { connection.deliver(event, json: json) }
    }

    /// Closes every outbox (the writers then end their connections).
    func finishAll() {
        let current = lock.withLock { Array(connections.values) }
        for connection in current { connection.finishOutbox() }
    }
}
