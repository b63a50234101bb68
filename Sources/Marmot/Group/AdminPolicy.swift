import MLS

/// MDK 0.8.0's receiver-side commit authorization (`validate_commit_authorization`): an admin
/// may commit anything that leaves at least one admin; any other member only a pure
/// self-update (its own path, and Update proposals for its own leaf only) or a commit made
/// only of SelfRemove proposals — never both kinds at once.
public enum AdminPolicy {
    public static func authorize(_ summary: CommitSummary, admins: [[UInt8]], members: [Member]) throws {
        guard let committer = summary.committer.identity else {
            throw MarmotError.commitNotAuthorized("the committer has no basic credential")
        }
        if admins.contains(committer) {
            try requireOnlyLeaveRequestsByReference(summary, admins: admins)
            let remaining = try adminsAfter(summary, admins: admins, members: members)
            guard !remaining.isEmpty else { throw MarmotError.commitNotAuthorized("the commit would leave the group without an admin") }
            return
        }
        guard !summary.extensionsChanged else {
            throw MarmotError.commitNotAuthorized("only admins may change the group's extensions")
        }
        let proposals = summary.proposals
        let onlySelfRemoves = !proposals.isEmpty && proposals.allSatisfy {
            if case .selfRemove = $0.proposal { return true }
            return false
        }
        if !onlySelfRemoves {
            let onlyOwnUpdates = proposals.allSatisfy {
                if case .update = $0.proposal { return $0.sender.leafIndex == summary.committer.leafIndex }
                return false
            }
            guard onlyOwnUpdates, summary.hasPath || !proposals.isEmpty else {
                throw MarmotError.commitNotAuthorized("only admins may add, remove or change members")
            }
            return
        }
        let remaining = try adminsAfter(summary, admins: admins, members: members)
        guard !remaining.isEmpty else { throw MarmotError.commitNotAuthorized("the commit would leave the group without an admin") }
    }

    /// An admin's commit may carry, by reference, a non-admin's proposal only when it is that
    /// member's own leave (SelfRemove, or a Remove of its own leaf): anything else a non-admin
    /// proposed (new admins, an Add, a Remove of someone else) would pass on the admin's word.
    static func requireOnlyLeaveRequestsByReference(_ summary: CommitSummary, admins: [[UInt8]]) throws {
        for item in summary.proposals where item.byReference && !(item.sender.identity.map(admins.contains) ?? false) {
            switch item.proposal {
            case .selfRemove: continue
            case .remove(let remove) where remove.removed == item.sender.leafIndex.value: continue
            default:
                throw MarmotError.commitNotAuthorized("an admin's commit carries a non-admin's proposal other than its own leave")
            }
        }
    }

    /// The admins of the epoch the commit starts, restricted to members still in the group.
    static func adminsAfter(_ summary: CommitSummary, admins: [[UInt8]], members: [Member]) throws -> [[UInt8]] {
        var list = admins
        if summary.extensionsChanged {
            guard let data = try NostrGroupData(extensions: summary.extensions) else { throw MarmotError.groupDataMissing }
            list = data.admins
        }
        let removed = Set(summary.removed.compactMap(\.identity))
        let present = Set(members.compactMap(\.identity)).union(summary.added.compactMap(\.identity))
        return list.filter { present.contains($0) && !removed.contains($0) }
    }
}
