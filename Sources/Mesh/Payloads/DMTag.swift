import Crypto

/// The recipient of a DM (8.3): a daily tag of the addressee's Pigeon identity key, computed
/// from the packet's own timestamp so clocks need not agree. It keeps the key off the air and
/// changes every UTC day; anyone holding the key can compute it.
public enum DMTag {
    public static let dayMilliseconds: UInt64 = 86_400_000

    public static func tag(identityKey: [UInt8], timestamp: UInt64) -> MeshID {
        var message = Domain.dmTag
        message.appendU32(UInt32(truncatingIfNeeded: timestamp / dayMilliseconds))
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: identityKey))
        return MeshID(Array(mac).prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// Today's and yesterday's tags at `now`: what a node answers to and wants in sync (9).
    public static func currentTags(identityKey: [UInt8], now: UInt64) -> [MeshID] {
        [tag(identityKey: identityKey, timestamp: now),
         tag(identityKey: identityKey, timestamp: now >= dayMilliseconds ? now - dayMilliseconds : 0)]
    }
}
