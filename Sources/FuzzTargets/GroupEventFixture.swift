import MLS
import Marmot
import Nostr
import SeededRandom

/// A real three-member Marmot group at epoch 1, made once from fixed keys and a fixed seed
/// (sans-I/O, as `MarmotGroupTests` makes theirs): Alice (admin) created it with Bob and Carol.
/// Bob is the receiver every input is delivered to; Alice and Carol are the senders. From the
/// Welcome Bob joined with, the fixture derives the epoch's message secrets, so inputs can be
/// signed and protected exactly as Alice's or Carol's client would.
///
/// Templates are genuine epoch-1 traffic, each made from a fresh copy of its sender: chat and
/// location messages, proposals (SelfRemove, Remove, Add, GroupContextExtensions) and commits
/// (self-updates, add, remove, rename). Unmodified, every one of them is accepted by Bob.
///
/// `@unchecked Sendable`: built once and never mutated after (libFuzzer runs one input at a time).
public final class GroupEventFixture: @unchecked Sendable {
    public struct Sender {
        public let leaf: LeafIndex
        public let signer: SignaturePrivateKey
        public let identity: PublicKey
    }

    /// The signed content of a template, before protection.
    public struct ContentTemplate {
        public let name: String
        public let sender: Int
        public let wireFormat: WireFormat
        public let body: FramedContentBody
        public let confirmationTag: [UInt8]?
    }

    public let receiver: MarmotGroup
    /// `receiver.mls.serialized()`: a refused message must leave exactly this.
    public let receiverState: [UInt8]
    public let secrets: MessageSecrets
    public let exporterSecret: Secret
    public let nostrGroupID: [UInt8]
    /// Alice (leaf 0, admin) and Carol (leaf 2).
    public let senders: [Sender]
    public let contentTemplates: [ContentTemplate]
    /// The serialized MLSMessages of the same traffic, as the senders produced them.
    public let messageTemplates: [(name: String, bytes: [UInt8])]

    public static let now = FuzzClock.now
    public static let shared: GroupEventFixture? = try? GroupEventFixture()

    static func keys(_ byte: UInt8) throws -> Keys { Keys(secretKey: try SecretKey(bytes: [UInt8](repeating: byte, count: 32))) }

