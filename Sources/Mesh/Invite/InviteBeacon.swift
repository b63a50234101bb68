import Crypto
import Nostr

/// An invite beacon (10.2) as decoded from the air: lengths sound, Nostr signature unchecked.
public struct UnverifiedBeacon: Sendable, Hashable {
    public let inviteID: [UInt8]
    public let expiresAt: UInt64
    public let inviter: [UInt8]
    public let attemptsLeft: UInt8
    public let name: String
    public let signature: [UInt8]

    public static let maxAttempts: UInt8 = 5
    public static let maxNameBytes = 64

    /// `bad_payload` for bad lengths or ranges (name 1–64 bytes of UTF-8, attempts 0–5).
    public static func decode(_ payload: [UInt8]) throws(MeshError) -> UnverifiedBeacon {
        var reader = ByteReader(payload)
        guard let inviteID = try? reader.take(16), let expiresAt = try? reader.u64(), let inviter = try? reader.take(32),
              let attempts = try? reader.u8(), attempts <= maxAttempts, let nameLength = try? reader.u8(),
              (1...maxNameBytes).contains(Int(nameLength)), let nameBytes = try? reader.take(Int(nameLength)),
              let name = String(validatingUTF8: nameBytes), let signature = try? reader.take(64), reader.isAtEnd
        else { throw .badPayload }
        return UnverifiedBeacon(
            inviteID: inviteID, expiresAt: expiresAt, inviter: inviter, attemptsLeft: attempts, name: name, signature: signature
        )
    }

    /// `SHA-256("burrow-mesh-v1:beacon" ‖ invite_id ‖ u64(expires_at) ‖ mesh_key ‖ u8(name_len) ‖ name)`.
    public static func digest(inviteID: [UInt8], expiresAt: UInt64, meshKey: [UInt8], name: String) -> [UInt8] {
        var message = Domain.beacon + inviteID
        message.appendU64(expiresAt)
        message += meshKey
        let nameBytes = Array(name.utf8)
        message.append(UInt8(truncatingIfNeeded: nameBytes.count))
        message += nameBytes
        return Array(SHA256.hash(data: message))
    }

    /// The BIP-340 signature by `inviter` over the digest, binding the carrying packet's mesh
    /// key: a beacon re-sent under another key is `bad_beacon`.
    public func verified(meshKey: [UInt8]) throws(MeshError) -> InviteBeacon {
        guard let key = try? PublicKey(bytes: inviter),
              Schnorr.verify(
                  signature: signature,
                  message: Self.digest(inviteID: inviteID, expiresAt: expiresAt, meshKey: meshKey, name: name),
                  publicKey: key)
        else { throw .badBeacon }
        return InviteBeacon(
            inviteID: inviteID, expiresAt: expiresAt, inviter: key, attemptsLeft: attemptsLeft, name: name, signature: signature
        )
    }
}

/// A beacon whose signature verified: the listed inviter is genuine and bound to the mesh key
/// that sent it.
public struct InviteBeacon: Sendable, Hashable {
    public let inviteID: [UInt8]
    public let expiresAt: UInt64
    /// The admin's x-only Nostr key.
    public let inviter: PublicKey
    public let attemptsLeft: UInt8
    /// The group name.
    public let name: String
    public let signature: [UInt8]

    /// Signs a beacon for `meshKey` (the inviter node's current mesh public key).
    public static func sign(
        inviteID: [UInt8], expiresAt: UInt64, attemptsLeft: UInt8, name: String, meshKey: [UInt8], keys: Keys, auxRand: [UInt8]
    ) throws(MeshError) -> InviteBeacon {
        guard inviteID.count == 16, attemptsLeft <= UnverifiedBeacon.maxAttempts,
              (1...UnverifiedBeacon.maxNameBytes).contains(name.utf8.count), meshKey.count == 32
        else { throw .invalidArgument }
        let digest = UnverifiedBeacon.digest(inviteID: inviteID, expiresAt: expiresAt, meshKey: meshKey, name: name)
        guard let signature = try? keys.sign(digest, auxRand: auxRand) else { throw .invalidArgument }
        return InviteBeacon(
            inviteID: inviteID, expiresAt: expiresAt, inviter: keys.publicKey, attemptsLeft: attemptsLeft, name: name,
            signature: signature
        )
    }

    /// The same signed beacon with another attempt count (the count is not signed: it is a hint).
    public func with(attemptsLeft: UInt8) -> InviteBeacon {
        InviteBeacon(inviteID: inviteID, expiresAt: expiresAt, inviter: inviter, attemptsLeft: attemptsLeft, name: name,
                     signature: signature)
    }

    public var payload: [UInt8] {
        var out = inviteID
        out.appendU64(expiresAt)
        out += inviter.bytes
        let nameBytes = Array(name.utf8)
        out += [attemptsLeft, UInt8(truncatingIfNeeded: nameBytes.count)]
        out += nameBytes
        out += signature
        return out
    }
}
