import MLS
import Nostr

/// Everything that can be wrong with Marmot input, in one enum for the module.
///
/// Each case names the event part or rule that failed (mirroring the check MDK 0.8.0 makes)
/// and never carries secret material: exporter secrets, keys and plaintexts stay out of errors.
public enum MarmotError: Error, Equatable, Sendable {
    // MARK: Shared event rules

    /// The event's kind is not one this decoder accepts.
    case wrongKind(expected: [Int], actual: Int)
    /// A tag the rule set requires is absent (named by its first element).
    case missingTag(String)
    /// A tag is present but its shape or value breaks a rule; the reason says which.
    case invalidTag(String, reason: String)
    /// A content field is not strict standard base64 (RFC 4648, padded, canonical).
    case invalidBase64(field: String)
    /// A relay URL does not parse as a ws/wss URL; the reason says why.
    case invalidRelayURL(String, reason: String)

    // MARK: NostrGroupData extension (0xF2EE)

    /// The extension body did not decode (truncated, bad varint, wrong vector length…).
    case groupDataDecoding(TLSDecodingError)
    /// Version 0 is not a valid NostrGroupData version.
    case groupDataVersionZero
    /// Bytes followed a version-1/2/3 body (only versions above 3 may append fields).
    case groupDataTrailingBytes(version: UInt16, count: Int)
    /// A text field (name, description or a relay) is not valid UTF-8.
    case groupDataInvalidUTF8(field: String)
    /// An optional fixed-size field is neither empty nor its required size.
    case groupDataFieldLength(field: String, expected: Int, actual: Int)
    /// `disappearing_message_secs` is present but zero (MDK writes "off" as empty).
    case groupDataDisappearingZero
    /// A value given to the encoder cannot be represented (e.g. a nostr_group_id not 32 bytes).
    case groupDataUnencodable(String)

    // MARK: KeyPackage events (kind 30443 / 443)

    /// The content decoded from base64 is not a TLS `KeyPackage`.
    case keyPackageDecoding(TLSDecodingError)
    /// The KeyPackage failed RFC 9420 validation (signatures, suite, lifetime…).
    case keyPackageInvalid(MLSError)
    /// The leaf credential is not a BasicCredential.
    case keyPackageCredentialNotBasic
    /// The BasicCredential identity is not 32 bytes (MDK rejects the old 64-byte hex form).
    case keyPackageIdentityLength(Int)
    /// The BasicCredential identity is not the event's author (`KeyPackageIdentityMismatch`).
    case keyPackageIdentityMismatch
    /// The `i` tag is not the KeyPackageRef of the content.
    case keyPackageReferenceMismatch

    // MARK: Welcome rumors (kind 444)

    /// A welcome rumor needs at least three tags (relays, e, encoding).
    case welcomeTooFewTags(Int)
    /// The content is not a TLS `MLSMessage`.
    case welcomeDecoding(TLSDecodingError)
    /// The content is an MLSMessage of another wire format (value given).
    case welcomeNotWelcome(wireFormat: UInt16)

    // MARK: Group events (kind 445)

    /// `created_at` is more than the allowed skew ahead of the caller's clock.
    case groupEventFromFuture(createdAt: Int64, now: Int64)
    /// `created_at` is older than the maximum event age.
    case groupEventTooOld(createdAt: Int64, now: Int64)
    /// The decoded content is shorter than a nonce and a Poly1305 tag (28 bytes).
    case groupEventContentTooShort(Int)
    /// An exporter secret offered for decryption is not 32 bytes.
    case exporterSecretLength(Int)
    /// No candidate exporter secret authenticated the content (wrong epoch, other group, tampered).
    case groupEventUndecryptable
    /// The decrypted bytes are not exactly one TLS `MLSMessage`.
    case groupEventMessageDecoding(TLSDecodingError)
    /// The nonce source failed to produce a usable ChaCha20-Poly1305 seal.
    case groupEventSealFailed

    // MARK: Inner application events (rumors inside MLS application messages)

    /// The application payload is not a well-formed rumor (bad JSON, wrong id, signed…).
    case innerEventInvalid(NostrError)
    /// The rumor's pubkey is not the MLS sender's identity (`AuthorMismatch`).
    case innerEventAuthorMismatch
    /// A payload of the given inner kind is malformed; `field` names the member at fault.
    case invalidPayload(kind: Int, field: String, reason: String)

    // MARK: Groups (admin policy and lifecycle)

    /// The group's GroupContext lacks the Nostr Group Data extension (0xF2EE).
    case groupDataMissing
    /// A commit breaks MDK's receiver-side rules (only admins commit, except a pure self-update
    /// or a SelfRemove-only commit; never zero admins); the reason says which.
    case commitNotAuthorized(String)
    /// The operation needs this member to be an admin.
    case notAdmin
    /// The operation would leave the group without an admin.
    case lastAdmin
    /// A key named in an operation is not a member of the group (hex key).
    case notAMember(String)
    /// A key named in an operation already holds a leaf of the group (hex key).
    case alreadyAMember(String)
    /// A leaf lacks what Marmot requires of a member (a 32-byte basic credential).
    case invalidMember(String)
    /// One identity (hex key) would hold two leaves of the group: in a tree, by an Add, or by
    /// an Update that changes a credential.
    case duplicateIdentity(String)
    /// A welcome's author (the seal's signer) is not the member who signed its GroupInfo, or
    /// not an admin of the group: nobody vouches for the invitation.
    case welcomeInviterMismatch(String)
    /// This member is no longer in the group (removed, or its leave took effect).
    case groupInactive

    // MARK: MLS

    /// The MLS layer refused the message or the operation; the inner error says why.
    case mls(MLSError)

    /// Runs `body`, presenting an MLS error as `.mls`: Marmot's callers handle one error type.
    static func wrappingMLS<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as MLSError { throw MarmotError.mls(error) }
    }
}
