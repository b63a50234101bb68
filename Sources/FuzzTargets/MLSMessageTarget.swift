@_spi(Conformance) import MLS
import Marmot
import Nostr
import SeededRandom

/// The TLS/MLS decoders (RFC 9420 §6, §10, §12.4.3) and the checks that run on what they
/// decode, tried on every input:
///
/// - `MLSMessage` (all five wire formats), then by body: a KeyPackage is validated; a GroupInfo's
///   ratchet tree is decoded and verified as a joiner would and its signature checked; a Welcome
///   is processed with a fixed KeyPackage (seeds addressed to it reach HPKE, GroupSecrets,
///   GroupInfo decryption and the join); PublicMessage and PrivateMessage are framed.
/// - the same structures without the envelope: a bare KeyPackage (what kind-30443 events carry),
///   a bare `ratchet_tree`, GroupInfo and Welcome.
///
/// Property: decoding is strict (minimal varints, no trailing bytes), so anything that decodes
/// re-encodes to exactly the input.
public enum MLSMessageTarget: FuzzTarget {
    public static let name = "mls-message"

    static let suite = CipherSuiteProvider.mls128DHKEMX25519AES128GCMSHA256Ed25519

    public static func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        var outcome = FuzzOutcome.rejected("decode")
        if let message = try? MLSMessage(tlsSerialized: bytes) {
            try requireRoundTrip(message, bytes, "MLSMessage")
            outcome = examine(message)
        }
        if let keyPackage = try? KeyPackage(tlsSerialized: bytes) {
            try requireRoundTrip(keyPackage, bytes, "KeyPackage")
            outcome = examine(keyPackage)
        }
        if let tree = try? UnverifiedRatchetTree(tlsSerialized: bytes) {
            try requireRoundTrip(tree, bytes, "ratchet_tree")
            outcome = examine(tree, groupID: Array("fuzz".utf8), requiredCapabilities: nil)
        }
        if let info = try? GroupInfo(tlsSerialized: bytes) {
            try requireRoundTrip(info, bytes, "GroupInfo")
            outcome = examine(info)
        }
        if let welcome = try? Welcome(tlsSerialized: bytes) {
            try requireRoundTrip(welcome, bytes, "Welcome")
            outcome = examine(welcome)
        }
        return outcome
    }

    static func requireRoundTrip<T: TLSEncodable>(_ value: T, _ bytes: [UInt8], _ what: String) throws {
        guard value.tlsSerialized == bytes else {
            throw PropertyViolation(name, "a decoded \(what) re-encodes to other bytes (\(bytes.count) in, \(value.tlsSerialized.count) out)")
        }
    }

    static func examine(_ message: MLSMessage) -> FuzzOutcome {
        switch message.body {
        case .keyPackage(let keyPackage):
            _ = examine(keyPackage)
            return .accepted("MLSMessage.keyPackage")
        case .groupInfo(let info):
            _ = examine(info)
            return .accepted("MLSMessage.groupInfo")
        case .welcome(let welcome):
            return examine(welcome)
        case .publicMessage, .privateMessage:
            guard let framed = try? ProtectedMessage(message) else { return .rejected("framing") }
            _ = (framed.groupID, framed.epoch, framed.contentType)
            return .accepted("MLSMessage.\(framed.wireFormat)")
        }
    }

    static func examine(_ keyPackage: KeyPackage) -> FuzzOutcome {
        _ = try? keyPackage.validate(at: FuzzClock.mlsNow, requireAcceptableRange: false)
        guard let verified = try? keyPackage.validate(at: FuzzClock.mlsNow) else { return .rejected("KeyPackage.validate") }
        _ = verified.reference
        return .accepted("KeyPackage")
    }

    static func examine(_ unverified: UnverifiedRatchetTree, groupID: [UInt8], requiredCapabilities: RequiredCapabilities?) -> FuzzOutcome {
        _ = try? RatchetTree(verifyingStructureOf: unverified)
        guard let tree = try? RatchetTree(verifying: unverified, groupID: groupID, suite: suite,
                                          requiredCapabilities: requiredCapabilities)
        else { return .rejected("RatchetTree.verify") }
        // Walk what a member computes from a tree: hashes, resolutions, filtered paths.
        _ = tree.treeHash
        for (index, _) in tree.members { _ = tree.filteredDirectPath(of: index) }
        return .accepted("ratchet_tree")
    }

    static func examine(_ info: GroupInfo) -> FuzzOutcome {
        let context = info.groupContext
        _ = try? context.extensions.validate(for: .groupContext)
        _ = try? NostrGroupData(extensions: context.extensions)
        guard let raw = info.extensions.ratchetTree, let unverified = try? UnverifiedRatchetTree(tlsSerialized: raw),
              let tree = try? RatchetTree(verifying: unverified, groupID: context.groupID, suite: suite,
                                          requiredCapabilities: context.extensions.requiredCapabilities)
        else { return .rejected("GroupInfo.ratchet_tree") }
        guard tree.treeHash == context.treeHash else { return .rejected("GroupInfo.tree_hash") }
        guard let signer = tree.leaf(at: LeafIndex(info.signer)),
              (try? info.verifySignature(signerKey: signer.signatureKey, suite: suite)) != nil
        else { return .rejected("GroupInfo.signature") }
        return .accepted("GroupInfo")
    }

    /// A Welcome processed with `WelcomeFixture.bundle`: only Welcomes addressed to it get past
    /// the KeyPackage lookup.
    static func examine(_ welcome: Welcome) -> FuzzOutcome {
        guard let bundle = WelcomeFixture.bundle else { return .rejected("fixture") }
        guard let processed = try? ProcessedWelcome(welcome: welcome, keyPackage: bundle) else { return .rejected("Welcome.decrypt") }
        _ = try? NostrGroupData(extensions: processed.groupContext.extensions)
        guard let group = try? MLSGroup.join(processed) else { return .rejected("Welcome.join") }
        _ = (group.epoch, group.members.count)
        return .accepted("Welcome.join")
    }
}

