import Foundation

/// Fuzz targets for the parsers that take untrusted bytes (MLS and its TLS codec, Marmot's
/// 0xF2EE group data and event contents, NIP-01 JSON, NIP-44 payloads) and a structure-aware
/// target that feeds mutated MLS content to a real group inside correctly encrypted and signed
/// kind-445 events.
///
/// Each target is a plain function so the same code runs under libFuzzer (`make fuzz`, the
/// `Fuzz/` package) and over the seed corpora in the normal test build (FuzzSmokeTests).
/// Rejecting an input is the expected outcome for almost all of them; a crash or a broken
/// property (a value that does not survive re-encoding, a group changed by a message it
/// refused) is a finding.
public protocol FuzzTarget: SendableMetatype {
    /// The executable is `fuzz-<name>`; its seeds live in `Tests/Fixtures/fuzz/<name>/`.
    static var name: String { get }

    /// Runs one input. Throws only `PropertyViolation`, when the code under test broke a
    /// promise; inputs the code rightly refuses return `.rejected`.
    @discardableResult
    static func run(_ bytes: [UInt8]) throws -> FuzzOutcome
}

/// How far one input got, so tests can check that seeds reach the code they are meant for.
public enum FuzzOutcome: Hashable, Sendable, CustomStringConvertible {
    /// Refused at `stage` (e.g. "json", "mls.process").
    case rejected(String)
    /// Accepted as `what` (e.g. "MLSMessage.welcome", "group.commit").
    case accepted(String)

    public var isAccepted: Bool {
        if case .accepted = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .rejected(let stage): return "rejected at \(stage)"
        case .accepted(let what): return "accepted as \(what)"
        }
    }
}

/// A property the code under test promises did not hold: libFuzzer turns it into a crash with
/// this text, the smoke tests into a failure. Never carries secret material.
public struct PropertyViolation: Error, CustomStringConvertible {
    public let target: String
    public let property: String

    public init(_ target: String, _ property: String) {
        self.target = target
        self.property = property
    }

    public var description: String { "\(target): \(property)" }
}

/// Every target, in the order `make fuzz` runs them.
public enum FuzzTargets {
    public static let all: [any FuzzTarget.Type] = [
        MLSMessageTarget.self, GroupDataTarget.self, EventJSONTarget.self, NIP44Target.self, MarmotEventTarget.self,
        GroupEventTarget.self, PigeonFrameTarget.self, PigeonCardTarget.self, MeshPacketTarget.self, MeshFragmentTarget.self,
        BackupFileTarget.self,
        FeedEnvelopeTarget.self,
        FeedSyncFrameTarget.self,
    ]

    public static func target(named name: String) -> (any FuzzTarget.Type)? {
        all.first { $0.name == name }
    }
}

/// The libFuzzer hooks' bodies. `initialize` runs once before the corpus is read: it makes the
/// target's fixtures (so the first input does not pay for them) and, when
/// `BURROW_FUZZ_SEED_DIR` names a directory, writes the generated seeds there. `run` is the
/// body of `LLVMFuzzerTestOneInput`: one input, a trap on a broken property (so libFuzzer saves
/// the input as a crash), 0 otherwise.
public enum LibFuzzerEntry {
    public static func initialize(_ target: any FuzzTarget.Type) -> Int32 {
        if let directory = ProcessInfo.processInfo.environment["BURROW_FUZZ_SEED_DIR"], !directory.isEmpty {
            do {
                try FuzzSeeds.write(for: target.name, to: URL(fileURLWithPath: directory))
            } catch {
                fatalError("writing the generated seeds of \(target.name) failed: \(error)")
            }
        }
        _ = try? target.run([])
        return 0
    }

    public static func run(_ target: any FuzzTarget.Type, _ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
        do {
            try target.run(bytes)
        } catch {
            // The one intended crash: a property of the code under test broke on this input.
            fatalError("property violated: \(error)")
        }
        return 0
    }
}
