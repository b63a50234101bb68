import Crypto

/// RFC 9180 HPKE for DHKEM(X25519, HKDF-SHA256), HKDF-SHA256 and AES-128-GCM, base mode.
///
/// Composed from swift-crypto's X25519, HKDF and AES-GCM because MLS needs what
/// `Crypto.HPKE` does not offer: `DeriveKeyPair` (TreeKEM turns path secrets into node keys,
/// external secrets into external keys) and an explicit ephemeral key for deterministic checks
/// against test vectors. Tests cross-check it against `Crypto.HPKE.Sender`/`Recipient`.
public struct HPKESuite: Hashable, Sendable {
    public let kemID: UInt16
    public let kdfID: UInt16
    public let aeadID: UInt16

    public static let x25519SHA256AES128GCM = HPKESuite(kemID: 0x0020, kdfID: 0x0001, aeadID: 0x0001)

    /// Length of the KEM shared secret, encapsulated key, public key and private key (X25519).
    public var Nsecret: Int { 32 }
    public var Nenc: Int { 32 }
    public var Npk: Int { 32 }
    public var Nsk: Int { 32 }
    public var Nk: Int { 16 }
    public var Nn: Int { 12 }
    public var Nh: Int { 32 }

    /// Mode identifiers (RFC 9180 §5); only `base` is implemented.
    public static let modeBase: UInt8 = 0x00

    // MARK: Labeled KDF (RFC 9180 §4)

    private static let version: [UInt8] = Array("HPKE-v1".utf8)

    /// `"KEM" ‖ I2OSP(kem_id, 2)`.
    var kemSuiteID: [UInt8] { Array("KEM".utf8) + hpkeI2OSP(kemID) }

    /// `"HPKE" ‖ I2OSP(kem_id, 2) ‖ I2OSP(kdf_id, 2) ‖ I2OSP(aead_id, 2)`.
    var hpkeSuiteID: [UInt8] { Array("HPKE".utf8) + hpkeI2OSP(kemID) + hpkeI2OSP(kdfID) + hpkeI2OSP(aeadID) }

    func labeledExtract(suiteID: [UInt8], salt: Secret, label: String, ikm: Secret) -> Secret {
        var labeledIKM = HPKESuite.version + suiteID + Array(label.utf8)
        ikm.withUnsafeBytes { labeledIKM.append(contentsOf: $0) }
        defer { Secret.wipe(&labeledIKM) }
        return HKDFPrimitives.extract(salt: salt, ikm: Secret(labeledIKM))
    }

    func labeledExpand(suiteID: [UInt8], prk: Secret, label: String, info: [UInt8], length: Int) throws -> Secret {
        guard length >= 0, length <= min(Int(UInt16.max), 255 * Nh) else { throw MLSCryptoError.invalidOutputLength(length) }
        let labeledInfo = hpkeI2OSP(UInt16(length)) + HPKESuite.version + suiteID + Array(label.utf8) + info
        return try HKDFPrimitives.expand(prk: prk, info: labeledInfo, length: length)
    }

    // MARK: DHKEM(X25519, HKDF-SHA256) (RFC 9180 §4.1, §7.1)

    /// `DeriveKeyPair(ikm)`: for X25519 any 32 bytes are a valid private key, so no rejection loop.
    public func deriveKeyPair(ikm: Secret) throws -> HPKEKeyPair {
        let prk = labeledExtract(suiteID: kemSuiteID, salt: Secret([]), label: "dkp_prk", ikm: ikm)
        let sk = try labeledExpand(suiteID: kemSuiteID, prk: prk, label: "sk", info: [], length: Nsk)
        return try HPKEKeyPair(privateKey: HPKEPrivateKey(sk))
    }

    /// `GenerateKeyPair()` as `DeriveKeyPair(random(Nsk))` (RFC 9180 §7.1.3).
    public func generateKeyPair(using rng: inout some RandomNumberGenerator) throws -> HPKEKeyPair {
        try deriveKeyPair(ikm: rng.randomSecret(Nsk))
    }

    /// `Encap(pkR)` with the caller's ephemeral key pair (deterministic: tests, vectors).
    public func encap(recipient pkR: HPKEPublicKey, ephemeral: HPKEKeyPair) throws -> (sharedSecret: Secret, enc: [UInt8]) {
        let dh = try diffieHellman(ephemeral.privateKey, pkR)
        let enc = ephemeral.publicKey.bytes
        let sharedSecret = try extractAndExpand(dh: dh, kemContext: enc + pkR.bytes)
        return (sharedSecret, enc)
    }

