import MLS
import XCTest
import TestSupport

/// Commits adding several members at once: where the new leaves land (leftmost blank leaves,
/// then extending the tree, RFC 9420 §12.1.1), that committer, receivers and joiners agree, and
/// that §7.3's rules still refuse each bad Add of a batch with the same error as a single Add.
final class GroupAddBatchTests: XCTestCase {
    private let now = GroupTestSupport.now

    private func verified(_ bundles: [KeyPackageBundle]) throws -> [VerifiedKeyPackage] {
        try bundles.map(GroupTestSupport.verified)
    }

    private func assertAgree(_ groups: [MLSGroup], file: StaticString = #filePath, line: UInt = #line) {
        guard let first = groups.first else { return }
        for group in groups.dropFirst() {
            XCTAssertEqual(group.epoch, first.epoch, file: file, line: line)
            XCTAssertEqual(group.epochAuthenticator, first.epochAuthenticator, file: file, line: line)
            XCTAssertEqual(group.members.map(\.identity), first.members.map(\.identity), file: file, line: line)
        }
    }

    func testBatchAddsFillBlankLeavesLeftmostFirstThenExtend() throws {
        var rng = SplitMix64(seed: 0xADD5)
        var groups = try GroupTestSupport.makeGroup(members: 6, using: &rng)
        XCTAssertEqual(groups[0].ratchetTree.leafCount, 8)

        // Removes apply before adds: the three new members take leaves 1, 3 and then 6.
        let first = try (10..<13).map { try GroupTestSupport.keyPackage($0, using: &rng) }
        let output = try groups[0].commit(adding: try verified(first), removing: [LeafIndex(1), LeafIndex(3)], using: &rng)
        XCTAssertEqual(output.summary.added.map(\.leafIndex), [LeafIndex(1), LeafIndex(3), LeafIndex(6)])
        try groups[0].mergePendingCommit()
        var receiver = groups[2]
        guard case .commit(let summary) = try receiver.process(output.commit, at: now) else { return XCTFail("expected a commit") }
        XCTAssertEqual(summary.added.map(\.leafIndex), [LeafIndex(1), LeafIndex(3), LeafIndex(6)])
        guard let welcome = output.welcome else { return XCTFail("no Welcome") }
        let joiners = try first.map { try MLSGroup.join(welcome: welcome, keyPackage: $0) }
        XCTAssertEqual(joiners.map(\.ownLeafIndex), [LeafIndex(1), LeafIndex(3), LeafIndex(6)])
        assertAgree([groups[0], receiver] + joiners)

        // No blank leaf left but 7: the next batch takes it, then doubles the tree to 16 leaves.
        let second = try (20..<23).map { try GroupTestSupport.keyPackage($0, using: &rng) }
        let next = try groups[0].addMembers(try verified(second), using: &rng)
        XCTAssertEqual(next.summary.added.map(\.leafIndex), [LeafIndex(7), LeafIndex(8), LeafIndex(9)])
        try groups[0].mergePendingCommit()
        XCTAssertEqual(groups[0].ratchetTree.leafCount, 16)
        guard case .commit = try receiver.process(next.commit, at: now) else { return XCTFail("expected a commit") }
        var joiner = joiners[2]
        guard case .commit = try joiner.process(next.commit, at: now) else { return XCTFail("expected a commit") }
        assertAgree([groups[0], receiver, joiner])
        XCTAssertEqual(groups[0].members.count, 10)
    }

    func testBatchAddReusingAMembersSignatureKeyIsRefused() throws {
        var rng = SplitMix64(seed: 0xADD6)
        var groups = try GroupTestSupport.makeGroup(members: 4, using: &rng)
        let fresh = try GroupTestSupport.keyPackage(10, using: &rng)
        let copycat = try KeyPackageBundle.create(
            credential: .basic(identity: GroupTestSupport.identity(11)), signer: groups[2].signer,
            capabilities: GroupTestSupport.capabilities, lifetime: .standard(from: now), extensions: Extensions([.lastResort]),
            using: &rng)
        let before = groups[0].serialized()
        XCTAssertThrowsError(try groups[0].addMembers(try verified([fresh, copycat]), using: &rng)) { error in
            XCTAssertEqual(error as? MLSError, .invalidProposal("signature key already used by leaf 2"))
        }
        XCTAssertEqual(groups[0].serialized(), before)
    }

