import Foundation
import Backup
import FuzzTargets
import MLS
import Marmot
import TestSupport
import XCTest
import Nostr

/// Runs every fuzz target's entry point (the functions libFuzzer calls under `make fuzz`) over
/// its checked-in seed corpus, the seeds the code generates, and a few thousand deterministic
/// mutations of them (flips, sets, inserts, deletes, truncations, splices). A crash would end
/// the test process; a broken property (round trip, unchanged state) fails the test with the
/// input. Seeds meant to reach deep code are checked to get there.
final class FuzzSmokeTests: XCTestCase {
    /// Seed files of a target, by name.
    func corpus(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        let directory = Fixtures.url("fuzz/\(target)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return try names.map { ($0, Array(try Data(contentsOf: directory.appendingPathComponent($0)))) }
    }

    /// Runs `input`, failing the test on a property violation; returns the outcome.
    @discardableResult
    func run(_ target: any FuzzTarget.Type, _ input: [UInt8], _ label: String,
             file: StaticString = #filePath, line: UInt = #line) -> FuzzOutcome? {
        do {
            return try target.run(input)
        } catch {
            let prefix = input.prefix(48).map { String(format: "%02x", $0) }.joined()
            XCTFail("\(label): \(error) — input (\(input.count) bytes) starts \(prefix)", file: file, line: line)
            return nil
        }
    }

    /// Seeds, generated seeds and `mutations` mutations; returns the outcomes of the generated
    /// seeds by name and how often each outcome occurred overall.
    func smoke(_ target: any FuzzTarget.Type, mutations: Int,
               file: StaticString = #filePath, line: UInt = #line) throws -> (generated: [String: FuzzOutcome], histogram: [FuzzOutcome: Int]) {
        let files = try corpus(target.name)
        XCTAssertFalse(files.isEmpty, "no seed corpus for \(target.name)", file: file, line: line)
        let generated = try FuzzSeeds.generated(for: target.name)
        XCTAssertFalse(generated.isEmpty, "no generated seeds for \(target.name)", file: file, line: line)

        var histogram: [FuzzOutcome: Int] = [:]
        var generatedOutcomes: [String: FuzzOutcome] = [:]
        for seed in files {
            if let outcome = run(target, seed.bytes, "seed file \(seed.name)", file: file, line: line) { histogram[outcome, default: 0] += 1 }
        }
        for seed in generated {
            if let outcome = run(target, seed.bytes, "generated seed \(seed.name)", file: file, line: line) {
                generatedOutcomes[seed.name] = outcome
                histogram[outcome, default: 0] += 1
            }
        }
        let pool = files.map(\.bytes) + generated.map(\.bytes)
        var rng = SplitMix64(seedingFrom: Array(target.name.utf8))
        for i in 0..<mutations {
            let base = pool[Int(rng.next() % UInt64(pool.count))]
            let other = pool[Int(rng.next() % UInt64(pool.count))]
            let input = ByteEdits.mutate(base, splicing: other, using: &rng)
            if let outcome = run(target, input, "mutation \(i)", file: file, line: line) { histogram[outcome, default: 0] += 1 }
        }
        // Raw random inputs too.
        for i in 0..<(mutations / 10) {
            let input = (0..<Int(rng.next() % 300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if let outcome = run(target, input, "random input \(i)", file: file, line: line) { histogram[outcome, default: 0] += 1 }
        }
        return (generatedOutcomes, histogram)
    }

    func assertAccepted(_ outcomes: [String: FuzzOutcome], _ names: [String], file: StaticString = #filePath, line: UInt = #line) {
        for name in names {
            guard let outcome = outcomes[name] else { XCTFail("no generated seed \(name)", file: file, line: line); continue }
            XCTAssertTrue(outcome.isAccepted, "generated seed \(name): \(outcome)", file: file, line: line)
        }
    }

    func accepted(_ histogram: [FuzzOutcome: Int]) -> Int { histogram.filter { $0.key.isAccepted }.values.reduce(0, +) }

    func testMLSMessage() throws {
        let result = try smoke(MLSMessageTarget.self, mutations: 3000)
        XCTAssertEqual(result.generated["welcome-to-fixture"], .accepted("Welcome.join"))
        XCTAssertEqual(result.generated["group-info"], .accepted("GroupInfo"))
        XCTAssertEqual(result.generated["key-package"], .accepted("KeyPackage"))
        assertAccepted(result.generated, ["group-info-message", "key-package-message", "message-chat", "message-self-remove",
                                          "message-self-update"])
        XCTAssertGreaterThan(accepted(result.histogram), 100)
    }

    func testGroupData() throws {
        let result = try smoke(GroupDataTarget.self, mutations: 3000)
        assertAccepted(result.generated, ["v1", "v2", "v2-image", "v3", "v4-unknown-fields", "relay-0", "relay-4"])
        XCTAssertGreaterThan(accepted(result.histogram), 100)
    }

    /// Inputs libFuzzer found for the two relay-URL behaviours `GroupDataTarget` documents
    /// (shared with rust-nostr's `RelayUrl`, kept for byte compatibility with MDK).
    func testGroupDataKnownRelayURLBehaviours() throws {
        for url in ["wss:./0:0://", "wss://a.b/c/.", "wss://a.b/c/.."] {
            XCTAssertEqual(run(GroupDataTarget.self, Array(url.utf8), url), .accepted("RelayURL"))
        }
        let data = NostrGroupData(nostrGroupID: [UInt8](repeating: 7, count: 32), name: "x", admins: [],
                                  relays: [try RelayURL("wss://a.b/c/.")])
        XCTAssertEqual(run(GroupDataTarget.self, try data.extensionData(), "trailing dot segment"), .accepted("NostrGroupData"))
        // The relay as a peer could write it: it decodes, but what we would write back does not.
        var w = TLSWriter()
        w.writeUInt16(2)
        w.writeRaw([UInt8](repeating: 7, count: 32))
        for field in [Array("x".utf8), []] { w.writeOpaque(field) }
        w.writeVector { _ in }
        w.writeVector { $0.writeOpaque(Array("wss:./0:0://".utf8)) }
        for _ in 0..<4 { w.writeOpaque([UInt8]()) }
        XCTAssertEqual(run(GroupDataTarget.self, w.bytes, "repeated scheme separator"),
                       .accepted("NostrGroupData (relay unreadable once written)"))
    }

    func testEventJSON() throws {
        let result = try smoke(EventJSONTarget.self, mutations: 3000)
        XCTAssertEqual(result.generated["event"], .accepted("Event"))
        XCTAssertEqual(result.generated["rumor"], .accepted("Rumor"))
        XCTAssertEqual(result.generated["filter"], .accepted("Filter"))
        XCTAssertEqual(result.generated["req"], .accepted("ClientMessage"))
        XCTAssertGreaterThan(accepted(result.histogram), 100)
    }

    func testNIP44() throws {
        let result = try smoke(NIP44Target.self, mutations: 2000)
        for (name, outcome) in result.generated {
            XCTAssertEqual(outcome, .accepted("plaintext"), "generated seed \(name)")
        }
        XCTAssertGreaterThan(accepted(result.histogram), 20)
        XCTAssertGreaterThan(result.histogram[.rejected("padding"), default: 0], 20)
    }

    func testMarmotEvent() throws {
        let result = try smoke(MarmotEventTarget.self, mutations: 1500)
        XCTAssertEqual(result.generated["key-package"], .accepted("KeyPackageEvent"))
        XCTAssertEqual(result.generated["legacy-key-package"], .accepted("KeyPackageEvent"))
        XCTAssertEqual(result.generated["relay-list"], .accepted("KeyPackageRelayList"))
        XCTAssertEqual(result.generated["group-event"], .accepted("GroupEvent"))
        XCTAssertEqual(result.generated["welcome-rumor"], .accepted("Welcome.join"))
        XCTAssertEqual(result.generated["join-request"], .accepted("JoinRequest"))
        assertAccepted(result.generated, ["location", "chat", "whistle-chat", "leave", "reaction", "deletion"])
    }

    /// Every genuine template is accepted by the receiver through every mode, and mutations are
    /// refused at many different checks inside MLS and Marmot (not only at decoding).
    func testGroupEvent() throws {
        let result = try smoke(GroupEventTarget.self, mutations: 400)
        for (name, outcome) in result.generated where name != "edited-message" {
            XCTAssertTrue(outcome.isAccepted, "generated seed \(name): \(outcome)")
        }
        XCTAssertEqual(result.generated["content-self-update"], .accepted("commit"))
        XCTAssertEqual(result.generated["message-chat"], .accepted("application"))
        XCTAssertEqual(result.generated["content-self-remove"], .accepted("proposal"))
        let shallow: Set<String> = ["header", "protect", "proposal", "commit", "edited body", "rumor", "MLSMessage"]
        let deep = Set(result.histogram.keys.compactMap { outcome -> String? in
            if case .rejected(let stage) = outcome, !shallow.contains(stage) { return stage }
            return nil
        })
        XCTAssertGreaterThanOrEqual(deep.count, 5, "rejections inside the group: \(deep.sorted())")
    }
}

extension FuzzSmokeTests {
    func testBackupFile() throws {
        let result = try smoke(BackupFileTarget.self, mutations: 300)
        for (name, outcome) in result.generated { XCTAssertEqual(outcome, .accepted("content"), "generated seed \(name)") }
        XCTAssertGreaterThan(result.histogram[.rejected("corrupt"), default: 0], 10)
        XCTAssertGreaterThan(result.histogram[.rejected("authentication"), default: 0] + result.histogram[.rejected("passphrase"), default: 0], 5)
    }

    func testFeedEnvelope() throws {
        let result = try smoke(FeedEnvelopeTarget.self, mutations: 2000)
        XCTAssertGreaterThan(result.histogram[.accepted("envelope"), default: 0], 4, "the vector envelopes decode")
        XCTAssertGreaterThan(result.histogram[.rejected("bad_json"), default: 0], 10)
        XCTAssertGreaterThan(result.histogram[.rejected("non_canonical"), default: 0] + result.histogram[.rejected("bad_envelope"), default: 0], 10)
    }

    func testFeedSyncFrame() throws {
        let result = try smoke(FeedSyncFrameTarget.self, mutations: 2000)
        for (name, outcome) in result.generated { XCTAssertTrue(outcome.isAccepted, "generated seed \(name): \(outcome)") }
        XCTAssertGreaterThan(result.histogram[.rejected("bad_frame"), default: 0], 100)
    }
}
