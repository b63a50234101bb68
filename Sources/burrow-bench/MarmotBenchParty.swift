import Foundation
import MLS
import Marmot
@_spi(StoreAccess) import Node
import Nostr
import Store

/// One Burrow user of the Marmot bench: a `BurrowNode` with its own SQLCipher store and no
/// relays. Sending, committing and receiving go through the node's own store halves
/// (`stageMessage`, `stageCommit` + `confirmCommit`, `receiveGroupEvents`: the transactions
/// `chat`, `group add` and `sync` run, without publishing); creating and joining store the group
/// as the node does.
final class MarmotBenchParty {
    let node: BurrowNode
    var keys: Keys { node.keys }
    var store: BurrowStore { node.store }
    var publicKey: PublicKey { node.publicKey }

    /// Creates the node in `home` with the smallest Argon2id memory (opening is not measured).
    init(home: URL, using rng: inout some RandomNumberGenerator) throws {
        node = try BurrowNode.initialize(home: home, passphrase: rng.randomBytes(32), kdfMemoryMiB: StoreKDFParameters.minimumMemoryMiB,
                                         importing: nil)
    }

    func close() { node.close() }

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
                try tx.outbox.insert(OutboxEntry(eventID: event.id.bytes, mlsGroupID: group.mlsGroupID.bytes, purpose: .welcome,
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
    /// event; `stageCommit` (commit, gift-wrapped welcome, pending group, dedup mark and outbox
    /// entries in one transaction); then, where the node would have the relay's OK,
    /// `confirmCommit` (merge and store in a second).
    func addMember(_ keyPackageJSON: String, to id: MLSGroupID, now: Int64) throws -> Event {
        let invitee = try KeyPackageEvent.verify(UnverifiedEvent(json: keyPackageJSON).verified(), now: now)
        let publicKey = self.publicKey
        let staged = try node.groups.stageCommit(id) { group, now, rng in
            try group.addMembers([invitee], committer: publicKey, now: now, using: &rng)
        }
        guard staged.pending.welcomes.count == 1 else {
            throw BenchFailure.check("the add commit made \(staged.pending.welcomes.count) welcomes")
        }
        try node.groups.confirmCommit(staged)
        return staged.pending.event
    }

    /// The node's `chat` without publishing (`stageMessage`): seal a kind-9 chat; the advanced
    /// ratchet, the message, the dedup mark and the outbox entry commit together.
    func sendChat(_ text: String, in id: MLSGroupID) throws -> Event {
        let author = publicKey
        return try node.groups.stageMessage(id) { try InnerEvent.chat(text, author: author, createdAt: $0) }.event
    }

    // MARK: Receiving

    /// The node's pipeline for one kind-445 event as a relay delivers it (JSON): id and
    /// signature, then `receiveGroupEvents` (dedup, envelope, the group found by `h`,
    /// decryption, MLS, the message, the group and the dedup mark in one transaction).
    func receive(_ json: String) throws -> SyncReport {
        let report = node.groups.receiveGroupEvents([try UnverifiedEvent(json: json).verified()])
        guard report.errors.isEmpty, report.processed == 1 else {
            throw BenchFailure.check("the event was not processed: \(report.errors.map(\.reason))")
        }
        return report
    }
}

extension LoadedGroup {
    /// A group just created or joined, as the node stores it.
    init(new group: MarmotGroup, now: Int64, syncSince: Int64) {
        self.init(row: StoredGroup(mlsGroupID: group.mlsGroupID.bytes, nostrGroupID: group.nostrGroupID.bytes, state: .active, mlsState: [],
                                   createdAt: now, lastSelfUpdate: now, syncSince: syncSince),
                  group: group)
    }

    static func load(_ id: MLSGroupID, _ tx: StoreTransaction) throws -> LoadedGroup {
        guard let row = try tx.groups.get(mlsGroupID: id.bytes) else { throw BenchFailure.check("group not in the store") }
        return try LoadedGroup(row, tx: tx)
    }
}
