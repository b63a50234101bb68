import Marmot
import Mesh

/// Why the inviter refuses a nearby join request that opened under the code (Docs/protocols/mesh.md 10.5),
/// and the join-error code the joiner is sent for it. Reasons are typed and quote nothing from
/// the request: a refusal is logged, and logs carry no one's key.
struct NearbyRefusal: Error, Equatable {
    enum Reason: Equatable, Sendable, CustomStringConvertible {
        /// The plaintext is not Whistle's join-request object, or its KeyPackage is not a
        /// 443/30443 event signed by its `pubkey` (the codec's refusal names the rule, not the input).
        case unreadable(JoinRequestError)
        /// The request names another group than the invite's.
        case otherGroup
        /// The KeyPackage event breaks MIP-00 (or its signature, lifetime, ciphersuite…).
        case keyPackageInvalid
        /// The KeyPackage's MLS credential is not the request's `pubkey`.
        case notTheRequestersKeyPackage
        /// We no longer administer the group.
        case notAdmin
        /// The requester is a member already.
        case alreadyMember
        /// The welcome would not fit a gift wrap on the mesh.
        case welcomeTooLarge
        /// The add produced no welcome.
        case noWelcome
        /// Every relay answered no to the commit.
        case relaysRefused

        var description: String {
            switch self {
            case .unreadable(let error): return "not a join request with a KeyPackage by its pubkey: \(error)"
            case .otherGroup: return "the request names another group"
            case .keyPackageInvalid: return "the KeyPackage is not valid"
            case .notTheRequestersKeyPackage: return "the KeyPackage is not the requester's"
            case .notAdmin: return "we no longer administer the group"
            case .alreadyMember: return "the requester is already a member"
            case .welcomeTooLarge: return "the welcome is too large for the mesh"
            case .noWelcome: return "the add made no welcome"
            case .relaysRefused: return "every relay refused the commit"
            }
        }
    }

    let reason: Reason

    init(_ reason: Reason) { self.reason = reason }

    /// The join-error code (10.4) the joiner is sent.
    var code: JoinErrorCode {
        switch reason {
        case .otherGroup, .notAdmin, .alreadyMember: return .joinRefused
        case .unreadable, .keyPackageInvalid, .notTheRequestersKeyPackage: return .keyPackageInvalid
        case .welcomeTooLarge: return .welcomeTooLarge
        case .noWelcome, .relaysRefused: return .joinFailed
        }
    }
}