    /// `Encap(pkR)` with a fresh ephemeral key from `rng`.
    public func encap(recipient pkR: HPKEPublicKey, using rng: inout some RandomNumberGenerator) throws -> (sharedSecret: Secret, enc: [UInt8]) {
        try encap(recipient: pkR, ephemeral: generateKeyPair(using: &rng))
    }

    /// `Decap(enc, skR)`.
    public func decap(enc: [UInt8], recipient skR: HPKEPrivateKey) throws -> Secret {
        guard enc.count == Nenc else { throw MLSCryptoError.invalidLength(field: "HPKE enc", expected: Nenc, actual: enc.count) }
        let dh = try diffieHellman(skR, HPKEPublicKey(enc))
        let pkRm = try skR.publicKey().bytes
        return try extractAndExpand(dh: dh, kemContext: enc + pkRm)
    }

    private func diffieHellman(_ sk: HPKEPrivateKey, _ pk: HPKEPublicKey) throws -> Secret {
        let publicKey = try pk.x25519()
        guard let shared = try? sk.x25519().sharedSecretFromKeyAgreement(with: publicKey) else {
            throw MLSCryptoError.diffieHellmanFailed
        }
        let dh = shared.withUnsafeBytes { Secret(SymmetricKey(data: $0)) }
        // RFC 9180 §7.1.4 / RFC 7748 §6.1: a low-order public key yields the all-zero output,
        // which must be rejected; swift-crypto does not check it.
        guard dh != Secret.zero(count: dh.count) else { throw MLSCryptoError.diffieHellmanFailed }
        return dh
    }

    private func extractAndExpand(dh: Secret, kemContext: [UInt8]) throws -> Secret {
        let prk = labeledExtract(suiteID: kemSuiteID, salt: Secret([]), label: "eae_prk", ikm: dh)
        return try labeledExpand(suiteID: kemSuiteID, prk: prk, label: "shared_secret", info: kemContext, length: Nsecret)
    }

    // MARK: Key schedule and setup (RFC 9180 §5.1)

    /// `KeyScheduleS/R(mode_base, shared_secret, info, "", "")`.
    func keyScheduleBase(sharedSecret: Secret, info: [UInt8]) throws -> HPKEContext {
        let suiteID = hpkeSuiteID
        let pskIDHash = labeledExtract(suiteID: suiteID, salt: Secret([]), label: "psk_id_hash", ikm: Secret([]))
        let infoHash = labeledExtract(suiteID: suiteID, salt: Secret([]), label: "info_hash", ikm: Secret(info))
        let context = [HPKESuite.modeBase] + pskIDHash.unsafeBytes + infoHash.unsafeBytes
        let secret = labeledExtract(suiteID: suiteID, salt: sharedSecret, label: "secret", ikm: Secret([]))
        return HPKEContext(
            suite: self,
            keyScheduleContext: context,
            secret: secret,
            key: try labeledExpand(suiteID: suiteID, prk: secret, label: "key", info: context, length: Nk),
            baseNonce: try labeledExpand(suiteID: suiteID, prk: secret, label: "base_nonce", info: context, length: Nn),
            exporterSecret: try labeledExpand(suiteID: suiteID, prk: secret, label: "exp", info: context, length: Nh)
        )
    }

    /// `SetupBaseS(pkR, info)` with an explicit ephemeral key pair.
    public func setupBaseSender(recipient pkR: HPKEPublicKey, info: [UInt8], ephemeral: HPKEKeyPair) throws -> (enc: [UInt8], context: HPKEContext) {
        let (sharedSecret, enc) = try encap(recipient: pkR, ephemeral: ephemeral)
        return (enc, try keyScheduleBase(sharedSecret: sharedSecret, info: info))
    }

    /// `SetupBaseS(pkR, info)` with a fresh ephemeral key from `rng`.
    public func setupBaseSender(recipient pkR: HPKEPublicKey, info: [UInt8], using rng: inout some RandomNumberGenerator) throws -> (enc: [UInt8], context: HPKEContext) {
        try setupBaseSender(recipient: pkR, info: info, ephemeral: generateKeyPair(using: &rng))
    }

