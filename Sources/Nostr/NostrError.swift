/// Everything that can be wrong with Nostr input, in one enum for the module.
///
/// Cases name the field or check that failed and never carry secret material: a bad secret key
/// is reported as `invalidSecretKey`, without its bytes.
public enum NostrError: Error, Equatable, Sendable {
    // Keys and signatures.
    /// A secret key is not 32 bytes, is zero, or is not below the curve order.
    case invalidSecretKey
    /// A public key is not 32 bytes or its x coordinate is not on secp256k1.
    case invalidPublicKey
    /// A signature is not 64 bytes.
    case invalidSignatureLength(Int)
    /// BIP-340 aux randomness must be exactly 32 bytes.
    case invalidAuxRandLength(Int)
    /// libsecp256k1 refused to sign or to compute a shared point.
    case signingFailed
    case ecdhFailed

    // JSON and field-level decoding.
    /// The bytes are not well-formed JSON (the reason says where).
    case malformedJSON(String)
    case expectedObject
    case missingField(String)
    /// A field has the wrong JSON type or a value outside its domain.
    case invalidField(String, reason: String)
    /// A hex field is not lowercase hex of the expected byte length.
    case invalidHex(field: String, expectedBytes: Int)
    case kindOutOfRange(Int64)

    // Event verification.
    /// sha256 of the canonical serialization differs from the stated id.
    case idMismatch
    /// The BIP-340 signature does not verify for the id and pubkey.
    case invalidSignature
    /// A rumor (unsigned by definition) carried a `sig` field.
    case rumorSigned

    // Relay URLs.
    /// A relay URL does not parse as a ws/wss URL; the reason says why.
    case invalidRelayURL(String, reason: String)

    // NIP-19 / bech32.
    case bech32InvalidCharacter
    case bech32MixedCase
    case bech32InvalidLength
    case bech32MissingSeparator
    case bech32InvalidChecksum
    case bech32InvalidPadding
    /// The human-readable part is not the one expected (or not a NIP-19 prefix).
    case nip19UnexpectedPrefix(String)
    /// A NIP-19 TLV record is truncated or a required record is missing or malformed.
    case nip19InvalidTLV(String)

    // NIP-44 v2.
    case nip44PlaintextLength(Int)
    case nip44UnknownVersion(Int)
    case nip44InvalidBase64
    case nip44InvalidPayloadLength(Int)
    case nip44InvalidMAC
    case nip44InvalidPadding
    case nip44InvalidUTF8
    case nip44InvalidNonceLength(Int)
    case nip44InvalidConversationKeyLength(Int)

    // NIP-59 gift wrap.
    case giftWrapWrongKind(Int)
    /// The gift wrap's content did not decrypt (NIP-44) for this recipient.
    indirect case giftWrapUndecryptable(NostrError)
    /// The decrypted seal is not a well-formed, correctly signed event (missing or bad sig,
    /// wrong id, bad JSON); the inner error says which.
    indirect case sealInvalid(NostrError)
    case sealWrongKind(Int)
    case sealTagsNotEmpty
    /// The seal's content did not decrypt (NIP-44) with the seal author's key.
    indirect case sealUndecryptable(NostrError)
    /// The rumor inside the seal is malformed, signed, or has a wrong id.
    indirect case rumorInvalid(NostrError)
    /// seal.pubkey != rumor.pubkey: someone sealed a rumor they did not author.
    case sealAuthorMismatch

    // Filters.
    case invalidFilter(String)
}
