import Foundation
import FuzzTargets
import TestSupport
import XCTest

/// The Pigeon fuzz targets (the functions `make fuzz` runs under libFuzzer) over their seed
/// corpora (`Tests/Fixtures/fuzz/pigeon-*`, taken from the vectors), their generated seeds and
/// deterministic mutations, as FuzzSmokeTests does for the other targets: a crash ends the
/// process, a broken property fails the test; generated seeds must reach the engine.
final class PigeonFuzzSmokeTests: XCTestCase {
    func smoke(_ target: any FuzzTarget.Type, mutations: Int) throws -> (generated: [String: FuzzOutcome], histogram: [FuzzOutcome: Int]) {
        let directory = Fixtures.url("fuzz/\(target.name)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        XCTAssertFalse(names.isEmpty, "no seed corpus for \(target.name)")
        let files = try names.map { Array(try Data(contentsOf: directory.appendingPathComponent($0))) }
        let generated = try FuzzSeeds.generated(for: target.name)
        XCTAssertFalse(generated.isEmpty)
        var histogram: [FuzzOutcome: Int] = [:]
        var outcomes: [String: FuzzOutcome] = [:]
        func run(_ input: [UInt8], _ label: String) -> FuzzOutcome? {
            do {
                let outcome = try target.run(input)
                histogram[outcome, default: 0] += 1
                return outcome
            } catch {
                XCTFail("\(label): \(error) — input of \(input.count) bytes")
                return nil
            }
        }
        for (name, bytes) in zip(names, files) { _ = run(bytes, "seed \(name)") }
        for seed in generated { outcomes[seed.name] = run(seed.bytes, "generated \(seed.name)") }
        let pool = files + generated.map(\.bytes)
        var rng = SplitMix64(seedingFrom: Array(target.name.utf8))
        for i in 0..<mutations {
            let base = pool[Int(rng.next() % UInt64(pool.count))], other = pool[Int(rng.next() % UInt64(pool.count))]
            _ = run(ByteEdits.mutate(base, splicing: other, using: &rng), "mutation \(i)")
        }
        return (outcomes, histogram)
    }

    func testPigeonFrame() throws {
        let result = try smoke(PigeonFrameTarget.self, mutations: 1500)
        XCTAssertEqual(result.generated["message-s1-0"], .accepted("message"))
        XCTAssertEqual(result.generated["message-s1-1"], .accepted("message"))
        XCTAssertEqual(result.generated["handshake3-s2"], .accepted("handshake3"))
        XCTAssertEqual(result.generated["handshake1-s2"], .accepted("handshake1.duplicate"))
        XCTAssertEqual(result.generated["message-s2"], .accepted("message.held"))
        XCTAssertEqual(result.generated["message-s1-0-base64"], .accepted("message"))
        // Mutations reach the engine's refusals, not only the frame parser.
        XCTAssertTrue(result.histogram.keys.contains(.rejected("deliver.decrypt_failed")), "\(result.histogram)")
    }

    func testPigeonCard() throws {
        let result = try smoke(PigeonCardTarget.self, mutations: 1500)
        for name in ["alice", "bob", "alice-text", "bob-qr"] {
            XCTAssertTrue(result.generated[name]?.isAccepted ?? false, name)
        }
        XCTAssertTrue(result.histogram.keys.contains(.rejected("bad_signature")), "\(result.histogram)")
        XCTAssertTrue(result.histogram.keys.contains(.rejected("bad_card")), "\(result.histogram)")
    }
}
