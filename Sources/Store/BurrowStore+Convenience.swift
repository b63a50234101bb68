/// One-call forms of the repositories, each in its own transaction. Use `transaction` directly
/// when several changes must commit together.
extension BurrowStore {
    public func identity() throws -> StoredIdentity? { try transaction { try $0.identity.get() } }

    public func setIdentity(secretKey: [UInt8], createdAt: Int64 = StoreClock.now()) throws {
        try transaction { try $0.identity.set(secretKey: secretKey, createdAt: createdAt) }
    }

    public func relays() throws -> [StoredRelay] { try transaction { try $0.relays.list() } }

    @discardableResult
    public func addRelay(url: String, read: Bool = true, write: Bool = true, addedAt: Int64 = StoreClock.now()) throws -> Bool {
        try transaction { try $0.relays.add(url: url, read: read, write: write, addedAt: addedAt) }
    }

    @discardableResult
    public func removeRelay(url: String) throws -> Bool { try transaction { try $0.relays.remove(url: url) } }

    @discardableResult
    public func insertEvent(_ event: StoredEvent) throws -> Bool { try transaction { try $0.events.insert(event) } }

    public func event(id: [UInt8]) throws -> StoredEvent? { try transaction { try $0.events.get(id: id) } }

    public func eventCount(kind: Int? = nil) throws -> Int { try transaction { try $0.events.count(kind: kind) } }

    public func events(kind: Int, since: Int64? = nil, until: Int64? = nil, limit: Int? = nil) throws -> [StoredEvent] {
        try transaction { try $0.events.query(kind: kind, since: since, until: until, limit: limit) }
    }

    @discardableResult
    public func markProcessed(eventID: [UInt8], outcome: String, at processedAt: Int64 = StoreClock.now()) throws -> Bool {
        try transaction { try $0.processedEvents.mark(eventID: eventID, outcome: outcome, at: processedAt) }
    }

    public func isProcessed(eventID: [UInt8]) throws -> Bool {
        try transaction { try $0.processedEvents.contains(eventID: eventID) }
    }
}