    func testBatchAddWithTwoPackagesOfOneSignatureKeyIsRefused() throws {
        var rng = SplitMix64(seed: 0xADD7)
        var groups = try GroupTestSupport.makeGroup(members: 3, using: &rng)
        let signer = try SignaturePrivateKey.generate(using: &rng)
        let twins = try (10..<12).map { n in
            try KeyPackageBundle.create(
                credential: .basic(identity: GroupTestSupport.identity(n)), signer: signer, capabilities: GroupTestSupport.capabilities,
                lifetime: .standard(from: now), extensions: Extensions([.lastResort]), using: &rng)
        }
        XCTAssertThrowsError(try groups[0].addMembers(try verified(twins), using: &rng)) { error in
            XCTAssertEqual(error as? MLSError, .invalidProposal("two Adds with the same signature key"))
        }
    }

    func testBatchAddOfACredentialTypeMembersDoNotSupportNamesTheFirstMember() throws {
        var rng = SplitMix64(seed: 0xADD8)
        var groups = try GroupTestSupport.makeGroup(members: 3, using: &rng)
        let custom = CredentialType(rawValue: 0xF000)
        var capabilities = GroupTestSupport.capabilities
        capabilities.credentials = [.basic, custom]
        let fresh = try GroupTestSupport.keyPackage(10, using: &rng)
        let stranger = try KeyPackageBundle.create(
            credential: .other(custom, body: [1, 2, 3]), signer: try SignaturePrivateKey.generate(using: &rng),
            capabilities: capabilities, lifetime: .standard(from: now), extensions: Extensions([.lastResort]), using: &rng)
        XCTAssertThrowsError(try groups[0].addMembers(try verified([fresh, stranger]), using: &rng)) { error in
            XCTAssertEqual(error as? MLSError, .invalidLeafNode(leaf: 4, "credential types not mutually supported with leaf 0"))
        }
        XCTAssertThrowsError(try groups[0].addMembers(try verified([stranger]), using: &rng))
    }

    func testBatchAddChecksEachNewLeafAgainstTheLeavesAddedBeforeIt() throws {
        var rng = SplitMix64(seed: 0xADD9)
        let custom = CredentialType(rawValue: 0xF000)
        var both = GroupTestSupport.capabilities
        both.credentials = [.basic, custom]
        func package(_ n: Int, _ credential: Credential, _ capabilities: Capabilities) throws -> KeyPackageBundle {
            try KeyPackageBundle.create(
                credential: credential, signer: try SignaturePrivateKey.generate(using: &rng), capabilities: capabilities,
                lifetime: .standard(from: now), extensions: Extensions([.lastResort]), using: &rng)
        }
        var creator = try MLSGroup.create(
            groupID: rng.randomBytes(16), credential: .basic(identity: GroupTestSupport.identity(0)),
            signer: try SignaturePrivateKey.generate(using: &rng), capabilities: both, lifetime: .standard(from: now),
            groupContextExtensions: try GroupTestSupport.groupContextExtensions(), using: &rng)
        let stranger = try package(1, .other(custom, body: [1]), both)
        let basicOnly = try package(2, .basic(identity: GroupTestSupport.identity(2)), GroupTestSupport.capabilities)
        let basicBoth = try package(3, .basic(identity: GroupTestSupport.identity(3)), both)

        // The creator supports the custom type, so `stranger` enters at leaf 1; `basicOnly`
        // then fails against it, not against the creator.
        XCTAssertThrowsError(try creator.addMembers(try verified([stranger, basicOnly]), using: &rng)) { error in
            XCTAssertEqual(error as? MLSError, .invalidLeafNode(leaf: 2, "credential types not mutually supported with leaf 1"))
        }
        let output = try creator.addMembers(try verified([stranger, basicBoth]), using: &rng)
        XCTAssertEqual(output.summary.added.map(\.leafIndex), [LeafIndex(1), LeafIndex(2)])
        try creator.mergePendingCommit()
        guard let welcome = output.welcome else { return XCTFail("no Welcome") }
        assertAgree([creator, try MLSGroup.join(welcome: welcome, keyPackage: stranger),
                     try MLSGroup.join(welcome: welcome, keyPackage: basicBoth)])
    }
}
