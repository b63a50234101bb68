/// Everything the mesh refuses or fails at, one case per name in `Docs/protocols/mesh.md`. A receiver drops a
/// frame and counts it under `rawValue` (section 4: "dropped and counted under that name"), so
/// the raw values are the spec's refusal codes, byte for byte, and `burrow mesh status` can
/// print them as they are. Cases never carry input bytes or secrets: a refusal says *what* was
/// wrong, not the data.
public enum MeshError: String, Error, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    // Section 4, the receive checks, in order.
    case frameTooLarge = "frame_too_large"
    case rateLimited = "rate_limited"
    case truncated
    case badVersion = "bad_version"
    case unknownType = "unknown_type"
    case badTTL = "bad_ttl"
    case badFlags = "bad_flags"
    case badRecipient = "bad_recipient"
    case payloadTooLarge = "payload_too_large"
    case trailingBytes = "trailing_bytes"
    case senderMismatch = "sender_mismatch"
    case future
    case stale
    case duplicate
    case badSignature = "bad_signature"
    case badPayload = "bad_payload"
    case badEvent = "bad_event"
    case badBeacon = "bad_beacon"

    // Section 5, fragments.
    case fragmentTotal = "fragment_total"
    case fragmentIndex = "fragment_index"
    case fragmentType = "fragment_type"
    case badFragment = "bad_fragment"
    case reassemblyTooLarge = "reassembly_too_large"
    case reassemblyMismatch = "reassembly_mismatch"

    // Section 10, nearby invites (join-error codes and local outcomes).
    /// A received CPace share is non-canonical or the identity, or the shared point is.
    case badPoint = "bad_point"
    case inviteExpired = "invite_expired"
    case wrongCode = "wrong_code"
    case tooManyAttempts = "too_many_attempts"
    case inviteClosed = "invite_closed"
    case inviteBusy = "invite_busy"
    case keyPackageInvalid = "key_package_invalid"
    case joinRefused = "join_refused"
    case joinFailed = "join_failed"
    case welcomeTooLarge = "welcome_too_large"
    case timeout

    // Local misuse: an outgoing value that the spec does not allow (never from the air).
    /// A value this node was asked to send breaks a limit of the spec (length, range).
    case invalidArgument = "invalid_argument"

    public var description: String { rawValue }
}
