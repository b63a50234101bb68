/// The single identity row.
public struct IdentityRepository {
    let transaction: StoreTransaction

    /// The stored identity, or nil before one was set.
    public func get() throws -> StoredIdentity? {
        try transaction.connection().queryFirst("SELECT secret_key, created_at FROM identity WHERE id = 1") {
            StoredIdentity(secretKey: $0.blob(0) ?? [], createdAt: $0.int64(1))
        }
    }

    /// Stores the identity, replacing any previous one.
    public func set(secretKey: [UInt8], createdAt: Int64 = StoreClock.now()) throws {
        try require32(secretKey, "the secret key")
        try transaction.connection().execute(
            "INSERT OR REPLACE INTO identity (id, secret_key, created_at) VALUES (1, ?, ?)",
            [.blob(secretKey), .integer(createdAt)])
    }
}
