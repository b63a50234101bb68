import MLS
import XCTest
import TestSupport

/// The group API end to end: create, add by Welcome, messages, removes, self-updates with a
/// new signature key, SelfRemove, extensions, pending commits, past epochs and state round trips.
final class MLSGroupTests: XCTestCase {
    private let now = GroupTestSupport.now

    private func assertAgree(_ groups: [MLSGroup], file: StaticString = #filePath, line: UInt = #line) {
        guard let first = groups.first else { return }
        for group in groups.dropFirst() {
            XCTAssertEqual(group.epoch, first.epoch, file: file, line: line)
            XCTAssertEqual(group.epochAuthenticator, first.epochAuthenticator, "epoch authenticators differ", file: file, line: line)
            XCTAssertEqual(group.groupContext, first.groupContext, file: file, line: line)
            XCTAssertEqual(group.members.map(\.identity), first.members.map(\.identity), file: file, line: line)
        }
    }

    func testKeyPackageBundleIsValidLastResortAndRoundTrips() throws {
        var rng = SplitMix64(seed: 1)
        let bundle = try GroupTestSupport.keyPackage(7, using: &rng)
        let verified = try bundle.keyPackage.validate(at: now)
        XCTAssertEqual(verified.reference, bundle.reference)
        XCTAssertTrue(bundle.keyPackage.extensions.isLastResort)
        guard case .keyPackage(let lifetime) = bundle.keyPackage.leafNode.source else { return XCTFail("source") }
        XCTAssertEqual(lifetime.notAfter - lifetime.notBefore, Lifetime.maximumRange)
        let restored = try KeyPackageBundle(tlsSerialized: bundle.tlsSerialized)
        XCTAssertEqual(restored.keyPackage, bundle.keyPackage)
        XCTAssertEqual(restored.reference, bundle.reference)
        XCTAssertFalse("\(bundle)".contains("\(bundle.initPrivateKey.secret.unsafeBytes)"))
    }

    func testKeyPackageCreationRefusesUnlistedExtension() throws {
        var rng = SplitMix64(seed: 2)
        XCTAssertThrowsError(try KeyPackageBundle.create(
            credential: .basic(identity: GroupTestSupport.identity(1)), signer: try SignaturePrivateKey.generate(using: &rng),
            capabilities: Capabilities(), lifetime: .standard(from: now), extensions: Extensions([.lastResort]), using: &rng))
    }

    func testCreateCarriesOpaqueExtensionsAndRequiredCapabilities() throws {
        var rng = SplitMix64(seed: 3)
        let group = try GroupTestSupport.createGroup(0, using: &rng)
        XCTAssertEqual(group.epoch, 0)
        XCTAssertEqual(group.members.count, 1)
        XCTAssertEqual(group.extensions.unknown(GroupTestSupport.marmotGroupData), Array("family".utf8))
        XCTAssertEqual(group.extensions.requiredCapabilities?.proposalTypes, [.selfRemove])
        // A creator whose capabilities miss a required type cannot create the group.
        XCTAssertThrowsError(try MLSGroup.create(
            groupID: [1], credential: .basic(identity: [1]), signer: try SignaturePrivateKey.generate(using: &rng),
            lifetime: .standard(from: now), groupContextExtensions: try GroupTestSupport.groupContextExtensions(), using: &rng))
    }

    func testAddJoinMessageAndExporterAgree() throws {
        var rng = SplitMix64(seed: 4)
        var groups = try GroupTestSupport.makeGroup(members: 3, using: &rng)
        assertAgree(groups)
        XCTAssertEqual(groups[0].epoch, 1)
        XCTAssertEqual(try groups[1].exporter(label: "marmot", context: [1, 2], length: 32),
                       try groups[2].exporter(label: "marmot", context: [1, 2], length: 32))

        let message = try groups[1].encryptApplicationMessage(Array("hello".utf8), using: &rng)
        guard case .privateMessage = message.body else { return XCTFail("application data must be a PrivateMessage") }
        for i in [0, 2] {
            guard case .application(let app) = try groups[i].process(message, at: now) else { return XCTFail("not application") }
            XCTAssertEqual(app.data, Array("hello".utf8))
            XCTAssertEqual(app.sender.identity, GroupTestSupport.identity(1))
            XCTAssertEqual(app.epoch, 1)
        }
        // A second delivery is a replay.
        XCTAssertThrowsError(try groups[0].process(message, at: now))
    }

