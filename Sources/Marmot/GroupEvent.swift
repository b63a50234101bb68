import Crypto
import MLS
import Nostr

/// A kind-445 group event whose envelope passed MDK 0.8.0's checks (`validate_event`,
/// `extract_nostr_group_id`): right kind, `created_at` inside the window, exactly one `h` tag
/// naming a 32-byte group id, and content that decodes to a nonce, a ciphertext and a tag.
/// Its payload is still encrypted; only `decrypt(using:)` yields the MLS message.
public struct ValidatedGroupEvent: Hashable, Sendable {
    public let event: Event
    /// The `nostr_group_id` (from the `h` tag) that selects the group.
    public let nostrGroupID: NostrGroupID
    /// The decoded content: 12-byte nonce, then ChaCha20-Poly1305 ciphertext and 16-byte tag.
    public let payload: [UInt8]

    /// Tries each exporter secret in order (the group's current epoch first, then up to
    /// `GroupEvent.pastEpochLookback` earlier epochs, newest first) until one authenticates the
    /// payload, then decodes exactly one MLSMessage from the plaintext.
    public func decrypt(using exporterSecrets: [Secret]) throws -> DecryptedGroupEvent {
        for secret in exporterSecrets where secret.count != GroupEvent.exporterSecretLength {
            throw MarmotError.exporterSecretLength(secret.count)
        }
        guard let box = try? ChaChaPoly.SealedBox(combined: payload) else { throw MarmotError.groupEventUndecryptable }
        for (index, secret) in exporterSecrets.enumerated() {
            guard let plaintext = try? ChaChaPoly.open(box, using: secret.symmetricKey) else { continue }
            let bytes = Array(plaintext)
            do {
                let message = try MLSMessage(tlsSerialized: bytes)
                return DecryptedGroupEvent(event: event, nostrGroupID: nostrGroupID, message: message,
                                           messageBytes: bytes, secretIndex: index)
            } catch let error as TLSDecodingError {
                throw MarmotError.groupEventMessageDecoding(error)
            }
        }
        throw MarmotError.groupEventUndecryptable
    }
}

/// A group event whose payload authenticated under one of the group's exporter secrets. The
/// MLS message itself is not yet processed (framing, signatures, epoch): that is the group's job.
public struct DecryptedGroupEvent: Hashable, Sendable {
    public let event: Event
    public let nostrGroupID: NostrGroupID
    public let message: MLSMessage
    /// The exact decrypted bytes (what the sender serialized).
    public let messageBytes: [UInt8]
    /// Which of the offered exporter secrets opened it (0 = the first, normally the current epoch).
    public let secretIndex: Int
}

/// MIP-03 group events (kind 445) as MDK ≥ 0.7 writes them: content =
/// base64(nonce ‖ ChaCha20-Poly1305(exporter_secret, nonce, MLSMessage, aad = "")), with
/// exporter_secret = MLS-Exporter("marmot", "group-event", 32) of the sender's epoch, signed by
/// a fresh random key, tagged `h` (the nostr_group_id) and `encoding`.
public enum GroupEvent {
    /// The MLS-Exporter label and context of the encryption key.
    public static let exporterLabel = "marmot"
    public static let exporterContext: [UInt8] = Array("group-event".utf8)
    public static let exporterSecretLength = 32
    /// Past epochs whose exporter secrets a receiver keeps and tries (MDK's DEFAULT_EPOCH_LOOKBACK).
    public static let pastEpochLookback = 5
    /// MDK's defaults: events more than 5 minutes ahead or 45 days behind are refused.
    public static let defaultMaxFutureSkew: Int64 = 300
    public static let defaultMaxAge: Int64 = 45 * 24 * 60 * 60
    /// Nonce and Poly1305 tag: the content of an empty plaintext.
    public static let minimumPayloadLength = 28
    static let nonceLength = 12

