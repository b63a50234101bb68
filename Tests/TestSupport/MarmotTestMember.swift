import MLS
import Marmot
import Nostr

/// A Marmot user for tests: a Nostr identity, a KeyPackage with its private keys, and the
/// signed KeyPackage event others invite it with.
public struct MarmotTestMember {
    public let keys: Keys
    public let bundle: KeyPackageBundle
    public let event: VerifiedKeyPackageEvent

    public var publicKey: PublicKey { keys.publicKey }

    public static let relay = "wss://relay.example.com"

    /// A fresh member whose KeyPackage event is valid at `now`.
    public static func make(now: Int64, using rng: inout some RandomNumberGenerator) throws -> MarmotTestMember {
        let keys = Keys.generate(using: &rng)
        let bundle = try MarmotProfile.keyPackage(for: keys.publicKey, now: now, using: &rng)
        let content = try KeyPackageEventContent(keyPackage: bundle.keyPackage, relays: [try RelayURL(relay)], using: &rng)
        let event = try content.sign(keys: keys, createdAt: now, rng: &rng).event
        return MarmotTestMember(keys: keys, bundle: bundle, event: try KeyPackageEvent.verify(event, now: now))
    }
}
