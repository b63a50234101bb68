import MLS
import Nostr

/// The MLS parameters MDK 0.8.0 uses for every Marmot member and group, in one place so
/// KeyPackages, created groups and self-updates agree.
public enum MarmotProfile {
    /// Our BasicCredential: the 32 raw bytes of the x-only Nostr key (never hex text).
    public static func credential(for identity: PublicKey) -> Credential { .basic(identity: identity.bytes) }

    /// MDK's group configuration (5 past epochs, forward distance 1000), except that a receiver
    /// here keeps keys for up to 1000 out-of-order generations instead of 100: a backlog read
    /// from relays is ordered by created_at, and a busy second can hold hundreds of one
    /// sender's messages in any order. Receiver-only; nothing on the wire changes.
    public static var configuration: GroupConfiguration {
        var configuration = GroupConfiguration.default
        configuration.senderRatchet = SenderRatchetConfiguration(outOfOrderTolerance: 1000, maximumForwardDistance: 1000)
        return configuration
    }

    /// Leaf capabilities: the non-default extensions MDK lists (last_resort, 0xF2EE) and SelfRemove.
    public static var capabilities: Capabilities {
        Capabilities(extensions: KeyPackageEvent.extensions, proposals: KeyPackageEvent.proposals)
    }

    /// MDK's "lowest common denominator" rule for a new group's RequiredCapabilities: SelfRemove
    /// is required only when every invitee's KeyPackage advertises it (none for a solo group).
    public static func requiredCapabilities(invitees: [VerifiedKeyPackageEvent]) -> RequiredCapabilities {
        let selfRemove = !invitees.isEmpty && invitees.allSatisfy(\.supportsSelfRemove)
        return RequiredCapabilities(extensionTypes: [NostrGroupData.extensionType],
                                    proposalTypes: selfRemove ? [.selfRemove] : [], credentialTypes: [])
    }

    /// GroupContext extensions in MDK's order: 0xF2EE, then required_capabilities.
    public static func groupContextExtensions(data: NostrGroupData, required: RequiredCapabilities) throws -> Extensions {
        try Extensions([data.groupContextExtension(), .requiredCapabilities(required)])
    }

    /// A fresh last-resort KeyPackage for `identity`, valid from an hour ago for 84 days (as MDK).
    public static func keyPackage(for identity: PublicKey, now: Int64,
                                  using rng: inout some RandomNumberGenerator) throws -> KeyPackageBundle {
        try KeyPackageBundle.create(
            credential: credential(for: identity), signer: SignaturePrivateKey.generate(using: &rng),
            capabilities: capabilities, lifetime: .standard(from: UInt64(max(0, now))),
            extensions: try Extensions([.lastResort]), using: &rng)
    }
}
