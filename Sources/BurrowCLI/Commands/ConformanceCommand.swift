import ArgumentParser
import Conformance
import Foundation

/// `burrow conformance …`: runs every case of a published vector file and prints
/// `N passed, M failed[, K skipped]` as the last line (exit 1 when M > 0 or N = 0: a file in
/// which nothing passed proves nothing).
struct ConformanceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conformance",
        abstract: "Run a published conformance vector file.",
        subcommands: [BIP340.self, NIP44.self, MLS.self, Pigeon.self, Noise.self, Mesh.self, Feed.self]
    )

    struct BIP340: VectorFileCommand {
        static let configuration = CommandConfiguration(commandName: "bip340", abstract: "BIP-340 test-vectors.csv")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The vector file.") var file: String
        static func run(_ bytes: [UInt8]) -> ConformanceReport { BIP340Conformance.run(csv: String(decoding: bytes, as: UTF8.self)) }
    }

    struct NIP44: VectorFileCommand {
        static let configuration = CommandConfiguration(commandName: "nip44", abstract: "NIP-44 v2 nip44.vectors.json")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The vector file.") var file: String
        static func run(_ bytes: [UInt8]) -> ConformanceReport { NIP44Conformance.run(json: bytes) }
    }

    struct MLS: AsyncRunnable {
        static let configuration = CommandConfiguration(
            commandName: "mls",
            abstract: "An mlswg test-vector file: TEST is its name without .json (passive-client for passive-client-*.json)."
        )
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "tree-math, crypto-basics, secret-tree, message-protection, key-schedule, psk_secret, transcript-hashes, welcome, tree-operations, tree-validation, treekem, messages, deserialization, passive-client")
        var test: String
        @Argument(help: "The vector file.") var file: String

        mutating func runAsync() async throws {
            let bytes = try ConformanceCommand.read(file, json: globals.json)
            try ConformanceCommand.finish(MLSConformance.run(test: test, json: bytes), json: globals.json)
        }
    }

    struct Pigeon: VectorFileCommand {
        static let configuration = CommandConfiguration(
            commandName: "pigeon",
            abstract: "A Pigeon DM vector file (cards.json, reject.json, conversations.json, transport.json)."
        )
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The vector file.") var file: String
        static func run(_ bytes: [UInt8]) -> ConformanceReport { PigeonConformance.run(json: bytes) }
    }

    struct Noise: VectorFileCommand {
        static let configuration = CommandConfiguration(
            commandName: "noise",
            abstract: "A Noise test-vector file (cacophony/snow/noise-c format); Noise_XX_25519_ChaChaPoly_SHA256 cases run."
        )
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The vector file.") var file: String
        static func run(_ bytes: [UInt8]) -> ConformanceReport { NoiseConformance.run(json: bytes) }
    }

    struct Mesh: VectorFileCommand {
        static let configuration = CommandConfiguration(
            commandName: "mesh",
            abstract: "A Burrow mesh vector file (packets, fragments, reject, payloads, forwarding, cpace, invite)."
        )
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The vector file.") var file: String
        static func run(_ bytes: [UInt8]) -> ConformanceReport { MeshConformance.run(json: bytes) }
    }

    struct Feed: VectorFileCommand {
        static let configuration = CommandConfiguration(
            commandName: "feed",
            abstract: "A feed vector file (envelopes, audiences, reject, pq, sync); kinds not built yet (sync, relay) count as skipped.")
        @OptionGroup var globals: GlobalOptions
        @Argument(help: "The vector file.") var file: String
        static func run(_ bytes: [UInt8]) -> ConformanceReport { FeedConformance.run(json: bytes) }
    }

    static func read(_ path: String, json: Bool) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            Console.report(CLIError(.invalid_input, "cannot read \(path)"), json: json)
            throw ExitCode(1)
        }
        return Array(data)
    }

    static func finish(_ report: ConformanceReport, json: Bool) throws {
        if json {
            var fields: [(String, JSONOutput)] = [
                ("ok", .bool(report.succeeded)),
                ("passed", .int(report.passed)), ("failed", .int(report.failed)), ("skipped", .int(report.skipped)),
                ("failures", .array(report.failures.map { .string($0) })),
            ]
            if !report.succeeded {
                let message = report.passed == 0 && report.failed == 0 ? "no case passed: \(report.summaryLine)" : report.summaryLine
                fields.append(("error", .object([("code", .string("invalid_input")), ("message", .string(message))])))
            }
            Console.out(JSONOutput.object(fields).serialized)
        } else {
            for failure in report.failures { Console.out("FAIL \(failure)") }
            Console.out(report.summaryLine)
        }
        if !report.succeeded { throw ExitCode(1) }
    }
}

/// A runner that takes one vector file: read it, run it, print the report.
protocol VectorFileCommand: AsyncRunnable {
    var globals: GlobalOptions { get }
    var file: String { get }
    static func run(_ bytes: [UInt8]) -> ConformanceReport
}

extension VectorFileCommand {
    mutating func runAsync() async throws {
        let bytes = try ConformanceCommand.read(file, json: globals.json)
        try ConformanceCommand.finish(Self.run(bytes), json: globals.json)
    }
}
