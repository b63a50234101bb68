import SQLite

/// A join request received as an inviter (schema v7). Nothing in it is secret: the KeyPackage
/// event is public, and the request is what the joiner chose to tell us.
public struct StoredJoinRequest: Sendable, Equatable {
    /// `superseded`: a newer request from the same joiner for the same group replaced it.
    public enum State: String, Sendable { case pending, approved, rejected, superseded }
    /// The rumor's id (the request id users see).
    public let id: [UInt8]
    /// The gift wrap it first arrived in.
    public let wrapperID: [UInt8]
    public let mlsGroupID: [UInt8]
    /// The joiner's Nostr key.
    public let requester: [UInt8]
    public let name: String?
    /// The KeyPackage event (30443 or 443) as received, verified on receipt and again on approval.
    public let keyPackageJSON: String
    /// The rumor's created_at.
    public let createdAt: Int64
    public let receivedAt: Int64
    public var state: State

    public init(id: [UInt8], wrapperID: [UInt8], mlsGroupID: [UInt8], requester: [UInt8], name: String?, keyPackageJSON: String,
                createdAt: Int64, receivedAt: Int64, state: State) {
        self.id = id
        self.wrapperID = wrapperID
        self.mlsGroupID = mlsGroupID
        self.requester = requester
        self.name = name
        self.keyPackageJSON = keyPackageJSON
        self.createdAt = createdAt
        self.receivedAt = receivedAt
        self.state = state
    }
}

/// Join requests awaiting the inviter's decision, and those already decided.
public struct JoinRequestRepository {
    let transaction: StoreTransaction

    /// Stores a request; returns false (keeping the first) when one with this id exists.
    @discardableResult
    public func insert(_ r: StoredJoinRequest) throws -> Bool {
        try require32(r.id, "the request id")
        try require32(r.wrapperID, "the gift wrap id")
        try require32(r.requester, "the requester key")
        return try transaction.connection().execute(
            """
            INSERT OR IGNORE INTO join_requests (id, wrapper_id, mls_group_id, requester, name, key_package_json, created_at, received_at, state)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.blob(r.id), .blob(r.wrapperID), .blob(r.mlsGroupID), .blob(r.requester), r.name.map { .text($0) } ?? .null,
             .text(r.keyPackageJSON), .integer(r.createdAt), .integer(r.receivedAt), .text(r.state.rawValue)]) > 0
    }

    public func get(id: [UInt8]) throws -> StoredJoinRequest? {
        try transaction.connection().queryFirst("\(Self.select) WHERE id = ?", [.blob(id)], row: Self.row)
    }

    /// Requests in `state` (all when nil), optionally of one group, oldest first.
    public func list(state: StoredJoinRequest.State? = nil, mlsGroupID: [UInt8]? = nil) throws -> [StoredJoinRequest] {
        var conditions: [String] = []
        var values: [SQLiteValue] = []
        if let state {
            conditions.append("state = ?")
            values.append(.text(state.rawValue))
        }
        if let mlsGroupID {
            conditions.append("mls_group_id = ?")
            values.append(.blob(mlsGroupID))
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return try transaction.connection().query("\(Self.select)\(filter) ORDER BY created_at, received_at, id", values, row: Self.row)
    }

    public func delete(id: [UInt8]) throws {
        try transaction.connection().execute("DELETE FROM join_requests WHERE id = ?", [.blob(id)])
    }

    /// Keeps at most `limit` rows: the oldest settled ones go first, then the oldest pending.
    public func cap(_ limit: Int) throws {
        try transaction.connection().execute(
            """
            DELETE FROM join_requests WHERE id NOT IN
              (SELECT id FROM join_requests ORDER BY state = 'pending' DESC, received_at DESC, id DESC LIMIT ?)
            """, [.int(limit)])
    }

    public func count() throws -> Int {
        try transaction.connection().queryFirst("SELECT COUNT(*) FROM join_requests") { $0.int(0) } ?? 0
    }

    public func setState(id: [UInt8], _ state: StoredJoinRequest.State) throws {
        try transaction.connection().execute("UPDATE join_requests SET state = ? WHERE id = ?", [.text(state.rawValue), .blob(id)])
    }

    static let select = """
        SELECT id, wrapper_id, mls_group_id, requester, name, key_package_json, created_at, received_at, state FROM join_requests
        """

    static func row(_ s: SQLiteStatement) throws -> StoredJoinRequest {
        guard let state = StoredJoinRequest.State(rawValue: s.text(8) ?? "") else {
            throw StoreError.storeCorrupt("a join request has an unknown state")
        }
        return StoredJoinRequest(id: s.blob(0) ?? [], wrapperID: s.blob(1) ?? [], mlsGroupID: s.blob(2) ?? [], requester: s.blob(3) ?? [],
                                 name: s.isNull(4) ? nil : s.text(4), keyPackageJSON: s.text(5) ?? "", createdAt: s.int64(6),
                                 receivedAt: s.int64(7), state: state)
    }
}
