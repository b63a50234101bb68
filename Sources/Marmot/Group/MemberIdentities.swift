import MLS
import Nostr

/// Marmot's identity rules for the members of a group: every leaf carries a BasicCredential
/// whose identity is a Nostr key, and one key holds at most one leaf. Two leaves with one key
/// would make the admin list, the sender of a message and a removal ambiguous — a second leaf
/// under an admin's key would be judged an admin.
public enum MemberIdentities {
    /// Every member has a Nostr identity and no identity appears twice.
    public static func requireUnique(_ members: [Member]) throws {
        var seen = Set<[UInt8]>()
        for member in members {
            guard let identity = member.identity, identity.count == 32 else {
                throw MarmotError.invalidMember("leaf \(member.leafIndex.value) has no 32-byte basic credential")
            }
            guard seen.insert(identity).inserted else {
                throw MarmotError.duplicateIdentity(Hex.encode(identity))
            }
        }
    }

    /// The members a commit leads to keep the rule: what it adds is new to the group (after
    /// its removals) and added once.
    public static func requireUnique(after summary: CommitSummary, members: [Member]) throws {
        let removed = Set(summary.removed.map(\.leafIndex))
        try requireUnique(members.filter { !removed.contains($0.leafIndex) } + summary.added)
    }
}
