/// The RFC 9420 §8 key schedule: from the previous epoch's `init_secret`, the commit secret,
/// the PSK secret and the new GroupContext to the joiner, welcome and epoch secrets.
///
/// ```
/// init_secret_[n-1] ─KDF.Extract(salt)─ commit_secret
///        └─► ExpandWithLabel(., "joiner", GroupContext_[n], Nh) = joiner_secret
/// joiner_secret ─KDF.Extract(salt)─ psk_secret (or 0)       = member secret
///        ├─► DeriveSecret(., "welcome")                       = welcome_secret
///        └─► ExpandWithLabel(., "epoch", GroupContext_[n], Nh) = epoch_secret ─► EpochSecrets
/// ```
///
/// A committer runs it from `joinerSecret`; a new member starts from the joiner secret in its
/// `GroupSecrets`. Both finish with `EpochSecrets(cs, epochSecret:)`.
public enum KeySchedule {
    /// `joiner_secret = ExpandWithLabel(KDF.Extract(init_secret, commit_secret), "joiner", GroupContext_[n], KDF.Nh)`.
    public static func joinerSecret(_ cs: CipherSuiteProvider, initSecret: Secret, commitSecret: Secret,
                                    groupContext: GroupContext) throws -> Secret {
        let prk = cs.kdfExtract(salt: initSecret, ikm: commitSecret)
        return try cs.expandWithLabel(prk, label: "joiner", context: groupContext.tlsSerialized, length: cs.kdfNh)
    }

    /// The intermediate `KDF.Extract(joiner_secret, psk_secret)` both the welcome and the epoch
    /// secret come from. `pskSecret` nil means no PSKs (the all-zero default).
    static func memberSecret(_ cs: CipherSuiteProvider, joinerSecret: Secret, pskSecret: Secret?) -> Secret {
        cs.kdfExtract(salt: joinerSecret, ikm: pskSecret ?? Secret.zero(count: cs.kdfNh))
    }

    /// `welcome_secret = DeriveSecret(KDF.Extract(joiner_secret, psk_secret), "welcome")`.
    public static func welcomeSecret(_ cs: CipherSuiteProvider, joinerSecret: Secret, pskSecret: Secret?) -> Secret {
        cs.deriveSecret(memberSecret(cs, joinerSecret: joinerSecret, pskSecret: pskSecret), label: "welcome")
    }

    /// `epoch_secret = ExpandWithLabel(KDF.Extract(joiner_secret, psk_secret), "epoch", GroupContext_[n], KDF.Nh)`.
    public static func epochSecret(_ cs: CipherSuiteProvider, joinerSecret: Secret, pskSecret: Secret?,
                                   groupContext: GroupContext) throws -> Secret {
        try cs.expandWithLabel(memberSecret(cs, joinerSecret: joinerSecret, pskSecret: pskSecret),
                               label: "epoch", context: groupContext.tlsSerialized, length: cs.kdfNh)
    }

    /// The key and nonce that encrypt a Welcome's GroupInfo (RFC 9420 §12.4.3.1):
    /// `ExpandWithLabel(welcome_secret, "key", "", AEAD.Nk)` and `… "nonce", "", AEAD.Nn)`.
    public static func welcomeKeyAndNonce(_ cs: CipherSuiteProvider, welcomeSecret: Secret) throws -> (key: Secret, nonce: Secret) {
        (try cs.expandWithLabel(welcomeSecret, label: "key", context: [], length: cs.aeadNk),
         try cs.expandWithLabel(welcomeSecret, label: "nonce", context: [], length: cs.aeadNn))
    }

    /// The inputs a group creator feeds the schedule for epoch 0 (RFC 9420 §11, as OpenMLS does):
    /// a fresh random `init_secret` and an all-zero `commit_secret`.
    public static func newGroupInitSecret(_ cs: CipherSuiteProvider, using rng: inout some RandomNumberGenerator) -> Secret {
        rng.randomSecret(cs.kdfNh)
    }

    /// The all-zero commit secret of a commit without an UpdatePath.
    public static func zeroCommitSecret(_ cs: CipherSuiteProvider) -> Secret { Secret.zero(count: cs.kdfNh) }
}

/// The secrets of one epoch, derived from `epoch_secret` (RFC 9420 §8, Table 4).
///
/// A value type that never prints its contents. `init_secret` is the one the *next* epoch's key
/// schedule starts from. The encryption secret seeds this epoch's `SecretTree`.
public struct EpochSecrets: Sendable, Equatable {
    public let cipherSuite: CipherSuiteProvider
    /// `DeriveSecret(epoch_secret, "sender data")`: keys PrivateMessage sender data.
    public let senderDataSecret: Secret
    /// `DeriveSecret(epoch_secret, "encryption")`: the root of the secret tree.
    public let encryptionSecret: Secret
    /// `DeriveSecret(epoch_secret, "exporter")`: the base of MLS-Exporter.
    public let exporterSecret: Secret
    /// `DeriveSecret(epoch_secret, "external")`: seeds the external HPKE key pair.
    public let externalSecret: Secret
    /// `DeriveSecret(epoch_secret, "confirm")`: keys the confirmation tag.
    public let confirmationKey: Secret
    /// `DeriveSecret(epoch_secret, "membership")`: keys PublicMessage membership tags.
    public let membershipKey: Secret
    /// `DeriveSecret(epoch_secret, "resumption")`: this epoch's resumption PSK.
    public let resumptionPSK: Secret
    /// `DeriveSecret(epoch_secret, "authentication")`: what members compare to confirm they agree.
    public let epochAuthenticator: Secret
    /// `DeriveSecret(epoch_secret, "init")`: the next epoch's `init_secret`.
    public let initSecret: Secret

