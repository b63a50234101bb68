/// Noise_XX_25519_ChaChaPoly_SHA256 (Noise specification rev. 34), one state type per step so
/// that a message can only be processed in the state that expects it:
///
///     XX:  -> e
///          <- e, ee, s, es
///          -> s, se
///
/// Initiator: `NoiseXX.initiate` → `NoiseXXInitiatorSentE` → `readMessage2` →
/// `NoiseXXInitiatorReadResponse` → `writeMessage3` → `NoiseHandshakeResult`.
/// Responder: `NoiseXX.respond` (reads message 1) → `NoiseXXResponderReadE` → `writeMessage2`
/// → `NoiseXXResponderSentResponse` → `readMessage3` → `NoiseHandshakeResult`.
///
/// Every state is a value: keeping one is the pending handshake, dropping it forgets it.
public enum NoiseXX {
    public static let protocolName = "Noise_XX_25519_ChaChaPoly_SHA256"
    public static let maximumMessageLength = 65_535
    static let dhLength = 32
    static let tagLength = 16

    static func initialState(prologue: [UInt8]) -> NoiseSymmetricState {
        var state = NoiseSymmetricState(protocolName: protocolName)
        state.mixHash(prologue)
        return state
    }

    static func dh(_ key: X25519PrivateKey, _ peer: X25519PublicKey) throws(NoiseError) -> [UInt8] {
        do { return try key.sharedSecret(with: peer) } catch { throw .zeroSharedSecret }
    }

    /// Initiator, message 1 (`e`): writes e and the (unencrypted, hashed) payload.
    public static func initiate(
        prologue: [UInt8], staticKey: X25519PrivateKey, ephemeral: X25519PrivateKey, payload: [UInt8]
    ) throws(NoiseError) -> (NoiseXXInitiatorSentE, [UInt8]) {
        var symmetric = initialState(prologue: prologue)
        let e = ephemeral.publicKey.bytes
        symmetric.mixHash(e)
        let body = try symmetric.encryptAndHash(payload)
        let message = e + body
        guard message.count <= maximumMessageLength else { throw .badLength }
        return (NoiseXXInitiatorSentE(symmetric: symmetric, staticKey: staticKey, ephemeral: ephemeral), message)
    }

    /// Responder, message 1: reads e and the payload.
    public static func respond(prologue: [UInt8], staticKey: X25519PrivateKey, message: [UInt8]) throws(NoiseError) -> NoiseXXResponderReadE {
        guard message.count >= dhLength, message.count <= maximumMessageLength else { throw .badLength }
        var symmetric = initialState(prologue: prologue)
        let re = X25519PublicKey(validBytes: Array(message[0..<dhLength]))
        symmetric.mixHash(re.bytes)
        let payload = try symmetric.decryptAndHash(Array(message[dhLength...]))
        return NoiseXXResponderReadE(symmetric: symmetric, staticKey: staticKey, remoteEphemeral: re, payload: payload)
    }
}

/// Initiator after writing message 1, waiting for message 2.
public struct NoiseXXInitiatorSentE: Sendable, Equatable {
    var symmetric: NoiseSymmetricState
    let staticKey: X25519PrivateKey
    let ephemeral: X25519PrivateKey

    /// Reads message 2 (`e, ee, s, es`). On failure nothing changes (this is a value).
    public func readMessage2(_ message: [UInt8]) throws(NoiseError) -> NoiseXXInitiatorReadResponse {
        let fixed = NoiseXX.dhLength + NoiseXX.dhLength + NoiseXX.tagLength
        guard message.count >= fixed + NoiseXX.tagLength, message.count <= NoiseXX.maximumMessageLength else { throw .badLength }
        var state = symmetric
        let re = X25519PublicKey(validBytes: Array(message[0..<32]))
        state.mixHash(re.bytes)
        state.mixKey(try NoiseXX.dh(ephemeral, re))                          // ee
        let rsBytes = try state.decryptAndHash(Array(message[32..<fixed]))   // s
        let rs = X25519PublicKey(validBytes: rsBytes)
        state.mixKey(try NoiseXX.dh(ephemeral, rs))                          // es
        let payload = try state.decryptAndHash(Array(message[fixed...]))
        return NoiseXXInitiatorReadResponse(
            symmetric: state, staticKey: staticKey, ephemeral: ephemeral, remoteEphemeral: re, remoteStatic: rs, payload: payload)
    }
}

