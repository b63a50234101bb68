import Foundation
import MLS

/// Burrow's MLS group engine by group size: how the cost of creating a group, adding a member,
/// processing a commit and exchanging an application message grows from 10 to 1000 members.
///
/// Members are Marmot-like (32-byte basic identity, last-resort KeyPackages, 0xF2EE group data
/// and `required_capabilities` in the GroupContext, PrivateMessage handshakes), so the figures
/// are those of a Marmot group. KeyPackages are generated and validated before any timed code.
struct MLSBench: BenchSection {
    let name = "mls"
    let title = "MLS: group operations by group size (RFC 9420, suite 0x0001)"

    static let sizes = [10, 100, 1000]
    static let marmotGroupData = ExtensionType(rawValue: 0xF2EE)
    static let messageBytes = 128

    /// One group size's figures: CPU milliseconds per operation, and byte counts.
    struct Figures {
        var create = 0.0, join = 0.0, addCommit = 0.0, processAdd = 0.0
        var update = 0.0, processUpdate = 0.0, roundTrip = 0.0
        /// The Welcome's N − 1 GroupSecrets encryptions alone, with their real context (the
        /// encrypted GroupInfo, which RFC 9420 §12.4.3.1 binds into every one) and with none.
        var welcomeHPKE = 0.0, welcomeHPKEWithoutContext = 0.0
        /// Validating the N − 1 KeyPackages (two signature checks each), done before the timed
        /// creation: as many verifications as the commit makes again on the new leaves.
        var keyPackageValidation = 0.0
        var welcomeBytes = 0, encryptedGroupInfoBytes = 0, addCommitBytes = 0, updateCommitBytes = 0
    }

    func run(_ context: BenchContext) throws -> SectionReport {
        var figures: [Int: Figures] = [:]
        for size in Self.sizes { figures[size] = try measure(size: size, context) }

        let columns: [(String, KeyPath<Figures, Double>)] = [
            ("create group of N", \.create),
            ("join by Welcome", \.join),
            ("add-member commit + Welcome", \.addCommit),
            ("process add commit", \.processAdd),
            ("self-update commit", \.update),
            ("process self-update", \.processUpdate),
            ("encrypt + decrypt message", \.roundTrip),
        ]
        var table = MarkdownTable(headers: ["N"] + columns.map { $0.0 + " (ms)" }, rightAligned: Set(1...columns.count))
        for size in Self.sizes {
            guard let f = figures[size] else { continue }
            table.add(["\(size)"] + columns.map { Self.milliseconds(f[keyPath: $0.1]) })
        }
        for (small, large) in zip(Self.sizes, Self.sizes.dropFirst()) {
            guard let a = figures[small], let b = figures[large] else { continue }
            table.add(["growth \(large) ÷ \(small)"] + columns.map { Format.ratio(b[keyPath: $0.1], a[keyPath: $0.1]) })
        }

        var report = SectionReport(table: table)
        report.notes.append(
            "CPU milliseconds per operation, one thread: the best of up to \(Self.runs(for: 10)) runs (N = 10), "
                + "\(Self.runs(for: 100)) (N = 100) and \(Self.runs(for: 1000)) (N = 1000), each cell stopping early once it has "
                + "used about \(context.seconds) s of CPU time. KeyPackages are generated and validated beforehand. "
                + "*Create group of N* is `MLSGroup.create` plus one commit adding the N − 1 others (with its Welcome) and its merge; "
                + "*join* decodes that Welcome and verifies the tree (every leaf's signature); the add-member and self-update "
                + "commits are made by the creator in the group of N, and *process* is another member decoding the commit's "
                + "bytes and applying it; *encrypt + decrypt* is one \(Self.messageBytes)-byte application message from the "
                + "creator, decoded and decrypted by that member.")
        report.notes.append(
            "Growth per tenfold N: O(log N) work would show about 2.0× (10 → 100) then 1.5× (100 → 1000), O(N) work 10×. "
                + "`MLSGroup.addMembers` commits without an UpdatePath (RFC 9420 requires none for adds; OpenMLS's "
                + "`add_members` sends one, its `add_members_without_update` does not), so a freshly created group's parent "
                + "nodes are blank: the first self-update must encrypt its path secrets to every other leaf (its copath's "
                + "resolution is the whole tree), which makes *self-update commit* O(N) until members have updated; a "
                + "receiver still decrypts one ciphertext.")
        if let big = figures[1000], let mid = figures[100] {
            let ms = { (value: Double) in String(format: "%.0f ms", value) }
            let share = String(format: "%.0f%%", big.create > 0 ? 100 * big.welcomeHPKE / big.create : 0)
            report.notes.append(
                "What create 1000 (\(ms(big.create))) spends: the Welcome's 999 HPKE encryptions of GroupSecrets take "
                    + "\(ms(big.welcomeHPKE)) (\(share); \(Format.ratio(big.welcomeHPKE, mid.welcomeHPKE)) the 99 of N = 100) "
                    + "measured alone, \(ms(big.welcomeHPKEWithoutContext)) with an empty context instead: RFC 9420 binds the "
                    + "encrypted GroupInfo (\(big.encryptedGroupInfoBytes / 1024) KiB here, as it carries the ratchet tree) into "
                    + "each one as HPKE `info`, hashed per recipient, so this part grows as N². The commit also checks each new "
                    + "leaf's signature twice (validating its inline proposals, then applying them): 1,998 Ed25519 verifications, "
                    + "as many as validating the 999 KeyPackages beforehand took (\(ms(big.keyPackageValidation)))."
                    + " Sizes at N = 1000: Welcome \(big.welcomeBytes / 1024) KiB, add commit "
                    + "\(big.addCommitBytes) B, self-update commit \(big.updateCommitBytes / 1024) KiB.")
        }
        return report
    }