    func testRemoveDeactivatesTheRemovedMember() throws {
        var rng = SplitMix64(seed: 5)
        var groups = try GroupTestSupport.makeGroup(members: 3, using: &rng)
        let output = try groups[0].removeMembers([LeafIndex(2)], using: &rng)
        XCTAssertEqual(output.summary.removed.map(\.identity), [GroupTestSupport.identity(2)])
        XCTAssertNil(output.welcome)
        try groups[0].mergePendingCommit()
        guard case .commit(let summary) = try groups[1].process(output.commit, at: now) else { return XCTFail("not a commit") }
        XCTAssertEqual(summary.removed.map(\.leafIndex), [LeafIndex(2)])
        XCTAssertFalse(summary.removedSelf)
        guard case .commit(let removed) = try groups[2].process(output.commit, at: now) else { return XCTFail("not a commit") }
        XCTAssertTrue(removed.removedSelf)
        XCTAssertFalse(groups[2].isActive)
        XCTAssertThrowsError(try groups[2].encryptApplicationMessage([1], using: &rng)) { XCTAssertEqual($0 as? MLSError, .groupInactive) }
        assertAgree([groups[0], groups[1]])
        XCTAssertEqual(groups[0].members.count, 2)
    }

    func testSelfUpdateWithNewSignerAndPublicMessageEchoMerges() throws {
        var rng = SplitMix64(seed: 6)
        var configuration = GroupConfiguration()
        configuration.handshakeWireFormat = .publicMessage
        var groups = try GroupTestSupport.makeGroup(members: 2, configuration: configuration, using: &rng)
        let newSigner = try SignaturePrivateKey.generate(using: &rng)
        let output = try groups[1].selfUpdate(newSigner: newSigner, using: &rng)
        XCTAssertTrue(output.summary.isPureSelfUpdate)
        guard case .publicMessage = output.commit.body else { return XCTFail("configured for PublicMessage commits") }
        // Our own commit echoed back by the relay merges the pending commit.
        guard case .commit = try groups[1].process(output.commit, at: now) else { return XCTFail("echo not merged") }
        XCTAssertNil(groups[1].pendingCommit)
        guard case .commit(let summary) = try groups[0].process(output.commit, at: now) else { return XCTFail("not a commit") }
        XCTAssertTrue(summary.isPureSelfUpdate)
        XCTAssertEqual(summary.committer.identity, GroupTestSupport.identity(1))
        XCTAssertNotEqual(summary.committer.signatureKey, newSigner.publicKey.bytes, "the committer as it was before the commit")
        XCTAssertEqual(groups[0].member(at: LeafIndex(1))?.signatureKey, newSigner.publicKey.bytes)
        assertAgree(groups)
        // The new key signs from now on.
        let message = try groups[1].encryptApplicationMessage([9], using: &rng)
        guard case .application(let app) = try groups[0].process(message, at: now) else { return XCTFail("not application") }
        XCTAssertEqual(app.data, [9])
    }

