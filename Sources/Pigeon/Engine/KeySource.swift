/// Where the engine gets the X25519 key pairs it makes (section 4: an ephemeral at `start`; a
/// ratchet key at handshake2; one of each at handshake1; a ratchet key at handshake3 and at
/// every DH step). Injected, like the clock, so the script vectors can drive the engine with
/// their `ephemeral_keys` and `ratchet_keys`; production uses `SystemKeySource`.
///
/// Transitions take the source `inout` and restore it when they refuse: a key pair made in a
/// refused step is discarded and the next step gets the same one (the vectors count on it).
public protocol PigeonKeySource: Sendable {
    mutating func nextEphemeralKey() -> X25519PrivateKey
    mutating func nextRatchetKey() -> X25519PrivateKey
}

/// Fresh keys from the system CSPRNG (swift-crypto).
public struct SystemKeySource: PigeonKeySource {
    public init() {}
    public mutating func nextEphemeralKey() -> X25519PrivateKey { .generate() }
    public mutating func nextRatchetKey() -> X25519PrivateKey { .generate() }
}

/// Keys given in advance, in order (the vectors' `ephemeral_keys` and `ratchet_keys`). Asked
/// for more than it holds, it sets `exhausted` and hands out CSPRNG keys, so a runner can fail
/// the case instead of the process.
public struct ScriptedKeySource: PigeonKeySource {
    public let ephemeralKeys: [X25519PrivateKey]
    public let ratchetKeys: [X25519PrivateKey]
    public private(set) var ephemeralIndex = 0
    public private(set) var ratchetIndex = 0
    public private(set) var exhausted = false

    public init(ephemeralKeys: [X25519PrivateKey], ratchetKeys: [X25519PrivateKey]) {
        self.ephemeralKeys = ephemeralKeys
        self.ratchetKeys = ratchetKeys
    }

    public mutating func nextEphemeralKey() -> X25519PrivateKey {
        guard ephemeralIndex < ephemeralKeys.count else {
            exhausted = true
            return .generate()
        }
        defer { ephemeralIndex += 1 }
        return ephemeralKeys[ephemeralIndex]
    }

    public mutating func nextRatchetKey() -> X25519PrivateKey {
        guard ratchetIndex < ratchetKeys.count else {
            exhausted = true
            return .generate()
        }
        defer { ratchetIndex += 1 }
        return ratchetKeys[ratchetIndex]
    }
}
