import SQLite

/// The view of the store inside one transaction. Its repositories read and write through the
/// transaction's connection; using any of them after the transaction ended throws `misuse`.
public final class StoreTransaction {
    private var conn: SQLiteConnection?

    init(connection: SQLiteConnection) { conn = connection }

    func finish() { conn = nil }

    func connection() throws -> SQLiteConnection {
        guard let conn else { throw StoreError.misuse("the transaction has ended") }
        return conn
    }

    /// The Nostr identity (one secret key).
    public var identity: IdentityRepository { IdentityRepository(transaction: self) }
    /// Configured relays.
    public var relays: RelayRepository { RelayRepository(transaction: self) }
    /// Raw verified events.
    public var events: EventRepository { EventRepository(transaction: self) }
    /// Ids of events the pipeline has already handled (dedup).
    public var processedEvents: ProcessedEventRepository { ProcessedEventRepository(transaction: self) }
    public var keyPackages: KeyPackageRepository { KeyPackageRepository(transaction: self) }
    public var groups: GroupRepository { GroupRepository(transaction: self) }
    public var invites: InviteRepository { InviteRepository(transaction: self) }
    public var messages: MessageRepository { MessageRepository(transaction: self) }
    public var memberNames: MemberNameRepository { MemberNameRepository(transaction: self) }
    public var profiles: ProfileRepository { ProfileRepository(transaction: self) }
    public var locationShares: LocationShareRepository { LocationShareRepository(transaction: self) }
    public var outbox: OutboxRepository { OutboxRepository(transaction: self) }
    public var settings: SettingsRepository { SettingsRepository(transaction: self) }
    public var snapshots: SnapshotRepository { SnapshotRepository(transaction: self) }
    public var commitIntents: CommitIntentRepository { CommitIntentRepository(transaction: self) }
    /// Join requests (kind 1080) received as an inviter.
    public var joinRequests: JoinRequestRepository { JoinRequestRepository(transaction: self) }
    /// Pigeon direct messages: the engine's records, contact names, messages, frames to send.
    public var pigeonRecords: PigeonRecordRepository { PigeonRecordRepository(transaction: self) }
    public var dmContacts: DMContactRepository { DMContactRepository(transaction: self) }
    public var dmMessages: DMMessageRepository { DMMessageRepository(transaction: self) }
    public var dmOutbox: DMOutboxRepository { DMOutboxRepository(transaction: self) }
    /// Feeds: the own feed and followed ones, the journal, evidence.
    public var feeds: FeedRepository { FeedRepository(transaction: self) }
    /// The feed's keys: PQ bundles, encapsulations, pair keys, group secrets.
    public var feedKeys: FeedKeyRepository { FeedKeyRepository(transaction: self) }
}
