import Foundation
import MLS
import Marmot
import Node
import Nostr
import Store

/// One Burrow user of the Marmot bench: a Nostr identity and its own SQLCipher store, driven
/// through the public Marmot and Store APIs and the node's own `LoadedGroup`, the way
/// `BurrowNode` drives them (the node's transactions, rows and order, without its relays): every operation loads the group from the
/// store, changes it and saves it back in one transaction, as the node does per command or event.
final class MarmotBenchParty {
    let keys: Keys
    let store: BurrowStore
    var publicKey: PublicKey { keys.publicKey }

    /// Creates the store in `home` with the smallest Argon2id memory (opening is not measured).
    init(home: URL, using rng: inout some RandomNumberGenerator) throws {
        keys = Keys.generate(using: &rng)
        store = try BurrowStore.create(home: home, passphrase: rng.randomBytes(32), kdfMemoryMiB: StoreKDFParameters.minimumMemoryMiB)
    }

    func close() { store.close() }

    // MARK: Creating

    /// The node's `createGroup` after its KeyPackages are fetched: verify the events (JSON as a
    /// relay delivers them), create the group, gift-wrap each Welcome rumor when `wrap`, and
    /// store the group (and the wraps, queued in the outbox) in one transaction.
    func createGroup(keyPackageJSON: [String], relays: [RelayURL], wrap: Bool, now: Int64,
                     using rng: inout SystemRandomNumberGenerator) throws -> (group: MarmotGroup, welcomes: [MarmotGroup.OutgoingWelcome]) {
        let invitees = try keyPackageJSON.map { try KeyPackageEvent.verify(UnverifiedEvent(json: $0).verified(), now: now) }
        let (group, welcomes) = try MarmotGroup.create(
            creator: publicKey, name: "bench", description: "", admins: [publicKey], relays: relays, invitees: invitees,
            now: now, using: &rng)
        let wraps = wrap ? try welcomes.map {
            try GiftWrap.wrap(rumor: $0.rumor, sender: keys, recipient: $0.recipient, now: now, rng: &rng)
        } : []
        var record = LoadedGroup(new: group, now: now, syncSince: now)
        try store.transaction { tx in
            try record.save(tx)
            for event in wraps {
                try tx.outbox.insert(OutboxEntry(eventID: event.id.bytes, mlsGroupID: group.mlsGroupID, purpose: .welcome,
                                                 json: event.jsonString, relays: relays.map(\.string), createdAt: now))
            }
        }
        return (group, welcomes)
    }

    /// Joins from a Welcome rumor with our KeyPackage and stores the group (not measured).
    func join(_ welcome: MarmotGroup.OutgoingWelcome, keyPackage: KeyPackageBundle, now: Int64) throws -> MarmotGroup {
        let group = try MarmotGroup.join(welcome: WelcomeRumor.verify(welcome.rumor), keyPackage: keyPackage)
        var record = LoadedGroup(new: group, now: now, syncSince: welcome.rumor.createdAt)
        try store.transaction { try record.save($0) }
        return group
    }

    // MARK: Committing and sending

    /// The node's commit flow for an add without its relay round trip: verify the KeyPackage
    /// event; commit, seal and store the pending commit with its dedup mark and outbox entry in
    /// one transaction; then (where the node would have the relay's OK) merge and store in a second.
    /// The Welcome rumor is not gift-wrapped (MDK does not wrap either).
    func addMember(_ keyPackageJSON: String, to id: [UInt8], relays: [RelayURL], now: Int64,
                   using rng: inout SystemRandomNumberGenerator) throws -> Event {
        let invitee = try KeyPackageEvent.verify(UnverifiedEvent(json: keyPackageJSON).verified(), now: now)
        let pending = try store.transaction { tx -> MarmotGroup.PendingCommitEvent in
            var record = try LoadedGroup.load(id, tx)
            let pending = try record.group.addMembers([invitee], committer: publicKey, now: now, using: &rng)
            try record.save(tx)
            try tx.processedEvents.mark(eventID: pending.event.id.bytes, outcome: "own commit", at: now)
            try tx.outbox.insert(OutboxEntry(eventID: pending.event.id.bytes, mlsGroupID: id, purpose: .commit,
                                             json: pending.event.jsonString, relays: relays.map(\.string), createdAt: now))
            return pending
        }
        guard pending.welcomes.count == 1 else { throw BenchFailure.check("the add commit made \(pending.welcomes.count) welcomes") }
        try store.transaction { tx in
            var record = try LoadedGroup.load(id, tx)
            try record.group.mergePendingCommit(published: pending.event)
            record.row.syncSince = max(record.row.syncSince, pending.event.createdAt)
            try record.save(tx)
            try tx.outbox.setState(eventID: pending.event.id.bytes, .sent)
        }
        return pending.event
    }

