/// A join request received as an inviter, as `invite requests` and `run` show it.
public struct JoinRequestView: Sendable, Equatable {
    /// The rumor's id (what `invite approve` / `invite reject` take).
    public let id: String
    public let mlsGroupID: String
    public let nostrGroupID: String
    public let groupName: String
    /// The joiner's key.
    public let from: String
    /// What the joiner calls itself, if it said.
    public let name: String?
    /// The rumor's created_at.
    public let createdAt: Int64
    /// The id of the KeyPackage event the request carries.
    public let keyPackage: String
    /// `pending`, `approved`, `rejected` or `superseded`.
    public let state: String
    /// The joiner is a member already: it lost its state (restored from a backup whose group
    /// history the relays no longer hold), and approving replaces its leaf.
    public var rejoin = false
}

/// What `join request` sent.
public struct JoinRequestSent: Sendable, Equatable {
    /// The rumor's id: the inviter lists the request under it.
    public let requestID: String
    public let groupID: String
    public let inviter: String
    /// The fresh KeyPackage event the request carries.
    public let keyPackage: String
    /// The relays that accepted the gift wrap.
    public let relays: [String]
}

/// Why a join request cannot be acted on, each naming a CLI error code (Docs/protocols/mesh.md 12 names
/// `key_package_invalid` and `join_refused`). Messages name ids and keys, never secrets.
public enum JoinRequestFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// No pending join request has this id (`unknown_request`).
    case unknownRequest(String)
    /// The request's KeyPackage is not a valid MIP-00 KeyPackage by its sender (`key_package_invalid`).
    case keyPackageInvalid(String)
    /// The request cannot be granted: not our group to administer, or not one we hold (`join_refused`).
    case joinRefused(String)

    public var description: String {
        switch self {
        case .unknownRequest(let m), .keyPackageInvalid(let m), .joinRefused(let m): return m
        }
    }
}
