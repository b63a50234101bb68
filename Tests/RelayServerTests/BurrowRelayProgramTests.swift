import Foundation
import Nostr
import RelayClient
import XCTest
import TestSupport

/// The `burrow-relay` program built beside the test bundle: `--help`, a refused configuration,
/// serving with a config file and flags, a clean stop on SIGTERM, and its data kept for the
/// next start.
final class BurrowRelayProgramTests: XCTestCase {
    static var binary: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // swift-corelibs-xctest runs `<config>/BurrowPackageTests.xctest`; the programs sit beside it.
        if directory.lastPathComponent.hasSuffix(".xctest") { directory = directory.deletingLastPathComponent() }
        return directory.appendingPathComponent("burrow-relay")
    }

    /// One run of the program with pipes, stopped by signal or killed when released.
    final class Program: @unchecked Sendable {
        let process = Process()
        private let out = Pipe()
        private let err = Pipe()
        private let lock = NSLock()
        private var stdout = Data()
        private var stderr = Data()

        init(_ arguments: [String]) throws {
            process.executableURL = BurrowRelayProgramTests.binary
            process.arguments = arguments
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            out.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                self?.lock.withLock { self?.stdout.append(data) }
            }
            err.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                self?.lock.withLock { self?.stderr.append(data) }
            }
            try process.run()
        }

        deinit {
            if process.isRunning { process.terminate() }
            out.fileHandleForReading.readabilityHandler = nil
            err.fileHandleForReading.readabilityHandler = nil
        }

        var output: String { lock.withLock { String(decoding: stdout, as: UTF8.self) } }
        var errors: String { lock.withLock { String(decoding: stderr, as: UTF8.self) } }

        /// Waits for the process to exit and returns its status (killed after `seconds`).
        func exitStatus(within seconds: Double) async throws -> Int32 {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while process.isRunning {
                if ContinuousClock.now > deadline {
                    kill(process.processIdentifier, SIGKILL)
                    throw TestFailure("burrow-relay did not exit within \(seconds) s; stderr: \(errors)")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            try await Task.sleep(for: .milliseconds(100))  // let the readers drain
            return process.terminationStatus
        }

        /// The `ws://` URL from the "listening on" line.
        func listeningURL(within seconds: Double = 20) async throws -> String {
            var url: String?
            try await eventually("the listening line", seconds: seconds) {
                if let range = output.range(of: "listening on ") {
                    url = output[range.upperBound...].split(separator: " ").first.map(String.init)
                }
                return url != nil || !process.isRunning
            }
            guard let url else { throw TestFailure("burrow-relay exited: \(errors)") }
            return url
        }
    }

    func testProgramServesStopsCleanlyOnSIGTERMAndKeepsItsData() async throws {
        try await bounded(120) {
            let fm = FileManager.default
            XCTAssertTrue(fm.isExecutableFile(atPath: Self.binary.path), "build burrow-relay first: \(Self.binary.path)")
            let directory = fm.temporaryDirectory.appendingPathComponent("burrow-relay-program-\(UUID().uuidString)")
            try fm.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? fm.removeItem(at: directory) }

            let help = try Program(["--help"])
            let helpStatus = try await help.exitStatus(within: 20)
            XCTAssertEqual(helpStatus, 0)
            for flag in ["--config", "--data", "--host", "--port", "--public-url", "--max-event-bytes"] {
                XCTAssertTrue(help.output.contains(flag), "--help lacks \(flag)")
            }

            let badConfig = directory.appendingPathComponent("bad.json")
            try Data(#"{"limits": {"max_event_byte": 1}}"#.utf8).write(to: badConfig)
            let refused = try Program(["--config", badConfig.path, "--port", "0"])
            let refusedStatus = try await refused.exitStatus(within: 20)
            XCTAssertNotEqual(refusedStatus, 0)
            XCTAssertTrue(refused.errors.contains("limits.max_event_byte"), refused.errors)

            let config = directory.appendingPathComponent("relay.json")
            try Data(#"{"info": {"name": "Test family relay"}, "limits": {"query_limit": 50}}"#.utf8).write(to: config)
            let data = directory.appendingPathComponent("data").path
            let arguments = ["--config", config.path, "--data", data, "--port", "0", "--log-level", "warning"]
            let note = try TestEvents.sign(kind: 1, content: "from the program test", tags: [["t", "program"]], keys: TestEvents.keys())

            var program = try Program(arguments)
            var url = try await program.listeningURL()
            XCTAssertTrue(url.hasPrefix("ws://127.0.0.1:"), url)
            let pool = try RelayPool(urls: [url], authKeys: nil)
            let answer = await pool.publish(note, timeout: .seconds(10))
            XCTAssertEqual(answer.first?.accepted, true, "\(answer)")
            await pool.close()
            kill(program.process.processIdentifier, SIGTERM)
            let status = try await program.exitStatus(within: 30)
            XCTAssertEqual(status, 0, program.errors)
            XCTAssertTrue(program.errors.contains("stopped"), program.errors)
            XCTAssertTrue(fm.fileExists(atPath: data + "/relay.sqlite"))

            program = try Program(arguments)
            url = try await program.listeningURL()
            let reader = try RelayPool(urls: [url], authKeys: nil)
            let fetched = try await reader.fetch(Filter(tags: ["t": ["program"]]), timeout: .seconds(10))
            XCTAssertEqual(fetched.events, [note])
            await reader.close()
            kill(program.process.processIdentifier, SIGINT)
            let secondStatus = try await program.exitStatus(within: 30)
            XCTAssertEqual(secondStatus, 0, program.errors)
        }
    }
}
