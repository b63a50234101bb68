/// `EncryptedGroupSecrets` (RFC 9420 §12.4.3.1): one new member's GroupSecrets, HPKE-encrypted
/// to the init key of the KeyPackage named by `newMember`.
public struct EncryptedGroupSecrets: Hashable, Sendable, TLSCodable {
    /// `KeyPackageRef new_member`: RefHash of the KeyPackage the secrets are for.
    public var newMember: [UInt8]
    public var encryptedGroupSecrets: HPKECiphertext

    public init(newMember: [UInt8], encryptedGroupSecrets: HPKECiphertext) {
        self.newMember = newMember
        self.encryptedGroupSecrets = encryptedGroupSecrets
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeOpaque(newMember)
        encryptedGroupSecrets.encode(to: &writer)
    }

    public init(from reader: inout TLSReader) throws {
        newMember = try reader.readOpaque()
        encryptedGroupSecrets = try HPKECiphertext(from: &reader)
    }
}

/// `Welcome` (RFC 9420 §12.4.3.1): what a committer sends to the members it adds.
public struct Welcome: Hashable, Sendable, TLSCodable {
    /// The suite as carried; processing requires 0x0001.
    public var cipherSuite: CipherSuite
    public var secrets: [EncryptedGroupSecrets]
    /// The GroupInfo, AEAD-encrypted under keys derived from the welcome secret.
    public var encryptedGroupInfo: [UInt8]

    public init(cipherSuite: CipherSuite = .mls128DHKEMX25519AES128GCMSHA256Ed25519, secrets: [EncryptedGroupSecrets], encryptedGroupInfo: [UInt8]) {
        self.cipherSuite = cipherSuite
        self.secrets = secrets
        self.encryptedGroupInfo = encryptedGroupInfo
    }

    /// The entry for a KeyPackage reference, if this Welcome addresses it.
    public func secrets(for keyPackageRef: [UInt8]) -> EncryptedGroupSecrets? {
        secrets.first { $0.newMember == keyPackageRef }
    }

    public func encode(to writer: inout TLSWriter) {
        cipherSuite.encode(to: &writer)
        writer.writeVector(secrets)
        writer.writeOpaque(encryptedGroupInfo)
    }

    public init(from reader: inout TLSReader) throws {
        cipherSuite = try CipherSuite(from: &reader)
        secrets = try reader.readVector()
        encryptedGroupInfo = try reader.readOpaque()
    }
}
