import Foundation
import Nostr

/// Section 6.1: a frame carried in a kind-1590 rumor (inside NIP-59: seal by the sender's `N`,
/// gift wrap by a one-time key). Frames are authenticated end to end; the seal's signer is
/// recorded by the node, never trusted by the engine.
public enum NostrCarrier {
    /// The rumor kind (unassigned in the NIPs registry; never seen outside a seal).
    public static let rumorKind = 1590
    /// Gift-wrap expiration: 30 days for messages, 1 day for handshake frames (seconds).
    public static let messageExpirySeconds: Int64 = 30 * 24 * 3600
    public static let handshakeExpirySeconds: Int64 = 24 * 3600

    /// The rumor for `frame`: pubkey = sender's `N`, created_at = now (s), no tags, content =
    /// padded base64 (RFC 4648) of the frame.
    public static func rumor(frame: [UInt8], sender: PublicKey, now: Int64) throws -> Rumor {
        try Rumor(pubkey: sender, createdAt: now, kind: rumorKind, tags: [], content: Data(frame).base64EncodedString())
    }

    /// The `expiration` tag value for a wrap carrying `frame`, sent at `now` (s).
    public static func expiration(for frame: [UInt8], now: Int64) -> Int64 {
        let isHandshake = frame.count > 1 && frame[1] != FrameType.message.rawValue
        return now + (isHandshake ? handshakeExpirySeconds : messageExpirySeconds)
    }

    /// The frame a kind-1590 rumor carries: `bad_frame` for another kind, content that is not
    /// padded base64, or bytes that are not a well-formed frame.
    public static func frame(from rumor: Rumor) throws(PigeonError) -> [UInt8] {
        guard rumor.kind == rumorKind else { throw .badFrame }
        return try frame(fromContent: rumor.content)
    }

    /// Decodes rumor content: strict padded base64 (no whitespace, no URL alphabet), then the
    /// frame layout.
    public static func frame(fromContent content: String) throws(PigeonError) -> [UInt8] {
        guard content.utf8.count % 4 == 0, content.utf8.count <= 4 * ((Frame.maximumLength + 2) / 3),
              let data = Data(base64Encoded: content)
        else { throw .badFrame }
        let bytes = Array(data)
        // Data accepts some non-canonical encodings (non-zero pad bits): re-encode to refuse them.
        guard Data(bytes).base64EncodedString() == content else { throw .badFrame }
        _ = try Frame(bytes: bytes)
        return bytes
    }
}
