import Foundation
import XCTest

/// The seed of a randomized test: `BURROW_TEST_SEED` (decimal or 0x-hex) when set, so a failing
/// run replays, else the test's own fixed seed, so CI is repeatable (`make soak` sets a fresh one
/// per run). Everything random in such a test — kill instants, relay chaos, MDK actions — draws
/// from a `SplitMix64` made from it.
public enum TestSeed {
    public static let environmentKey = "BURROW_TEST_SEED"

    public static func value(default fixed: UInt64) -> UInt64 {
        guard let text = ProcessInfo.processInfo.environment[environmentKey]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else {
            return fixed
        }
        if text.lowercased().hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16) ?? fixed }
        return UInt64(text) ?? fixed
    }
}

/// A test case whose failures name the seed that replays them (`BURROW_TEST_SEED=…`), and that
/// keeps a failing round's evidence in `artifacts` (under `BURROW_TEST_ARTIFACTS`, default
/// `/tmp/burrow-test-artifacts`).
open class SeededTestCase: XCTestCase {
    public private(set) var seed: UInt64 = 0
    public private(set) var artifacts: URL!

    /// The seed this test uses when `BURROW_TEST_SEED` is not set.
    open var defaultSeed: UInt64 { 0x5EED }

    open override func setUp() async throws {
        try await super.setUp()
        seed = TestSeed.value(default: defaultSeed)
        let base = ProcessInfo.processInfo.environment["BURROW_TEST_ARTIFACTS"] ?? "/tmp/burrow-test-artifacts"
        artifacts = URL(fileURLWithPath: base).appendingPathComponent("\(type(of: self))-\(seed)-\(UUID().uuidString.prefix(6))")
        print("\(name): seed \(seed) (replay with \(TestSeed.environmentKey)=\(seed))")
    }

    open override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        super.recordFailure(withDescription: "[\(TestSeed.environmentKey)=\(seed)] " + description, inFile: filePath, atLine: lineNumber,
                            expected: expected)
    }

    /// Writes `text` to `artifacts/name` (a failing round's evidence); returns the path.
    @discardableResult
    public func keepArtifact(_ name: String, _ text: String) -> String {
        try? FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
        let url = artifacts.appendingPathComponent(name)
        try? text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}