/// The fixed clock every target uses (inside KeyPackage lifetimes made "now").
public enum FuzzClock {
    public static let now: Int64 = 1_795_000_000
    static var mlsNow: UInt64 { UInt64(now) }
}

/// The KeyPackage Welcome inputs are processed with, made once from a fixed seed, and a
/// Welcome addressed to it (a seed that reaches the whole join).
public enum WelcomeFixture {
    public static let bundle: KeyPackageBundle? = {
        var rng = SplitMix64(seed: 0x57E1_C0DE)
        guard let identity = try? SecretKey(bytes: [UInt8](repeating: 0x33, count: 32)).publicKey else { return nil }
        return try? MarmotProfile.keyPackage(for: identity, now: FuzzClock.now, using: &rng)
    }()

    /// A real Welcome to `bundle` from a fresh two-member group, as an MLSMessage.
    public static func welcomeMessage() throws -> [UInt8] {
        guard let bundle else { throw PropertyViolation(MLSMessageTarget.name, "the fixed KeyPackage could not be made") }
        var rng = SplitMix64(seed: 0x57E1_C0DF)
        let creator = try SecretKey(bytes: [UInt8](repeating: 0x44, count: 32)).publicKey
        let groupData = NostrGroupData(name: "fuzz", admins: [creator.bytes], relays: [try RelayURL("wss://relay.example.com")],
                                       using: &rng)
        let extensions = try MarmotProfile.groupContextExtensions(
            data: groupData, required: RequiredCapabilities(extensionTypes: [NostrGroupData.extensionType]))
        var group = try MLSGroup.create(
            groupID: rng.randomBytes(16), credential: MarmotProfile.credential(for: creator),
            signer: SignaturePrivateKey.generate(using: &rng), capabilities: MarmotProfile.capabilities,
            lifetime: .standard(from: FuzzClock.mlsNow), groupContextExtensions: extensions,
            configuration: MarmotProfile.configuration, using: &rng)
        let verified = try bundle.keyPackage.validate(at: FuzzClock.mlsNow)
        guard let welcome = try group.addMembers([verified], using: &rng).welcome else {
            throw PropertyViolation(MLSMessageTarget.name, "adding a member made no Welcome")
        }
        return MLSMessage(body: .welcome(welcome)).tlsSerialized
    }
}
