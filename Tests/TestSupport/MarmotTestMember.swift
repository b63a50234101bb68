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

/// The family most group tests start from: Alice creates "Family" with Bob and Carol, who join
/// from their welcomes; each one's `MarmotGroup`, all at epoch 1.
public struct MarmotTestFamily {
    public struct WrongWelcomes: Error {}

    public let alice: MarmotTestMember
    public let bob: MarmotTestMember
    public let carol: MarmotTestMember
    public var a: MarmotGroup
    public var b: MarmotGroup
    public var c: MarmotGroup

    /// Alice is the admin; with `bobIsAdmin`, Bob is one too.
    public static func make(now: Int64, bobIsAdmin: Bool = false, using rng: inout some RandomNumberGenerator) throws -> MarmotTestFamily {
        let alice = try MarmotTestMember.make(now: now, using: &rng)
        let bob = try MarmotTestMember.make(now: now, using: &rng)
        let carol = try MarmotTestMember.make(now: now, using: &rng)
        let (a, welcomes) = try MarmotGroup.create(
            creator: alice.publicKey, name: "Family", description: "", admins: bobIsAdmin ? [alice.publicKey, bob.publicKey] : [],
            relays: [try RelayURL(MarmotTestMember.relay)], invitees: [bob.event, carol.event], now: now, using: &rng)
        guard welcomes.map(\.recipient) == [bob.publicKey, carol.publicKey] else { throw WrongWelcomes() }
        let b = try MarmotGroup.join(welcome: try WelcomeRumor.verify(welcomes[0].rumor), keyPackage: bob.bundle)
        let c = try MarmotGroup.join(welcome: try WelcomeRumor.verify(welcomes[1].rumor), keyPackage: carol.bundle)
        return MarmotTestFamily(alice: alice, bob: bob, carol: carol, a: a, b: b, c: c)
    }
}
