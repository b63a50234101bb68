import MLS
import Marmot
import Nostr
import Store

/// A stored group row with its decoded Marmot state and rollback snapshots: how every
/// command and event loads a group, changes it and saves it back in one transaction.
/// Public so the Marmot bench stores groups exactly as the node does.
public struct LoadedGroup {
    public var row: StoredGroup
    public var group: MarmotGroup
    /// The snapshots as loaded (commit event ids), to rewrite them only when they changed.
    private var savedSnapshots: [[UInt8]]?

    /// Decodes a row; `tx` supplies its snapshots (without it the group has none, for reading).
    public init(_ row: StoredGroup, tx: StoreTransaction? = nil) throws {
        self.row = row
        do {
            let mls = try MLSGroup(serialized: row.mlsState)
            var snapshots: [MarmotGroup.RollbackPoint] = []
            if let tx {
                snapshots = try tx.snapshots.list(mlsGroupID: row.mlsGroupID).map {
                    MarmotGroup.RollbackPoint(state: try MLSGroup(serialized: $0.state),
                                              order: CommitOrder(createdAt: $0.commitCreatedAt, eventID: try EventID(bytes: $0.commitEventID)),
                                              digest: $0.commitDigest)
                }
                savedSnapshots = snapshots.map(\.order.eventID.bytes)
            }
            group = try MarmotGroup(mls: mls, snapshots: snapshots)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.storeCorrupt("a stored group state does not decode")
        }
    }

    /// A group not stored yet (just created or joined).
    public init(row: StoredGroup, group: MarmotGroup) {
        self.row = row
        self.group = group
        self.savedSnapshots = []
        capture()
    }

    /// Copies the Marmot state into the row.
    mutating func capture() {
        row.mlsState = group.mls.serialized()
        row.nostrGroupID = group.nostrGroupID.bytes
    }

    /// Writes the row and, when they changed, the snapshots.
    public mutating func save(_ tx: StoreTransaction) throws {
        // Loaded without its snapshots (for reading): saving would drop them.
        guard savedSnapshots != nil else { throw StoreError.misuse("a group read without its snapshots cannot be saved") }
        capture()
        try tx.groups.save(row)
        let current = group.snapshots.map(\.order.eventID.bytes)
        if current != savedSnapshots {
            try tx.snapshots.replace(mlsGroupID: row.mlsGroupID, with: group.snapshots.map {
                StoredSnapshot(epoch: Int64(clamping: $0.state.epoch), state: $0.state.serialized(), commitCreatedAt: $0.order.createdAt,
                               commitEventID: $0.order.eventID.bytes, commitDigest: $0.digest)
            })
            savedSnapshots = current
        }
    }
}