    /// The node's `send` without publishing: seal a kind-9 chat; the advanced ratchet, the
    /// message, the dedup mark and the outbox entry commit together.
    func sendChat(_ text: String, in id: [UInt8], relays: [RelayURL], now: Int64,
                  using rng: inout SystemRandomNumberGenerator) throws -> Event {
        try store.transaction { tx -> Event in
            var record = try LoadedGroup.load(id, tx)
            let rumor = try InnerEvent.chat(text, author: publicKey, createdAt: now)
            let epoch = record.group.epoch
            let event = try record.group.seal(rumor, now: now, using: &rng)
            try record.save(tx)
            try tx.messages.insert(StoredMessage(
                mlsGroupID: id, id: rumor.id.bytes, eventID: event.id.bytes, sender: publicKey.bytes, kind: rumor.kind,
                createdAt: rumor.createdAt, content: rumor.content, rumorJSON: rumor.jsonString, epoch: Int64(epoch), receivedAt: now))
            try tx.processedEvents.mark(eventID: event.id.bytes, outcome: "own message", at: now)
            try tx.outbox.insert(OutboxEntry(eventID: event.id.bytes, mlsGroupID: id, purpose: .message, json: event.jsonString,
                                             relays: relays.map(\.string), createdAt: now))
            return event
        }
    }

    // MARK: Receiving

    /// The node's pipeline for one kind-445 event as a relay delivers it (JSON): id and
    /// signature, then in one transaction the dedup check, envelope validation, the group found
    /// by `h`, decryption, MLS processing (the inner event verified against its sender), the
    /// stored message, the saved group and the dedup mark.
    func receive(_ json: String, now: Int64) throws -> GroupEventOutcome {
        let event = try UnverifiedEvent(json: json).verified()
        return try store.transaction { tx -> GroupEventOutcome in
            guard try !tx.processedEvents.contains(eventID: event.id.bytes) else { throw BenchFailure.check("event already processed") }
            let validated = try GroupEvent.validate(event, now: now)
            guard let row = try tx.groups.find(nostrGroupID: validated.nostrGroupID).first(where: { $0.state != .declined }) else {
                throw BenchFailure.check("no group for the event's h tag")
            }
            var record = try LoadedGroup(row, tx: tx)
            let outcome = try record.group.process(record.group.decrypt(validated))
            if case .application(let inner, let epoch) = outcome {
                try tx.messages.insert(StoredMessage(
                    mlsGroupID: row.mlsGroupID, id: inner.rumor.id.bytes, eventID: event.id.bytes, sender: inner.sender.bytes,
                    kind: inner.rumor.kind, createdAt: inner.rumor.createdAt, content: inner.rumor.content,
                    rumorJSON: inner.rumor.jsonString, epoch: Int64(epoch), receivedAt: now))
            }
            record.row.syncSince = max(record.row.syncSince, event.createdAt)
            try record.save(tx)
            try tx.processedEvents.mark(eventID: event.id.bytes, outcome: "processed", at: now)
            return outcome
        }
    }
}

extension LoadedGroup {
    /// A group just created or joined, as the node stores it.
    init(new group: MarmotGroup, now: Int64, syncSince: Int64) {
        self.init(row: StoredGroup(mlsGroupID: group.mlsGroupID, nostrGroupID: group.nostrGroupID, state: .active, mlsState: [],
                                   createdAt: now, lastSelfUpdate: now, syncSince: syncSince),
                  group: group)
    }

    static func load(_ id: [UInt8], _ tx: StoreTransaction) throws -> LoadedGroup {
        guard let row = try tx.groups.get(mlsGroupID: id) else { throw BenchFailure.check("group not in the store") }
        return try LoadedGroup(row, tx: tx)
    }
}