    func testSelfRemoveIsProposedAsPublicMessageAndCommittedByAnother() throws {
        var rng = SplitMix64(seed: 7)
        var groups = try GroupTestSupport.makeGroup(members: 3, using: &rng)
        let proposal = try groups[2].proposeSelfRemove(using: &rng)
        guard case .publicMessage = proposal.body else { return XCTFail("SelfRemove goes as PublicMessage") }
        for i in [0, 1] {
            guard case .proposal(let stored) = try groups[i].process(proposal, at: now) else { return XCTFail("not a proposal") }
            XCTAssertEqual(stored.proposal, .selfRemove)
            XCTAssertEqual(stored.sender, LeafIndex(2))
        }
        // The leaver cannot commit its own SelfRemove: its commit would simply not include it.
        let output = try groups[0].commitPendingProposals(using: &rng)
        XCTAssertEqual(output.summary.proposals.map(\.proposal), [.selfRemove])
        XCTAssertTrue(output.summary.proposals[0].byReference)
        XCTAssertEqual(output.summary.proposals[0].sender.identity, GroupTestSupport.identity(2))
        try groups[0].mergePendingCommit()
        _ = try groups[1].process(output.commit, at: now)
        guard case .commit(let summary) = try groups[2].process(output.commit, at: now) else { return XCTFail("not a commit") }
        XCTAssertTrue(summary.removedSelf)
        assertAgree([groups[0], groups[1]])
        XCTAssertEqual(groups[1].members.count, 2)
    }

    func testGroupContextExtensionsCommitChangesOpaqueData() throws {
        var rng = SplitMix64(seed: 8)
        var groups = try GroupTestSupport.makeGroup(members: 2, using: &rng)
        let newExtensions = try GroupTestSupport.groupContextExtensions(data: Array("renamed".utf8))
        let output = try groups[0].updateGroupContextExtensions(newExtensions, using: &rng)
        try groups[0].mergePendingCommit()
        guard case .commit(let summary) = try groups[1].process(output.commit, at: now) else { return XCTFail("not a commit") }
        XCTAssertTrue(summary.extensionsChanged)
        XCTAssertEqual(groups[1].extensions.unknown(GroupTestSupport.marmotGroupData), Array("renamed".utf8))
        assertAgree(groups)
        // Extensions a member does not support are refused before anything is sent.
        let unsupported = try Extensions([.unknown(ExtensionType(rawValue: 0xF3F3), [1])])
        XCTAssertThrowsError(try groups[0].updateGroupContextExtensions(unsupported, using: &rng))
        XCTAssertNil(groups[0].pendingCommit)
    }

    func testPendingCommitCanBeClearedAndAnotherCommitWins() throws {
        var rng = SplitMix64(seed: 9)
        var groups = try GroupTestSupport.makeGroup(members: 3, using: &rng)
        let ours = try groups[0].selfUpdate(using: &rng)
        XCTAssertThrowsError(try groups[0].selfUpdate(using: &rng)) { XCTAssertEqual($0 as? MLSError, .pendingCommitExists) }
        let theirs = try groups[1].selfUpdate(using: &rng)
        try groups[1].mergePendingCommit()
        // Their commit arrives first: it is applied and our pending one is dropped.
        _ = try groups[0].process(theirs.commit, at: now)
        XCTAssertNil(groups[0].pendingCommit)
        _ = try groups[2].process(theirs.commit, at: now)
        XCTAssertThrowsError(try groups[2].process(ours.commit, at: now))
        assertAgree(groups)
        _ = try groups[0].selfUpdate(using: &rng)
        groups[0].clearPendingCommit()
        XCTAssertNil(groups[0].pendingCommit)
        XCTAssertThrowsError(try groups[0].mergePendingCommit()) { XCTAssertEqual($0 as? MLSError, .noPendingCommit) }
    }

