/// What the engine's transitions produce.

/// `start`: the handshake1 to send (again, if a pending one for the contact was still alive).
public struct StartOutput: Sendable, Equatable {
    public let sessionID: SessionID
    public let frame: [UInt8]
    /// True when an unexpired pending handshake was reused (its bytes are resent).
    public let resent: Bool
}

/// The keys of a new session (vectors: `session_keys`). `h` and the binding are public; the
/// chaining key and the ratchet root are secrets and stay `SecretBytes`.
public struct SessionKeys: Sendable, Equatable {
    public let handshakeHash: [UInt8]
    public let chainingKey: SecretBytes
    public let ratchetRoot: SecretBytes
    public let binding: [UInt8]
}

/// A session a handshake frame established.
public struct EstablishedSession: Sendable, Equatable {
    public let id: SessionID
    public let contact: Ed25519PublicKey
    public let role: SessionRole
    public let keys: SessionKeys
    /// Whether it became the contact's current session (else it is kept as previous).
    public let isCurrent: Bool
}

/// A message frame that decrypted. `content` is nil when the plaintext was refused
/// (`bad_plaintext`); `refusal` then says why. A kind-3 card that was refused
/// (`bad_card`, `bad_signature`, `identity_mismatch`, `card_outdated`) has both. Either way the
/// message key is consumed and the new ratchet state is in the transition.
public struct ReceivedMessage: Sendable, Equatable {
    public let sessionID: SessionID
    public let contact: Ed25519PublicKey
    public let content: MessageContent?
    public let refusal: PigeonError?
}

/// A held frame processed after its handshake3.
public struct ReleasedFrame: Sendable, Equatable {
    public let frame: [UInt8]
    public let result: Result<ReceivedMessage, PigeonError>
}

/// `deliver`: everything one incoming frame caused.
public struct DeliverOutput: Sendable, Equatable {
    /// Frames to send in reply, in order (handshake2, handshake3, or a stored copy of one).
    public internal(set) var outputs: [[UInt8]] = []
    /// A copy of a handshake frame already processed (answered from storage, or ignored).
    public internal(set) var duplicate = false
    /// The session a handshake2 or handshake3 established.
    public internal(set) var established: EstablishedSession?
    /// A handshake3 from an unknown identity made it a contact in state `request`.
    public internal(set) var contactRequest = false
    /// The message frame was held for a pending handshake.
    public internal(set) var held = false
    /// The message a message frame carried.
    public internal(set) var message: ReceivedMessage?
    /// Held frames processed after the handshake3 that established their session.
    public internal(set) var released: [ReleasedFrame] = []
    /// The responder accepted a handshake3: the node should send an ack (content kind 0) on it.
    public internal(set) var ackDue = false

    public init() {}
}

/// `send`: the frames to send, in order (the stored handshake3 first while the session is
/// unconfirmed), and the encoded content.
public struct SendOutput: Sendable, Equatable {
    public let sessionID: SessionID
    public let frames: [[UInt8]]
    public let content: [UInt8]
    public let paddedLength: Int
}
