import Foundation
import MLS
import Marmot
import Nostr
import Store

/// What sending an inner event produced: the kind-445 event and the inner event's id.
public struct SentMessage: Sendable {
    public let eventID: EventID
    public let messageID: EventID
    /// The group's name as the sender sees it (for "sent to Family").
    public let groupName: String
}

/// An event of ours stored and queued in the outbox, not published yet: the store half of
/// sending, for callers that carry it elsewhere (the relays, the mesh) or measure it.
public struct StagedMessage: Sendable {
    public let event: Event
    public let rumor: Rumor
    /// Where it is to be published.
    public let relays: [String]
    public let groupName: String
}

/// Sending chat and locations; reading messages, locations and leave requests.
extension GroupService {
    /// Sends a kind-9 chat message with plain text (what White Noise and Whistle both show).
    public func chat(_ groupText: String, text: String, timeout: Duration) async throws -> SentMessage {
        let id = try await catchUpIfReachable(groupText, timeout: timeout)
        return try await send(id, rumor: { try InnerEvent.chat(text, author: self.publicKey, createdAt: $0) }, timeout: timeout)
    }

    /// Sends a kind-1 location with Whistle's payload (`ts` = now, `interval` = the node's period).
    public func shareLocation(_ groupText: String, latitude: Double, longitude: Double, altitude: Double?, accuracy: Double?,
                              battery: Int64?, timeout: Duration) async throws -> SentMessage {
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw NodeError.invalidInput("latitude must be within ±90 and longitude within ±180")
        }
        if let battery, !(0...100).contains(battery) { throw NodeError.invalidInput("battery must be 0…100") }
        if let accuracy, accuracy < 0 || !accuracy.isFinite { throw NodeError.invalidInput("accuracy must be a non-negative number") }
        if let altitude, !altitude.isFinite { throw NodeError.invalidInput("altitude must be a number") }
        let interval = try locationInterval()
        let id = try await catchUpIfReachable(groupText, timeout: timeout)
        return try await send(id, rumor: { now in
            let payload = try LocationPayload(latitude: latitude, longitude: longitude, altitude: altitude ?? 0, accuracy: accuracy ?? 0,
                                          timestamp: now, battery: battery, interval: interval)
            return try InnerEvent.location(payload, author: self.publicKey, createdAt: now)
        }, timeout: timeout)
    }

    /// The publishing interval written into location payloads (default 3600 s, as Whistle).
    public func locationInterval() throws -> Int64 {
        try store.transaction { try $0.settings.get(Settings.locationInterval) }.flatMap { Int64($0) } ?? LocationPayload.defaultInterval
    }

    /// Encrypts an inner event into the group and publishes it. The advanced sender ratchet,
    /// the stored message, the dedup record and the outbox entry commit together before the
    /// ciphertext leaves; a failed publish stays queued for the next sync.
    func send(_ id: MLSGroupID, rumor make: (Int64) throws -> Rumor, timeout: Duration) async throws -> SentMessage {
        let staged = try stageMessage(id, rumor: make)
        Failpoint.messageStored.check()
        // With the mesh up, the message also goes hop by hop; if no relay takes it now it stays
        // queued for them, and the send has still left this device.
        let carried = await meshBridge.carryOnMesh(staged.event)
        do { try await gateway.publishAccepted(staged.event, to: staged.relays, timeout: timeout) } catch where carried {
            logger.info("no relay took the message; the mesh carried it and it stays queued for the relays")
            return SentMessage(eventID: staged.event.id, messageID: staged.rumor.id, groupName: staged.groupName)
        }
        Failpoint.messagePublished.check()
        try store.transaction { try $0.outbox.setState(eventID: staged.event.id.bytes, .sent) }
        return SentMessage(eventID: staged.event.id, messageID: staged.rumor.id, groupName: staged.groupName)
    }

    /// The store half of sending: the inner event `make` builds (given the time) is sealed into
    /// the group, and the advanced ratchet, the message, the dedup record and the outbox entry
    /// commit in one transaction. Nothing is published.
    public func stageMessage(_ id: MLSGroupID, rumor make: (Int64) throws -> Rumor) throws -> StagedMessage {
        var rng = SystemRandomNumberGenerator()
        let now = Self.now()
        let ours = try relays()
        let (event, rumor, urls, name) = try store.transaction { tx -> (Event, Rumor, [String], String) in
            var loaded = try loadGroup(mlsGroupID: id, in: tx)
            guard loaded.row.state.isReadable else {
                throw NodeError.invalidInput("the group is \(loaded.row.state.rawValue)")
            }
            let rumor = try make(now)
            let epoch = loaded.group.epoch
            let event = try loaded.group.seal(rumor, now: now, using: &rng)
            try loaded.save(tx)
            let generation = try tx.messages.count(mlsGroupID: id.bytes, epoch: Int64(clamping: epoch), sender: publicKey.bytes)
            try tx.messages.insert(StoredMessage(
                mlsGroupID: id.bytes, id: rumor.id.bytes, eventID: event.id.bytes, sender: publicKey.bytes, kind: rumor.kind,
                createdAt: rumor.createdAt, content: rumor.content, rumorJSON: rumor.jsonString, epoch: Int64(clamping: epoch), receivedAt: now,
                generation: generation))
            try tx.processedEvents.mark(eventID: event.id.bytes, outcome: "own message", at: now)
            let urls = relayURLs(for: loaded.group, ours: ours)
            try tx.outbox.insert(OutboxEntry(eventID: event.id.bytes, mlsGroupID: id.bytes, purpose: .message, json: event.jsonString,
                                             relays: urls, createdAt: now))
            return (event, rumor, urls, loaded.group.data.name)
        }
        return StagedMessage(event: event, rumor: rumor, relays: urls, groupName: name)
    }

    // MARK: Reading

    /// Stored messages of GROUP (ours included) by created_at, ties in arrival order.
    public func messages(_ groupText: String, limit: Int?) throws -> [MessageView] {
        try store.transaction { tx in
            let loaded = try resolveGroup(groupText, in: tx)
            return try tx.messages.list(mlsGroupID: loaded.row.mlsGroupID, limit: limit).map { try messageView($0, tx: tx) }
        }
    }

    /// The latest location of each member (by the payload's `ts`, then arrival).
    public func locations(_ groupText: String) throws -> [LocationView] {
        let now = Self.now()
        return try store.transaction { tx in
            let loaded = try resolveGroup(groupText, in: tx)
            var latest: [[UInt8]: (LocationPayload, Int64)] = [:]
            for message in try tx.messages.list(mlsGroupID: loaded.row.mlsGroupID, kinds: [MarmotKind.location]) {
                guard let payload = try? LocationPayload(json: message.content) else { continue }
                if let current = latest[message.sender], (current.0.timestamp, current.1) > (payload.timestamp, message.seq) { continue }
                latest[message.sender] = (payload, message.seq)
            }
            return try latest.sorted { Hex.encode($0.key) < Hex.encode($1.key) }.map { sender, entry in
                LocationView(member: Hex.encode(sender), name: try tx.memberNames.name(pubkey: sender, mlsGroupID: loaded.row.mlsGroupID),
                             payload: entry.0, stale: entry.0.isStale(now: now))
            }
        }
    }

    /// Pending leave requests: the newest kind-2 of each member still in the group.
    public func leaveRequests(_ groupText: String) throws -> [LeaveRequestView] {
        try store.transaction { tx in
            let loaded = try resolveGroup(groupText, in: tx)
            let members = Set(loaded.group.members.map(\.bytes))
            var newest: [[UInt8]: Int64] = [:]
            for message in try tx.messages.list(mlsGroupID: loaded.row.mlsGroupID, kinds: [MarmotKind.leaveRequest])
            where members.contains(message.sender) && message.sender != publicKey.bytes {
                newest[message.sender] = max(newest[message.sender] ?? 0, message.createdAt)
            }
            return newest.sorted { ($0.value, Hex.encode($0.key)) < ($1.value, Hex.encode($1.key)) }
                .map { LeaveRequestView(member: Hex.encode($0.key), createdAt: $0.value) }
        }
    }

    func messageView(_ message: StoredMessage, tx: StoreTransaction) throws -> MessageView {
        let rumor = try? Rumor(json: message.rumorJSON)
        let content = rumor.flatMap { try? InnerContent(parsing: $0) }
        var text: String?
        var location: LocationPayload?
        var reaction: Reaction?
        var deleted: [String]?
        switch content {
        case .chat(let chat)?: text = chat.chatText
        case .location(let payload)?: location = payload
        case .reaction(let r)?: reaction = r
        case .deletion(let d)?: deleted = d.targets.map(\.hex)
        default: break
        }
        return MessageView(
            id: Hex.encode(message.id), eventID: Hex.encode(message.eventID), groupID: Hex.encode(message.mlsGroupID), kind: message.kind,
            sender: Hex.encode(message.sender), senderName: try tx.memberNames.name(pubkey: message.sender, mlsGroupID: message.mlsGroupID),
            createdAt: message.createdAt, content: message.content, text: text, location: location, reaction: reaction, deleted: deleted)
    }
}
