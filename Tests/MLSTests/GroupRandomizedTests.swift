import MLS
import XCTest
import TestSupport

/// Acceptance test of the group engine: 3–10 in-process members run 200 epochs of random adds,
/// removes, self-updates (some rotating the signature key), SelfRemoves and mixed commits, with
/// application messages delivered shuffled and up to four epochs late. Every member must agree
/// on the epoch authenticator and the member list after every commit and decrypt every
/// message; members are regularly serialized and restored mid-run. Seeded, so a failure replays.
final class GroupRandomizedTests: XCTestCase {
    private struct InFlight {
        let message: MLSMessage
        let payload: [UInt8]
        let sender: Int
        let epoch: UInt64
        let deliverAt: UInt64
        var recipients: [Int]
    }

    private struct Run {
        var rng: SplitMix64
        var members: [Int: MLSGroup] = [:]
        var nextID = 0
        var inFlight: [InFlight] = []
        var sent = 0
        var delivered = 0
        var restores = 0
        var actions: [String: Int] = [:]
        let now = GroupTestSupport.now

        var ids: [Int] { members.keys.sorted() }

        static func configuration(for id: Int) -> GroupConfiguration {
            var configuration = GroupConfiguration()
            // Half the members send handshakes as PublicMessage: receivers must take both.
            if id % 2 == 1 { configuration.handshakeWireFormat = .publicMessage }
            return configuration
        }

        mutating func pick(_ from: [Int]) -> Int { from[Int(rng.next() % UInt64(from.count))] }
        mutating func chance(_ percent: UInt64) -> Bool { rng.next() % 100 < percent }

        mutating func sendApplicationMessages() throws {
            for id in ids where chance(35) {
                guard var group = members[id] else { continue }
                for k in 0..<Int(rng.next() % 2 + 1) {
                    let payload = Array("\(id)/\(group.epoch)/\(k)/\(sent)".utf8)
                    let message = try group.encryptApplicationMessage(payload, using: &rng)
                    let late = chance(30) ? rng.next() % 5 : 0
                    inFlight.append(InFlight(message: message, payload: payload, sender: id, epoch: group.epoch,
                                             deliverAt: group.epoch + late, recipients: ids.filter { $0 != id }))
                    sent += 1
                }
                members[id] = group
            }
        }

        /// Delivers every message due at the current epoch, to each recipient in its own
        /// random order; recipients who left meanwhile are skipped.
        mutating func deliver(all: Bool = false) throws {
            guard let epoch = members.values.first?.epoch else { return }
            var due = inFlight.filter { all || $0.deliverAt <= epoch }
            inFlight.removeAll { all || $0.deliverAt <= epoch }
            for id in ids {
                guard var group = members[id] else { continue }
                due.shuffle(using: &rng)
                for item in due where item.recipients.contains(id) {
                    guard case .application(let app) = try group.process(item.message, at: now) else {
                        throw MLSError.invalidCommit("expected application data")
                    }
                    guard app.data == item.payload, app.epoch == item.epoch,
                          app.sender.identity == GroupTestSupport.identity(item.sender) else {
                        throw MLSError.invalidCommit("application message decrypted to the wrong content or sender")
                    }
                    delivered += 1
                }
                members[id] = group
            }
        }

        /// Everyone but the committer processes the commit; new members join by the Welcome.
        mutating func distribute(_ output: CommitOutput, committer: Int, joiners: [(Int, KeyPackageBundle)]) throws {
            guard var group = members[committer] else { return }
            try group.mergePendingCommit()
            members[committer] = group
            for id in ids where id != committer {
                guard var member = members[id] else { continue }
                guard case .commit(let summary) = try member.process(output.commit, at: now) else {
                    throw MLSError.invalidCommit("expected a commit")
                }
                if summary.removedSelf {
                    members[id] = nil
                    for i in inFlight.indices { inFlight[i].recipients.removeAll { $0 == id } }
                } else {
                    members[id] = member
                }
            }
            for (id, bundle) in joiners {
                guard let welcome = output.welcome else { throw MLSError.invalidWelcome("commit with adds lacks a Welcome") }
                members[id] = try MLSGroup.join(welcome: welcome, keyPackage: bundle, configuration: Self.configuration(for: id))
            }
        }

        mutating func newJoiners(_ count: Int) throws -> [(Int, KeyPackageBundle)] {
            try (0..<count).map { _ in
                nextID += 1
                return (nextID, try GroupTestSupport.keyPackage(nextID, using: &rng))
            }
        }