/// Initiator after reading message 2: the responder's static key and payload are known and
/// can be checked before message 3 commits to anything.
public struct NoiseXXInitiatorReadResponse: Sendable, Equatable {
    var symmetric: NoiseSymmetricState
    let staticKey: X25519PrivateKey
    let ephemeral: X25519PrivateKey
    let remoteEphemeral: X25519PublicKey
    public let remoteStatic: X25519PublicKey
    public let payload: [UInt8]

    /// Writes message 3 (`s, se`) and finishes.
    public func writeMessage3(payload: [UInt8]) throws(NoiseError) -> (NoiseHandshakeResult, [UInt8]) {
        var state = symmetric
        let s = try state.encryptAndHash(staticKey.publicKey.bytes)
        state.mixKey(try NoiseXX.dh(staticKey, remoteEphemeral))             // se
        let body = try state.encryptAndHash(payload)
        let message = s + body
        guard message.count <= NoiseXX.maximumMessageLength else { throw .badLength }
        return (NoiseHandshakeResult(symmetric: state, remoteStatic: remoteStatic), message)
    }
}

/// Responder after reading message 1.
public struct NoiseXXResponderReadE: Sendable, Equatable {
    var symmetric: NoiseSymmetricState
    let staticKey: X25519PrivateKey
    let remoteEphemeral: X25519PublicKey
    public let payload: [UInt8]

    /// Writes message 2 (`e, ee, s, es`) with the responder's ephemeral key.
    public func writeMessage2(ephemeral: X25519PrivateKey, payload: [UInt8]) throws(NoiseError) -> (NoiseXXResponderSentResponse, [UInt8]) {
        var state = symmetric
        let e = ephemeral.publicKey.bytes
        state.mixHash(e)
        state.mixKey(try NoiseXX.dh(ephemeral, remoteEphemeral))             // ee
        let s = try state.encryptAndHash(staticKey.publicKey.bytes)          // s
        state.mixKey(try NoiseXX.dh(staticKey, remoteEphemeral))             // es
        let body = try state.encryptAndHash(payload)
        let message = e + s + body
        guard message.count <= NoiseXX.maximumMessageLength else { throw .badLength }
        return (NoiseXXResponderSentResponse(symmetric: state, ephemeral: ephemeral), message)
    }
}

/// Responder after writing message 2, waiting for message 3. This (with the ratchet key) is
/// what a responder's pending state keeps.
public struct NoiseXXResponderSentResponse: Sendable, Equatable {
    var symmetric: NoiseSymmetricState
    let ephemeral: X25519PrivateKey

    /// Reads message 3 (`s, se`). On failure nothing changes.
    public func readMessage3(_ message: [UInt8]) throws(NoiseError) -> (NoiseHandshakeResult, [UInt8]) {
        let fixed = NoiseXX.dhLength + NoiseXX.tagLength
        guard message.count >= fixed + NoiseXX.tagLength, message.count <= NoiseXX.maximumMessageLength else { throw .badLength }
        var state = symmetric
        let rsBytes = try state.decryptAndHash(Array(message[0..<fixed]))    // s
        let rs = X25519PublicKey(validBytes: rsBytes)
        state.mixKey(try NoiseXX.dh(ephemeral, rs))                          // se
        let payload = try state.decryptAndHash(Array(message[fixed...]))
        return (NoiseHandshakeResult(symmetric: state, remoteStatic: rs), payload)
    }
}

/// A finished XX handshake: `h`, `ck` at Split() and the authenticated remote static key.
public struct NoiseHandshakeResult: Sendable, Equatable {
    let symmetric: NoiseSymmetricState
    public let remoteStatic: X25519PublicKey

    public var handshakeHash: [UInt8] { symmetric.handshakeHash }
    /// The chaining key at Split(): secret.
    var chainingKey: [UInt8] { symmetric.chainingKeyBytes }

    /// The transport ciphers (initiator → responder, responder → initiator).
    public func split() -> (initiatorToResponder: NoiseCipherState, responderToInitiator: NoiseCipherState) {
        let (a, b) = symmetric.split()
        return (a, b)
    }
}