    /// Runs per cell: fewer for the large groups, whose single operations cost the most.
    static func runs(for size: Int) -> Int { size >= 1000 ? 3 : size >= 100 ? 7 : 15 }

    static func milliseconds(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
    }

    /// Every figure for groups of `size` members.
    private func measure(size: Int, _ context: BenchContext) throws -> Figures {
        var rng = SystemRandomNumberGenerator()
        let now = UInt64(Date().timeIntervalSince1970)
        let lifetime = Lifetime.standard(from: now)
        let capabilities = Capabilities(extensions: [.lastResort, Self.marmotGroupData], proposals: [.selfRemove])
        let groupExtensions = try Extensions([
            .unknown(Self.marmotGroupData, Array("bench".utf8)),
            .requiredCapabilities(RequiredCapabilities(extensionTypes: [Self.marmotGroupData], proposalTypes: [.selfRemove])),
        ])
        func keyPackage(_ n: Int) throws -> KeyPackageBundle {
            try KeyPackageBundle.create(
                credential: .basic(identity: Self.identity(n)), signer: try SignaturePrivateKey.generate(using: &rng),
                capabilities: capabilities, lifetime: lifetime, extensions: Extensions([.lastResort]), using: &rng)
        }
        // Outside the timed code: the N − 1 members' packages and one more to add later.
        let bundles = try (1..<size).map(keyPackage)
        var verified: [VerifiedKeyPackage] = []
        var f = Figures()
        f.keyPackageValidation = try Self.best(runs: 1, budget: context.seconds) {
            verified = try bundles.map { try $0.keyPackage.validate(at: now) }
        }
        let newcomer = try keyPackage(size).keyPackage.validate(at: now)
        let creatorSigner = try SignaturePrivateKey.generate(using: &rng)

        let runs = Self.runs(for: size)
        let budget = context.seconds

        var creator: MLSGroup?
        var welcomeBytes: [UInt8] = []
        var encryptedGroupInfo: [UInt8] = []
        f.create = try Self.best(runs: runs, budget: budget) {
            var group = try MLSGroup.create(
                groupID: rng.randomBytes(16), credential: .basic(identity: Self.identity(0)), signer: creatorSigner,
                capabilities: capabilities, lifetime: lifetime, groupContextExtensions: groupExtensions, using: &rng)
            let output = try group.addMembers(verified, using: &rng)
            try group.mergePendingCommit()
            guard let welcome = output.welcome else { throw BenchFailure.check("add commit without a Welcome") }
            creator = group
            welcomeBytes = welcome.tlsSerialized
            encryptedGroupInfo = welcome.encryptedGroupInfo
        }
        guard var creator, creator.members.count == size else { throw BenchFailure.check("group of \(size) not created") }
        f.welcomeBytes = welcomeBytes.count
        f.encryptedGroupInfoBytes = encryptedGroupInfo.count

        var member: MLSGroup?
        f.join = try Self.best(runs: runs, budget: budget) {
            member = try MLSGroup.join(welcome: Welcome(tlsSerialized: welcomeBytes), keyPackage: bundles[0])
        }
        guard var member, member.epochAuthenticator == creator.epochAuthenticator else {
            throw BenchFailure.check("joiner disagrees with the creator (N = \(size))")
        }

        // Commits are made on copies of the creator, so every run starts from the group of N.
        var addCommit: [UInt8] = []
        f.addCommit = try Self.best(runs: runs, budget: budget) {
            var copy = creator
            let output = try copy.addMembers([newcomer], using: &rng)
            guard output.welcome != nil else { throw BenchFailure.check("add commit without a Welcome") }
            addCommit = output.commit.tlsSerialized
        }
        f.addCommitBytes = addCommit.count
        f.processAdd = try Self.best(runs: runs, budget: budget) {
            var copy = member
            let processed = try copy.process(MLSMessage(tlsSerialized: addCommit), at: now)
            try Self.expectCommit(processed, in: copy, members: size + 1)
        }

        var updateCommit: [UInt8] = []
        f.update = try Self.best(runs: runs, budget: budget) {
            var copy = creator
            updateCommit = try copy.selfUpdate(using: &rng).commit.tlsSerialized
        }
        f.updateCommitBytes = updateCommit.count
        f.processUpdate = try Self.best(runs: runs, budget: budget) {
            var copy = member
            let processed = try copy.process(MLSMessage(tlsSerialized: updateCommit), at: now)
            try Self.expectCommit(processed, in: copy, members: size)
        }

        // Sender and receiver advance their ratchets run after run, as in a conversation.
        let payload = [UInt8](repeating: 0x61, count: Self.messageBytes)
        f.roundTrip = try Self.best(runs: runs * 4, budget: budget) {
            let bytes = try creator.encryptApplicationMessage(payload, using: &rng).tlsSerialized
            guard case .application(let message) = try member.process(MLSMessage(tlsSerialized: bytes), at: now),
                  message.data == payload else { throw BenchFailure.check("application message round trip") }
        }

        // What the Welcome's GroupSecrets encryptions alone cost (same suite, keys and context).
        let suite = creator.cipherSuite
        let groupSecrets = [UInt8](repeating: 0, count: 70)
        for (field, context) in [(\Figures.welcomeHPKE, encryptedGroupInfo), (\Figures.welcomeHPKEWithoutContext, [])] {
            f[keyPath: field] = try Self.best(runs: 1, budget: budget) {
                for package in verified {
                    let sealed = try suite.encryptWithLabel(HPKEPublicKey(package.keyPackage.initKey), label: "Welcome",
                                                            context: context, plaintext: groupSecrets, using: &rng)
                    blackHole(sealed.kemOutput.count)
                }
            }
        }
        return f
    }

    private static func expectCommit(_ processed: ProcessedMessage, in group: MLSGroup, members: Int) throws {
        guard case .commit(let summary) = processed, !summary.removedSelf, group.members.count == members else {
            throw BenchFailure.check("commit not applied")
        }
    }

    static func identity(_ n: Int) -> [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: n &* 31 &+ $0) } }

    /// The best (lowest) CPU milliseconds of up to `runs` calls of `body`, stopping once
    /// `budget` seconds of CPU time have gone (at least one call): load elsewhere on a shared
    /// machine only ever slows a run, as in `Throughput.bestOfTwo`. Large-group operations
    /// take milliseconds to seconds each, so they are timed one by one rather than in batches.
    static func best(runs: Int, budget: Double, _ body: () throws -> Void) rethrows -> Double {
        var best = Double.infinity
        var count = 0
        let start = Throughput.cpuTime()
        while count < runs {
            let before = Throughput.cpuTime()
            try body()
            best = min(best, (Throughput.cpuTime() - before) * 1000)
            count += 1
            if Throughput.cpuTime() - start >= budget { break }
        }
        return best
    }
}