        mutating func commitRandomChange() throws {
            let count = members.count
            var choices = ["update"]
            if count < 10 { choices += ["add", "add"] }
            if count > 3 { choices += ["remove", "selfRemove"] }
            if count > 3 && count < 10 { choices.append("addAndRemove") }
            let action = choices[Int(rng.next() % UInt64(choices.count))]
            actions[action, default: 0] += 1
            let committer = pick(ids)
            guard var group = members[committer] else { return }
            switch action {
            case "add", "addAndRemove":
                let joiners = try newJoiners(action == "add" ? Int(rng.next() % UInt64(min(2, 10 - count))) + 1 : 1)
                let removed = action == "addAndRemove" ? [leaf(of: pick(ids.filter { $0 != committer }), in: group)] : []
                let output = try group.commit(adding: try joiners.map { try GroupTestSupport.verified($0.1) }, removing: removed,
                                              using: &rng)
                members[committer] = group
                try distribute(output, committer: committer, joiners: joiners)
            case "remove":
                let output = try group.removeMembers([leaf(of: pick(ids.filter { $0 != committer }), in: group)], using: &rng)
                members[committer] = group
                try distribute(output, committer: committer, joiners: [])
            case "selfRemove":
                let leaver = pick(ids)
                guard var leaving = members[leaver] else { return }
                let proposal = try leaving.proposeSelfRemove(using: &rng)
                members[leaver] = leaving
                for id in ids where id != leaver {
                    guard var member = members[id] else { continue }
                    guard case .proposal = try member.process(proposal, at: now) else { throw MLSError.invalidProposal("expected a proposal") }
                    members[id] = member
                }
                let remover = pick(ids.filter { $0 != leaver })
                guard var committing = members[remover] else { return }
                let output = try committing.commitPendingProposals(using: &rng)
                members[remover] = committing
                try distribute(output, committer: remover, joiners: [])
            default:
                let newSigner = chance(50) ? try SignaturePrivateKey.generate(using: &rng) : nil
                let output = try group.selfUpdate(newSigner: newSigner, using: &rng)
                members[committer] = group
                try distribute(output, committer: committer, joiners: [])
            }
        }

        func leaf(of id: Int, in group: MLSGroup) -> LeafIndex {
            group.members.first { $0.identity == GroupTestSupport.identity(id) }?.leafIndex ?? LeafIndex(UInt32.max)
        }

        mutating func restoreOne() throws {
            let id = pick(ids)
            guard let group = members[id] else { return }
            members[id] = try MLSGroup(serialized: group.serialized())
            restores += 1
        }
    }

    func testTwoHundredRandomEpochs() throws {
        var run = Run(rng: SplitMix64(seed: 0xB0_77_0E))
        var creator = try GroupTestSupport.createGroup(0, configuration: Run.configuration(for: 0), using: &run.rng)
        run.members[0] = creator
        let joiners = try run.newJoiners(2)
        let first = try creator.addMembers(try joiners.map { try GroupTestSupport.verified($0.1) }, using: &run.rng)
        run.members[0] = creator
        try run.distribute(first, committer: 0, joiners: joiners)

        let startEpoch = creator.epoch + 1
        for round in 0..<200 {
            try run.sendApplicationMessages()
            try run.deliver()
            try run.commitRandomChange()
            if round % 7 == 3 { try run.restoreOne() }

            let groups = run.ids.compactMap { run.members[$0] }
            XCTAssert((3...10).contains(groups.count), "round \(round): \(groups.count) members")
            guard let reference = groups.first else { return XCTFail("no members left") }
            XCTAssertEqual(reference.epoch, startEpoch + UInt64(round) + 1)
            for group in groups {
                XCTAssertEqual(group.epoch, reference.epoch, "round \(round)")
                XCTAssertEqual(group.epochAuthenticator, reference.epochAuthenticator, "round \(round): epoch authenticators differ")
                XCTAssertEqual(group.members.map(\.identity), reference.members.map(\.identity), "round \(round)")
            }
            XCTAssertEqual(Set(reference.members.compactMap(\.identity)), Set(run.ids.map(GroupTestSupport.identity)))
        }
        try run.deliver(all: true)
        XCTAssertTrue(run.inFlight.isEmpty)
        XCTAssertGreaterThan(run.delivered, 1000, "\(run.delivered) deliveries")
        XCTAssertGreaterThan(run.restores, 20)
        for action in ["add", "remove", "selfRemove", "update", "addAndRemove"] {
            XCTAssertGreaterThan(run.actions[action, default: 0], 5, action)
        }
    }
}
