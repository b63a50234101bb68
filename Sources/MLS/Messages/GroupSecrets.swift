/// `GroupSecrets` (RFC 9420 §12.4.3.1): the plaintext a new member decrypts from its
/// EncryptedGroupSecrets.
///
/// The secrets are held as `Secret` (zeroed on release, constant-time equality, redacted in
/// descriptions and reflection).
public struct GroupSecrets: Sendable, Equatable, TLSCodable, CustomStringConvertible, CustomDebugStringConvertible {
    public var joinerSecret: Secret
    /// `optional<PathSecret> path_secret`: the secret of the lowest common ancestor of the
    /// committer and the new member, when the commit had a path.
    public var pathSecret: Secret?
    public var psks: [PreSharedKeyID]

    public init(joinerSecret: Secret, pathSecret: Secret? = nil, psks: [PreSharedKeyID] = []) {
        self.joinerSecret = joinerSecret
        self.pathSecret = pathSecret
        self.psks = psks
    }

    public var description: String {
        "GroupSecrets(joiner_secret: \(joinerSecret), path_secret: \(pathSecret.map { "\($0)" } ?? "none"), psks: \(psks.count))"
    }

    public var debugDescription: String { description }

    public func encode(to writer: inout TLSWriter) {
        joinerSecret.withUnsafeBytes { writer.writeOpaque($0) }
        if let pathSecret {
            writer.writeUInt8(1)
            pathSecret.withUnsafeBytes { writer.writeOpaque($0) }
        } else {
            writer.writeUInt8(0)
        }
        writer.writeVector(psks)
    }

    public init(from reader: inout TLSReader) throws {
        joinerSecret = try GroupSecrets.readSecret(&reader)
        pathSecret = try reader.readOptional { try GroupSecrets.readSecret(&$0) }
        psks = try reader.readVector()
    }

    private static func readSecret(_ reader: inout TLSReader) throws -> Secret {
        var bytes = try reader.readOpaque()
        defer { Secret.wipe(&bytes) }
        return Secret(bytes)
    }
}
