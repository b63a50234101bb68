/// What a commit changed, for the application (OpenMLS `StagedCommit` as seen after merging):
/// Marmot's admin policy, member lists and UI read it.
public struct CommitSummary: Sendable, Equatable {
    /// The epoch the commit started.
    public let epoch: UInt64
    /// The committer, as it was before the commit (Marmot checks it against the admins).
    public let committer: Member
    /// Every proposal the commit applied, in commit order.
    public let proposals: [CommittedProposal]
    /// New members, at their leaves in the new epoch.
    public let added: [Member]
    /// Members removed by Remove or SelfRemove, with their leaves before removal.
    public let removed: [Member]
    /// Members whose leaf an Update proposal replaced (the committer's own path update is
    /// `hasPath`).
    public let updated: [LeafIndex]
    /// Whether the commit carried an UpdatePath (the committer refreshed its leaf and path).
    public let hasPath: Bool
    /// Whether a GroupContextExtensions proposal changed the extensions.
    public let extensionsChanged: Bool
    /// The GroupContext extensions of the new epoch.
    public let extensions: Extensions
    /// True when this member was removed: the group is inactive afterwards.
    public let removedSelf: Bool

    /// True for a commit that only refreshes the committer's own leaf (a path and no
    /// proposals): MDK's self-update.
    public var isPureSelfUpdate: Bool { hasPath && proposals.isEmpty }
}

/// What creating a commit produced: the message to publish, the Welcome for the members it
/// adds, and the summary of the epoch it will start once merged.
public struct CommitOutput: Sendable {
    /// The Commit as an MLSMessage (PrivateMessage or PublicMessage per the configuration).
    public let commit: MLSMessage
    /// The Welcome for the added members; nil when the commit adds nobody.
    public let welcome: Welcome?
    /// The new epoch's GroupInfo as sent in the Welcome (signed; with the ratchet tree when the
    /// configuration asks for it); nil when the commit adds nobody.
    public let groupInfo: GroupInfo?
    public let summary: CommitSummary
}

/// One of our commits that has been sent but not yet confirmed: the next epoch's state waits
/// here until `mergePendingCommit` (the relay accepted it) or `clearPendingCommit` (it lost).
struct PendingCommit: Sendable {
    /// The commit exactly as sent, to recognize it when it comes back.
    let message: MLSMessage
    let welcome: Welcome?
    let groupInfo: GroupInfo?
    let summary: CommitSummary
    let next: GroupEpochState
}

extension CommitSummary: TLSCodable {
    public func encode(to writer: inout TLSWriter) {
        writer.writeUInt64(epoch)
        committer.encode(to: &writer)
        writer.writeVector { w in
            for p in proposals {
                p.proposal.encode(to: &w)
                p.sender.encode(to: &w)
                w.writeUInt8(p.byReference ? 1 : 0)
            }
        }
        writer.writeVector(added)
        writer.writeVector(removed)
        writer.writeVector { w in for leaf in updated { w.writeUInt32(leaf.value) } }
        writer.writeUInt8(hasPath ? 1 : 0)
        writer.writeUInt8(extensionsChanged ? 1 : 0)
        extensions.encode(to: &writer)
        writer.writeUInt8(removedSelf ? 1 : 0)
    }

    public init(from reader: inout TLSReader) throws {
        func flag(_ r: inout TLSReader) throws -> Bool {
            let v = try r.readUInt8()
            guard v <= 1 else { throw TLSDecodingError.invalidValue(field: "flag", value: UInt64(v)) }
            return v == 1
        }
        epoch = try reader.readUInt64()
        committer = try Member(from: &reader)
        proposals = try reader.readVector { r in
            CommittedProposal(proposal: try Proposal(from: &r), sender: try Member(from: &r), byReference: try flag(&r))
        }
        added = try reader.readVector()
        removed = try reader.readVector()
        updated = try reader.readVector { LeafIndex(try $0.readUInt32()) }
        hasPath = try flag(&reader)
        extensionsChanged = try flag(&reader)
        extensions = try Extensions(from: &reader)
        removedSelf = try flag(&reader)
    }
}

extension Member: TLSCodable {
    public func encode(to writer: inout TLSWriter) {
        writer.writeUInt32(leafIndex.value)
        leafNode.encode(to: &writer)
    }

    public init(from reader: inout TLSReader) throws {
        leafIndex = LeafIndex(try reader.readUInt32())
        leafNode = try LeafNode(from: &reader)
    }
}