    func testLateApplicationMessagesDecryptForFivePastEpochs() throws {
        var rng = SplitMix64(seed: 10)
        var groups = try GroupTestSupport.makeGroup(members: 2, using: &rng)
        var late: [MLSMessage] = []
        var exporters: [UInt64: Secret] = [:]
        for _ in 0..<6 {
            exporters[groups[0].epoch] = try groups[0].exporter(label: "marmot", context: Array("group-event".utf8), length: 32)
            late.append(try groups[1].encryptApplicationMessage([UInt8(groups[1].epoch)], using: &rng))
            let output = try groups[0].selfUpdate(using: &rng)
            try groups[0].mergePendingCommit()
            _ = try groups[1].process(output.commit, at: now)
        }
        XCTAssertEqual(groups[0].epoch, 7)
        XCTAssertEqual(groups[0].retainedEpochs, [2, 3, 4, 5, 6, 7])
        // Marmot's outer key of each retained past epoch is still available (restored state too).
        let restored = try MLSGroup(serialized: groups[0].serialized())
        for epoch in UInt64(2)...6 {
            XCTAssertEqual(try restored.exporter(label: "marmot", context: Array("group-event".utf8), length: 32, epoch: epoch),
                           exporters[epoch])
        }
        XCTAssertThrowsError(try groups[0].exporter(label: "marmot", context: [], length: 32, epoch: 1))
        // Epoch 1 fell out of the window; epochs 2…6 still decrypt, in any order.
        XCTAssertThrowsError(try groups[0].process(late[0], at: now)) {
            XCTAssertEqual($0 as? MLSError, .epochUnavailable(epoch: 1, current: 7))
        }
        for message in late.dropFirst().reversed() {
            guard case .application(let app) = try groups[0].process(message, at: now) else { return XCTFail("not application") }
            XCTAssertEqual(app.data, [UInt8(app.epoch)])
        }
    }

    func testSerializedGroupRestoresAndKeepsWorking() throws {
        var rng = SplitMix64(seed: 11)
        var groups = try GroupTestSupport.makeGroup(members: 3, using: &rng)
        let pendingMessage = try groups[2].encryptApplicationMessage([5], using: &rng)
        let output = try groups[0].selfUpdate(using: &rng)
        let bytes = groups[0].serialized()
        var restored = try MLSGroup(serialized: bytes)
        XCTAssertEqual(restored.serialized(), bytes)
        XCTAssertEqual(restored.pendingCommit?.commit, output.commit)
        try restored.mergePendingCommit()
        for i in [1, 2] {
            _ = try groups[i].process(output.commit, at: now)
            groups[i] = try MLSGroup(serialized: groups[i].serialized())
        }
        assertAgree([restored, groups[1], groups[2]])
        guard case .application(let app) = try restored.process(pendingMessage, at: now) else { return XCTFail("not application") }
        XCTAssertEqual(app.data, [5])
        let message = try groups[1].encryptApplicationMessage([6], using: &rng)
        guard case .application = try restored.process(message, at: now) else { return XCTFail("not application") }
        // Damaged state is refused, not half-restored (the store's encryption authenticates it;
        // these are the structural checks behind that).
        var otherVersion = bytes
        otherVersion[1] ^= 0x01
        XCTAssertThrowsError(try MLSGroup(serialized: otherVersion))
        XCTAssertThrowsError(try MLSGroup(serialized: Array(bytes.prefix(bytes.count - 1))))
        XCTAssertThrowsError(try MLSGroup(serialized: bytes + [0]))
    }

    func testWelcomeForAnotherKeyPackageIsRefused() throws {
        var rng = SplitMix64(seed: 12)
        var creator = try GroupTestSupport.createGroup(0, using: &rng)
        let invited = try GroupTestSupport.keyPackage(1, using: &rng)
        let stranger = try GroupTestSupport.keyPackage(2, using: &rng)
        let output = try creator.addMembers([try GroupTestSupport.verified(invited)], using: &rng)
        guard let welcome = output.welcome else { return XCTFail("no Welcome") }
        XCTAssertThrowsError(try MLSGroup.join(welcome: welcome, keyPackage: stranger)) { XCTAssertEqual($0 as? MLSError, .welcomeNotForUs) }
        // The invitation can be inspected before joining.
        let processed = try ProcessedWelcome(welcome: welcome, keyPackage: invited)
        XCTAssertEqual(processed.groupContext.extensions.unknown(GroupTestSupport.marmotGroupData), Array("family".utf8))
        XCTAssertEqual(processed.groupContext.epoch, 1)
        let joined = try MLSGroup.join(processed)
        try creator.mergePendingCommit()
        assertAgree([creator, joined])
    }
}
