import MLS
import XCTest

/// Identities and groups for the group-engine tests: Marmot-like members (a 32-byte basic
/// identity, SelfRemove and 0xF2EE in capabilities, last-resort KeyPackages) from a seeded RNG.
enum GroupTestSupport {
    /// A fixed "now" (2026-01-01) so KeyPackage lifetimes are reproducible.
    static let now: UInt64 = 1_767_225_600
    static let marmotGroupData = ExtensionType(rawValue: 0xF2EE)

    static var capabilities: Capabilities {
        Capabilities(extensions: [.lastResort, marmotGroupData], proposals: [.selfRemove])
    }

    /// Marmot's GroupContext extensions: opaque group data, then required_capabilities.
    static func groupContextExtensions(data: [UInt8] = Array("family".utf8)) throws -> Extensions {
        try Extensions([
            .unknown(marmotGroupData, data),
            .requiredCapabilities(RequiredCapabilities(extensionTypes: [marmotGroupData], proposalTypes: [.selfRemove])),
        ])
    }

    static func identity(_ n: Int) -> [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: n &* 31 &+ $0) } }

    static func keyPackage(_ n: Int, using rng: inout some RandomNumberGenerator) throws -> KeyPackageBundle {
        try KeyPackageBundle.create(
            credential: .basic(identity: identity(n)), signer: try SignaturePrivateKey.generate(using: &rng),
            capabilities: capabilities, lifetime: .standard(from: now), extensions: Extensions([.lastResort]), using: &rng)
    }

    static func verified(_ bundle: KeyPackageBundle) throws -> VerifiedKeyPackage {
        try bundle.keyPackage.validate(at: now)
    }

    static func createGroup(_ n: Int, configuration: GroupConfiguration = .default,
                            using rng: inout some RandomNumberGenerator) throws -> MLSGroup {
        try MLSGroup.create(
            groupID: rng.randomBytes(16), credential: .basic(identity: identity(n)),
            signer: try SignaturePrivateKey.generate(using: &rng), capabilities: capabilities, lifetime: .standard(from: now),
            groupContextExtensions: try groupContextExtensions(), configuration: configuration, using: &rng)
    }

    /// A creator and `count - 1` members who joined by its Welcome, all at epoch 1.
    static func makeGroup(members count: Int, configuration: GroupConfiguration = .default,
                          using rng: inout some RandomNumberGenerator) throws -> [MLSGroup] {
        var creator = try createGroup(0, configuration: configuration, using: &rng)
        let bundles = try (1..<count).map { try keyPackage($0, using: &rng) }
        let output = try creator.addMembers(try bundles.map(verified), using: &rng)
        try creator.mergePendingCommit()
        guard let welcome = output.welcome else { throw MLSError.invalidWelcome("no Welcome") }
        var groups = [creator]
        for bundle in bundles {
            groups.append(try MLSGroup.join(welcome: welcome, keyPackage: bundle, configuration: configuration))
        }
        return groups
    }
}