    init() throws {
        var rng = SplitMix64(seed: 0x4D41_524D_4F54_0445)
        let now = Self.now
        let relay = try RelayURL("wss://relay.example.com")
        func member(_ keys: Keys) throws -> (bundle: KeyPackageBundle, event: VerifiedKeyPackageEvent) {
            let bundle = try MarmotProfile.keyPackage(for: keys.publicKey, now: now, using: &rng)
            let content = try KeyPackageEventContent(keyPackage: bundle.keyPackage, relays: [relay], using: &rng)
            let event = try content.sign(keys: keys, createdAt: now, rng: &rng).event
            return (bundle, try KeyPackageEvent.verify(event, now: now))
        }
        let aliceKeys = try Self.keys(0x11), bobKeys = try Self.keys(0x22), carolKeys = try Self.keys(0x33), daveKeys = try Self.keys(0x44)
        let bob = try member(bobKeys), carol = try member(carolKeys), dave = try member(daveKeys)
        let (alice, welcomes) = try MarmotGroup.create(
            creator: aliceKeys.publicKey, name: "fuzz family", description: "", admins: [aliceKeys.publicKey], relays: [relay],
            invitees: [bob.event, carol.event], now: now, using: &rng)
        let bobWelcome = try WelcomeRumor.verify(welcomes[0].rumor)
        let receiver = try MarmotGroup.join(welcome: bobWelcome, keyPackage: bob.bundle)
        let carolGroup = try MarmotGroup.join(welcome: try WelcomeRumor.verify(welcomes[1].rumor), keyPackage: carol.bundle)

        let processed = try ProcessedWelcome(welcome: bobWelcome.welcome, keyPackage: bob.bundle)
        let secrets = try MessageSecrets(groupContext: processed.groupContext, epochSecrets: try processed.verifiedEpochSecrets(),
                                         leafCount: receiver.mls.ratchetTree.leafCount,
                                         configuration: MarmotProfile.configuration.senderRatchet)
        guard let exporterSecret = try alice.exporterSecrets().first else { throw FixtureError("no exporter secret") }
        self.receiver = receiver
        self.receiverState = receiver.mls.serialized()
        self.secrets = secrets
        self.exporterSecret = exporterSecret
        self.nostrGroupID = alice.nostrGroupID.bytes
        self.senders = [
            Sender(leaf: alice.mls.ownLeafIndex, signer: alice.mls.signer, identity: aliceKeys.publicKey),
            Sender(leaf: carolGroup.mls.ownLeafIndex, signer: carolGroup.mls.signer, identity: carolKeys.publicKey),
        ]

        // Genuine traffic of epoch 1, each from a fresh copy of its sender.
        var events: [(String, Event)] = []
        var messages: [(String, MLSMessage)] = []
        do {
            var a = alice
            events.append(("chat", try a.seal(try InnerEvent.chat("hello, family", author: aliceKeys.publicKey, createdAt: now),
                                              now: now, using: &rng)))
            var c = carolGroup
            let location = try LocationPayload(latitude: 52.52, longitude: 13.405, accuracy: 12.5, timestamp: now, battery: 80)
            events.append(("location", try c.seal(try InnerEvent.location(location, author: carolKeys.publicKey, createdAt: now),
                                                  now: now, using: &rng)))
            c = carolGroup
            events.append(("self-remove", try c.leaveProposal(now: now, using: &rng)))
            var renamed = alice.data
            renamed.name = "renamed"
            let proposals: [(String, Proposal)] = [
                ("remove-proposal", .remove(RemoveProposal(removed: 2))),
                ("add-proposal", .add(AddProposal(keyPackage: dave.bundle.keyPackage))),
                ("extensions-proposal", .groupContextExtensions(GroupContextExtensionsProposal(
                    extensions: try MarmotProfile.groupContextExtensions(
                        data: renamed, required: alice.mls.extensions.requiredCapabilities ?? RequiredCapabilities())))),
            ]
            for (name, proposal) in proposals {
                var m = alice.mls
                messages.append((name, try m.propose(proposal, using: &rng)))
            }
            a = alice
            events.append(("self-update", try a.selfUpdate(now: now, using: &rng).event))
            a = alice
            events.append(("add-commit", try a.addMembers([dave.event], committer: aliceKeys.publicKey, now: now, using: &rng).event))
            a = alice
            events.append(("remove-commit", try a.removeMembers([carolKeys.publicKey], committer: aliceKeys.publicKey, now: now,
                                                                using: &rng).event))
            a = alice
            events.append(("rename-commit", try a.updateData(renamed, committer: aliceKeys.publicKey, now: now, using: &rng).event))
            c = carolGroup
            events.append(("member-self-update", try c.selfUpdate(now: now, using: &rng).event))
        }
        for (name, event) in events {
            let decrypted = try GroupEvent.validate(event, now: now).decrypt(using: [exporterSecret])
            messages.append((name, decrypted.message))
        }
        self.messageTemplates = messages.map { ($0.0, $0.1.tlsSerialized) }

        // Their signed content, recovered with the epoch's secrets as Bob would.
        let tree = receiver.mls
        var templates: [ContentTemplate] = []
        for (name, message) in messages {
            var copy = secrets
            let verified = try copy.unprotect(try ProtectedMessage(message)) { sender in
                guard case .member(let leaf) = sender, let member = tree.member(at: LeafIndex(leaf)) else {
                    throw FixtureError("template from a non-member")
                }
                return SignaturePublicKey(member.signatureKey)
            }
            guard case .member(let leaf) = verified.sender, let sender = senders.firstIndex(where: { $0.leaf.value == leaf }) else {
                throw FixtureError("template from an unexpected sender")
            }
            templates.append(ContentTemplate(name: name, sender: sender, wireFormat: verified.wireFormat, body: verified.body,
                                             confirmationTag: verified.confirmationTag))
        }
        self.contentTemplates = templates
    }

    /// Signs `body` as `sender` and protects it as `wireFormat` with the epoch's secrets (a
    /// fresh copy each time, so every input is generation 0 of its ratchet, as the receiver
    /// expects). Throws when the framing rules refuse the combination.
    func protect(_ body: FramedContentBody, sender: Sender, wireFormat: WireFormat, confirmationTag: [UInt8]?,
                 using rng: inout SplitMix64) throws -> MLSMessage {
        var copy = secrets
        var content = try copy.sign(body, from: sender.leaf, wireFormat: wireFormat, signer: sender.signer)
        if case .commit = body { content.auth.confirmationTag = confirmationTag }
        if wireFormat == .publicMessage { return MLSMessage(body: .publicMessage(try copy.protectPublic(content))) }
        return MLSMessage(body: .privateMessage(try copy.protectPrivate(content, using: &rng)))
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