    /// Derives every epoch secret from `epoch_secret`.
    public init(_ cs: CipherSuiteProvider, epochSecret: Secret) {
        cipherSuite = cs
        senderDataSecret = cs.deriveSecret(epochSecret, label: "sender data")
        encryptionSecret = cs.deriveSecret(epochSecret, label: "encryption")
        exporterSecret = cs.deriveSecret(epochSecret, label: "exporter")
        externalSecret = cs.deriveSecret(epochSecret, label: "external")
        confirmationKey = cs.deriveSecret(epochSecret, label: "confirm")
        membershipKey = cs.deriveSecret(epochSecret, label: "membership")
        resumptionPSK = cs.deriveSecret(epochSecret, label: "resumption")
        epochAuthenticator = cs.deriveSecret(epochSecret, label: "authentication")
        initSecret = cs.deriveSecret(epochSecret, label: "init")
    }

    /// Runs the schedule from a joiner secret (committer, or a new member from its Welcome).
    public init(_ cs: CipherSuiteProvider, joinerSecret: Secret, pskSecret: Secret?, groupContext: GroupContext) throws {
        self.init(cs, epochSecret: try KeySchedule.epochSecret(cs, joinerSecret: joinerSecret, pskSecret: pskSecret, groupContext: groupContext))
    }

    /// Restores stored secrets (see `EpochSecrets.encode`); all must be KDF.Nh bytes.
    init(_ cs: CipherSuiteProvider, secrets: [Secret]) throws {
        guard secrets.count == 9 else { throw MLSCryptoError.invalidLength(field: "epoch secrets", expected: 9, actual: secrets.count) }
        for secret in secrets where secret.count != cs.kdfNh {
            throw MLSCryptoError.invalidLength(field: "epoch secret", expected: cs.kdfNh, actual: secret.count)
        }
        cipherSuite = cs
        (senderDataSecret, encryptionSecret, exporterSecret, externalSecret, confirmationKey) =
            (secrets[0], secrets[1], secrets[2], secrets[3], secrets[4])
        (membershipKey, resumptionPSK, epochAuthenticator, initSecret) = (secrets[5], secrets[6], secrets[7], secrets[8])
    }

    /// `MLS-Exporter(Label, Context, Length) =
    /// ExpandWithLabel(DeriveSecret(exporter_secret, Label), "exported", Hash(Context), Length)`.
    public func exporter(label: [UInt8], context: [UInt8], length: Int) throws -> Secret {
        let cs = cipherSuite
        return try cs.expandWithLabel(cs.deriveSecret(exporterSecret, label: label), label: "exported",
                                      context: cs.hash(context), length: length)
    }

    public func exporter(label: String, context: [UInt8], length: Int) throws -> Secret {
        try exporter(label: Array(label.utf8), context: context, length: length)
    }

    /// `external_priv, external_pub = KEM.DeriveKeyPair(external_secret)` (RFC 9420 §8.3).
    public func externalKeyPair() throws -> HPKEKeyPair { try cipherSuite.deriveKeyPair(externalSecret) }

    /// `confirmation_tag = MAC(confirmation_key, confirmed_transcript_hash)` (RFC 9420 §6.1).
    public func confirmationTag(confirmedTranscriptHash: [UInt8]) -> [UInt8] {
        cipherSuite.mac(key: confirmationKey, data: confirmedTranscriptHash)
    }

    /// Checks a received confirmation tag in constant time; throws `invalidMAC`.
    public func verifyConfirmationTag(_ tag: [UInt8], confirmedTranscriptHash: [UInt8]) throws {
        guard cipherSuite.verifyMAC(key: confirmationKey, data: confirmedTranscriptHash, mac: tag) else {
            throw MLSCryptoError.invalidMAC("confirmation_tag")
        }
    }

    /// `membership_tag = MAC(membership_key, AuthenticatedContentTBM)` (RFC 9420 §6.2).
    public func membershipTag(authenticatedContentTBM: [UInt8]) -> [UInt8] {
        cipherSuite.mac(key: membershipKey, data: authenticatedContentTBM)
    }

    /// Checks a PublicMessage membership tag in constant time; throws `invalidMAC`.
    public func verifyMembershipTag(_ tag: [UInt8], authenticatedContentTBM: [UInt8]) throws {
        guard cipherSuite.verifyMAC(key: membershipKey, data: authenticatedContentTBM, mac: tag) else {
            throw MLSCryptoError.invalidMAC("membership_tag")
        }
    }
}

extension EpochSecrets: CustomStringConvertible, CustomReflectable {
    public var description: String { "EpochSecrets(redacted)" }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

extension EpochSecrets: TLSCodable {
    /// Group-state serialization (for the encrypted store, never the wire): the suite id and the
    /// nine secrets. The output holds secrets in the clear.
    public func encode(to writer: inout TLSWriter) {
        writer.writeUInt16(cipherSuite.suite.rawValue)
        for secret in [senderDataSecret, encryptionSecret, exporterSecret, externalSecret, confirmationKey,
                       membershipKey, resumptionPSK, epochAuthenticator, initSecret] {
            secret.withUnsafeBytes { writer.writeOpaque($0) }
        }
    }

    public init(from reader: inout TLSReader) throws {
        let cs = try CipherSuiteProvider(CipherSuite(rawValue: try reader.readUInt16()))
        var secrets: [Secret] = []
        for _ in 0..<9 {
            var bytes = try reader.readOpaque()
            secrets.append(Secret(bytes))
            Secret.wipe(&bytes)
        }
        try self.init(cs, secrets: secrets)
    }
}
