import Foundation
import Logging
import Nostr
import RelayClient

/// Burrow's relay (`burrow-relay`) and rust-nostr's LocalRelay under the same load, one after
/// the other, each in its own process on 127.0.0.1: 50 clients in this process, each with its
/// own connection (a `RelayPool` of one relay) and key, all subscribed to one filter (kind 1
/// with a `#t` tag unique to the run) and each publishing signed events at a steady pace.
/// Every event goes to all 50 subscribers, the publisher included.
///
/// Per relay: events/s accepted (OK true), delivery latency from just before the EVENT is sent
/// to each subscriber's receipt (after Burrow's client verified it), the relay's peak memory,
/// events accepted but not delivered to every subscriber after a drain, and whether the relay
/// process was still alive at the end.
struct RelayLoadBench: BenchSection {
    let name = "relay"
    let title = "Relay load: burrow-relay beside rust-nostr's LocalRelay, 50 clients on loopback"

    static let clients = 50
    /// Events per second each client publishes: 100 events/s in all, 5,000 deliveries/s, each
    /// verified by the receiving client in this process (the two cores are shared).
    static let eventsPerSecondPerClient = 2.0
    /// Seconds of load per relay at `--seconds 1`.
    static let baseSeconds = 30.0
    /// How long undelivered events are waited for after the last publish.
    static let drainSeconds = 5.0
    /// Rate limits well above the offered load, so neither relay refuses for rate.
    static let perMinuteLimit = 6000

    func run(_ context: BenchContext) throws -> SectionReport {
        var report = SectionReport(table: MarkdownTable(headers: [], rightAligned: []))
        let seconds = Self.baseSeconds * context.seconds
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-bench-relay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        var results: [(String, LoadResult?)] = []
        do {
            let relay = try startBurrowRelay(directory: directory)
            results.append(("burrow-relay (SQLite, WAL)", try measure(relay, seconds: seconds)))
        } catch {
            report.problems.append("burrow-relay not measured: \(error)")
            results.append(("burrow-relay (SQLite, WAL)", nil))
        }
        if context.includePeers {
            do {
                let relay = try RelayBenchProcess(
                    executable: context.python,
                    arguments: [context.peerScript("local_relay.py").path, "--notes-per-minute", String(Self.perMinuteLimit),
                                "--lifetime", String(Int(seconds) + 120)],
                    readyPrefix: "READY ", timeout: 30)
                results.append(("LocalRelay, nostr-sdk 0.45.1 (in memory)", try measure(relay, seconds: seconds)))
            } catch {
                report.problems.append("LocalRelay not measured: \(error)")
                results.append(("LocalRelay, nostr-sdk 0.45.1 (in memory)", nil))
            }
        } else {
            report.notes.append("LocalRelay not run (--no-peers).")
        }

        var table = MarkdownTable(
            headers: ["relay", "published", "accepted/s", "p50 delivery (ms)", "p99 delivery (ms)", "peak RSS (MiB)",
                      "events lost", "alive at end"],
            rightAligned: [1, 2, 3, 4, 5, 6])
        for (label, result) in results {
            guard let result else {
                table.add([label, "—", "—", "—", "—", "—", "—", "—"])
                continue
            }
            table.add([label, Format.rate(Double(result.published)), Format.rate(result.acceptedPerSecond),
                       Self.milliseconds(result.p50), Self.milliseconds(result.p99),
                       result.peakKilobytes.map { String(format: "%.1f", Double($0) / 1024) } ?? "—",
                       "\(result.lost)", result.alive ? "yes" : "**no**"])
            report.problems += result.problems(label: label)
            if let detail = result.detail { report.notes.append("\(label): \(detail)") }
        }
        report.table = table
        report.notes.insert(
            "\(Self.clients) clients in this process, each its own WebSocket connection and key, subscribed to one filter "
                + "(kind 1, a `#t` tag unique to the run) and publishing signed events at \(Self.eventsPerSecondPerClient) events/s "
                + "each (\(Int(Double(Self.clients) * Self.eventsPerSecondPerClient)) events/s offered, every one delivered to all "
                + "\(Self.clients) subscribers) for \(Int(seconds)) s per relay, one relay after the other, each in its own process on "
                + "127.0.0.1 with rate limits raised to \(Self.perMinuteLimit)/min. accepted/s: OK true over the publishing time, "
                + "so paced, not the relay's ceiling. Delivery latency: from just before the EVENT is sent to its receipt by each "
                + "subscriber, after Burrow's client verified id and signature (the clients share this process's cores with the "
                + "relay). Events lost: accepted but not delivered to every subscriber \(Int(Self.drainSeconds)) s after the last "
                + "publish. Peak RSS: the relay process's VmHWM (for LocalRelay, the Python process that hosts it).",
            at: 0)
        return report
    }

    private func startBurrowRelay(directory: URL) throws -> RelayBenchProcess {
        guard let bench = Bundle.main.executableURL else { throw RelayBenchProcess.Failure.missing("this program's path") }
        let binary = bench.resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("burrow-relay")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw RelayBenchProcess.Failure.missing("\(binary.path) (build it: swift build -c release --product burrow-relay)")
        }
        let limit = Self.perMinuteLimit
        let config = directory.appendingPathComponent("burrow-relay.json")
        let json = """
            {"limits": {"events_per_minute": \(limit), "events_per_minute_per_key": \(limit), "requests_per_minute": \(limit)}}
            """
        try Data(json.utf8).write(to: config)
        return try RelayBenchProcess(
            executable: binary,
            arguments: ["--config", config.path, "--data", directory.appendingPathComponent("burrow-relay-data").path,
                        "--host", "127.0.0.1", "--port", "0", "--log-level", "warning"],
            readyPrefix: "burrow-relay listening on ", timeout: 30)
    }

    private func measure(_ relay: RelayBenchProcess, seconds: Double) throws -> LoadResult {
        defer { relay.stop() }
        var result = try runBlocking { try await RelayLoad(url: relay.url, seconds: seconds).run() }
        result.alive = relay.isRunning
        result.peakKilobytes = relay.memoryKilobytes()?.peak
        if !result.alive { result.detail = "the relay exited: \(relay.stderrTail)" }
        return result
    }

    static func milliseconds(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "—" }
        return value >= 100 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
    }
}

/// Runs async work from the benchmark's synchronous sections.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    guard let result = box.result else { throw BenchFailure.check("async work ended without a result") }
    return try result.get()
}

/// The result handed from the detached task to the waiting thread (the semaphore orders them).
/// `@unchecked Sendable`: written once before the semaphore is signalled, read after the wait.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, Error>?
}