    /// `SetupBaseR(enc, skR, info)`.
    public func setupBaseRecipient(enc: [UInt8], recipient skR: HPKEPrivateKey, info: [UInt8]) throws -> HPKEContext {
        try keyScheduleBase(sharedSecret: decap(enc: enc, recipient: skR), info: info)
    }

    // MARK: Single-shot (RFC 9180 §6.1)

    /// `SealBase(pkR, info, aad, pt)`.
    public func sealBase(recipient pkR: HPKEPublicKey, info: [UInt8], aad: [UInt8], plaintext: [UInt8],
                         using rng: inout some RandomNumberGenerator) throws -> (enc: [UInt8], ciphertext: [UInt8]) {
        var (enc, context) = try setupBaseSender(recipient: pkR, info: info, using: &rng)
        return (enc, try context.seal(aad: aad, plaintext: plaintext))
    }

    /// `SealBase` with an explicit ephemeral key pair (deterministic).
    public func sealBase(recipient pkR: HPKEPublicKey, info: [UInt8], aad: [UInt8], plaintext: [UInt8],
                         ephemeral: HPKEKeyPair) throws -> (enc: [UInt8], ciphertext: [UInt8]) {
        var (enc, context) = try setupBaseSender(recipient: pkR, info: info, ephemeral: ephemeral)
        return (enc, try context.seal(aad: aad, plaintext: plaintext))
    }

    /// `OpenBase(enc, skR, info, aad, ct)`.
    public func openBase(enc: [UInt8], recipient skR: HPKEPrivateKey, info: [UInt8], aad: [UInt8], ciphertext: [UInt8]) throws -> [UInt8] {
        var context = try setupBaseRecipient(enc: enc, recipient: skR, info: info)
        return try context.open(aad: aad, ciphertext: ciphertext)
    }
}

/// An HPKE encryption context (RFC 9180 §5.2): sequence-numbered AEAD and the secret exporter.
///
/// A value type: `seal`/`open` advance the sequence number of this copy only. `open` advances
/// only when authentication succeeds.
public struct HPKEContext: Sendable {
    public let suite: HPKESuite
    /// `mode ‖ psk_id_hash ‖ info_hash` (not secret; exposed for vector checks).
    @_spi(Testing) public let keyScheduleContext: [UInt8]
    @_spi(Testing) public let secret: Secret
    @_spi(Testing) public let key: Secret
    @_spi(Testing) public let baseNonce: Secret
    @_spi(Testing) public let exporterSecret: Secret
    /// The number of messages sealed or opened so far.
    public private(set) var sequenceNumber: UInt64 = 0

    init(suite: HPKESuite, keyScheduleContext: [UInt8], secret: Secret, key: Secret, baseNonce: Secret, exporterSecret: Secret) {
        self.suite = suite
        self.keyScheduleContext = keyScheduleContext
        self.secret = secret
        self.key = key
        self.baseNonce = baseNonce
        self.exporterSecret = exporterSecret
    }

    /// `base_nonce XOR I2OSP(seq, Nn)`.
    @_spi(Testing) public func nonce(sequence: UInt64) -> Secret {
        var nonce = baseNonce.unsafeBytes
        defer { Secret.wipe(&nonce) }
        for i in 0..<8 { nonce[nonce.count - 1 - i] ^= UInt8(truncatingIfNeeded: sequence >> (8 * UInt64(i))) }
        return Secret(nonce)
    }

    public mutating func seal(aad: [UInt8], plaintext: [UInt8]) throws -> [UInt8] {
        guard sequenceNumber < UInt64.max else { throw MLSCryptoError.messageLimitReached }
        let ciphertext = try AES128GCM.seal(key: key, nonce: nonce(sequence: sequenceNumber), aad: aad, plaintext: plaintext)
        sequenceNumber += 1
        return ciphertext
    }

    public mutating func open(aad: [UInt8], ciphertext: [UInt8]) throws -> [UInt8] {
        guard sequenceNumber < UInt64.max else { throw MLSCryptoError.messageLimitReached }
        let plaintext = try AES128GCM.open(key: key, nonce: nonce(sequence: sequenceNumber), aad: aad, ciphertext: ciphertext)
        sequenceNumber += 1
        return plaintext
    }

    /// `Context.Export(exporter_context, L)`.
    public func export(exporterContext: [UInt8], length: Int) throws -> Secret {
        try suite.labeledExpand(suiteID: suite.hpkeSuiteID, prk: exporterSecret, label: "sec", info: exporterContext, length: length)
    }
}

private func hpkeI2OSP(_ value: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] }