    /// Encrypts `message` for the group and signs the event with a one-time key drawn from
    /// `rng` (as is the nonce). `expiration` adds NIP-40's tag, the one extra tag MDK allows.
    public static func seal<R: RandomNumberGenerator>(
        message: MLSMessage, exporterSecret: Secret, nostrGroupID: [UInt8], createdAt: Int64,
        expiration: Int64? = nil, rng: inout R
    ) throws -> Event {
        try seal(messageBytes: message.tlsSerialized, exporterSecret: exporterSecret, nostrGroupID: nostrGroupID,
                 createdAt: createdAt, expiration: expiration, rng: &rng)
    }

    /// As above for an already serialized MLSMessage.
    public static func seal<R: RandomNumberGenerator>(
        messageBytes: [UInt8], exporterSecret: Secret, nostrGroupID: [UInt8], createdAt: Int64,
        expiration: Int64? = nil, rng: inout R
    ) throws -> Event {
        guard exporterSecret.count == exporterSecretLength else { throw MarmotError.exporterSecretLength(exporterSecret.count) }
        guard nostrGroupID.count == 32 else { throw MarmotError.invalidTag("h", reason: "nostr_group_id must be 32 bytes") }
        let nonceBytes = rng.randomBytes(nonceLength)
        guard let nonce = try? ChaChaPoly.Nonce(data: nonceBytes),
              let box = try? ChaChaPoly.seal(messageBytes, using: exporterSecret.symmetricKey, nonce: nonce)
        else { throw MarmotError.groupEventSealFailed }
        var tags: [[String]] = [["h", Hex.encode(nostrGroupID)], ["encoding", MarmotTag.base64]]
        if let expiration { tags.append(["expiration", String(expiration)]) }
        let signer = Keys.generate(using: &rng)
        return try Event.sign(kind: MarmotKind.groupEvent, content: StrictBase64.encode(Array(box.combined)), tags: tags,
                              createdAt: createdAt, keys: signer, rng: &rng)
    }

    /// MDK's receiver checks on the envelope, in its order: kind, `created_at` window against
    /// the caller's clock, exactly one `h` tag of 64 hex characters; then the content must be
    /// base64 of at least 28 bytes. The `encoding` tag is not required (MDK uses it only to
    /// rule out the pre-0.7 NIP-44 format, which Burrow does not read).
    public static func validate(
        _ event: Event, now: Int64, maxFutureSkew: Int64 = defaultMaxFutureSkew, maxAge: Int64 = defaultMaxAge
    ) throws -> ValidatedGroupEvent {
        guard event.kind == MarmotKind.groupEvent else {
            throw MarmotError.wrongKind(expected: [MarmotKind.groupEvent], actual: event.kind)
        }
        let (latest, overflow) = now.addingReportingOverflow(maxFutureSkew)
        if !overflow, event.createdAt > latest { throw MarmotError.groupEventFromFuture(createdAt: event.createdAt, now: now) }
        let earliest = now > maxAge ? now - maxAge : 0
        guard event.createdAt >= earliest else { throw MarmotError.groupEventTooOld(createdAt: event.createdAt, now: now) }

        let hTags = TagRules.all(event.tags, "h")
        guard !hTags.isEmpty else { throw MarmotError.missingTag("h") }
        guard hTags.count == 1 else { throw MarmotError.invalidTag("h", reason: "\(hTags.count) h tags, exactly one allowed") }
        guard let groupHex = TagRules.content(hTags[0]) else { throw MarmotError.invalidTag("h", reason: "no value") }
        guard groupHex.utf8.count == 64, let nostrGroupID = try? Hex.decode(groupHex, length: 32) else {
            throw MarmotError.invalidTag("h", reason: "not 64 hex characters")
        }

        let payload = try StrictBase64.decode(event.content, field: "content")
        guard payload.count >= minimumPayloadLength else { throw MarmotError.groupEventContentTooShort(payload.count) }
        return ValidatedGroupEvent(event: event, nostrGroupID: NostrGroupID(nostrGroupID), payload: payload)
    }
}
