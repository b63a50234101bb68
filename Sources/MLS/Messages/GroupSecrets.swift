/// `GroupSecrets` (RFC 9420 §12.4.3.1): the plaintext a new member decrypts from its
/// EncryptedGroupSecrets.
///
/// It holds key material, so it is neither Equatable nor printable: descriptions are redacted
/// and comparisons belong to the key schedule, in constant time.
public struct GroupSecrets: Sendable, TLSCodable, CustomStringConvertible, CustomDebugStringConvertible {
    public var joinerSecret: [UInt8]
    /// `optional<PathSecret> path_secret`: the secret of the lowest common ancestor of the
    /// committer and the new member, when the commit had a path.
    public var pathSecret: [UInt8]?
    public var psks: [PreSharedKeyID]

    public init(joinerSecret: [UInt8], pathSecret: [UInt8]? = nil, psks: [PreSharedKeyID] = []) {
        self.joinerSecret = joinerSecret
        self.pathSecret = pathSecret
        self.psks = psks
    }

    public var description: String {
        "GroupSecrets(joiner_secret: redacted, path_secret: \(pathSecret == nil ? "none" : "redacted"), psks: \(psks.count))"
    }

    public var debugDescription: String { description }

    public func encode(to writer: inout TLSWriter) {
        writer.writeOpaque(joinerSecret)
        if let pathSecret {
            writer.writeUInt8(1)
            writer.writeOpaque(pathSecret)
        } else {
            writer.writeUInt8(0)
        }
        writer.writeVector(psks)
    }

    public init(from reader: inout TLSReader) throws {
        joinerSecret = try reader.readOpaque()
        pathSecret = try reader.readOptional { try $0.readOpaque() }
        psks = try reader.readVector()
    }
}
