import Foundation

/// What sharing costs a node (issue 23): `burrow run` in its own process with nothing shared,
/// sharing every 10 s, and sharing every hour (a fixed source, one group, a local burrow-relay),
/// each watched for the same wall time. CPU is the process's user + system time over that
/// time; wake-ups are its context switches (voluntary and not) per minute, from /proc; the
/// schedule's accuracy is how far apart consecutive publishes were against the interval.
struct LocationBench: BenchSection {
    let name = "location"
    let title = "Location sharing: CPU and wake-ups of `burrow run` sharing at 10 s and at 1 h"

    func run(_ context: BenchContext) throws -> SectionReport {
        var table = MarkdownTable(headers: ["`burrow run`", "watched s", "CPU % of one core", "CPU s per hour", "wake-ups per minute",
                                            "publishes", "gap between publishes (s, mean ± max error)"],
                                  rightAligned: [1, 2, 3, 4, 5])
        var report = SectionReport(table: table)
        guard let bench = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent() else {
            report.problems.append("this program's path is unknown")
            return report
        }
        let burrow = bench.appendingPathComponent("burrow"), relayBinary = bench.appendingPathComponent("burrow-relay")
        guard FileManager.default.isExecutableFile(atPath: burrow.path), FileManager.default.isExecutableFile(atPath: relayBinary.path) else {
            report.problems.append("build burrow and burrow-relay first (make bench does)")
            return report
        }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-bench-location-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let relay = try RelayBenchProcess(
            executable: relayBinary,
            arguments: ["--data", root.appendingPathComponent("relay").path, "--host", "127.0.0.1", "--port", "0", "--log-level", "warning"],
            readyPrefix: "burrow-relay listening on ", timeout: 30)
        defer { relay.stop() }
        let watched = max(30, context.seconds * 20)
        for (label, interval) in [("nothing shared", nil), ("sharing every 10 s", "10s"), ("sharing every 1 h", "1h")] as [(String, String?)] {
            do {
                let row = try measure(label: label, interval: interval, burrow: burrow, relay: relay.url,
                                      home: root.appendingPathComponent(label.replacingOccurrences(of: " ", with: "-")), seconds: watched)
                table.add(row)
            } catch {
                report.problems.append("\(label): \(error)")
            }
        }
        report.table = table
        report.notes = [
            "Each `burrow run` (release build) was watched for \(Int(watched)) s after 5 s to settle, with a fixed source "
                + "(`share start --source fixed:…`): the node's whole cost, its relay subscription, upkeep and control socket "
                + "included. Wake-ups: the growth of `voluntary_ctxt_switches` + `nonvoluntary_ctxt_switches` over every "
                + "thread of the process (/proc/PID/task/*/status), per minute. The 1 h row's publishes are the first only: "
                + "the next falls due an hour later. Goal: under 1 % of one core at 10 s.",
        ]
        return report
    }

    private func measure(label: String, interval: String?, burrow: URL, relay: String, home: URL, seconds: Double) throws -> [String] {
        let pass = home.deletingLastPathComponent().appendingPathComponent("pass")
        try "bench passphrase".write(to: pass, atomically: true, encoding: .utf8)
        func cli(_ args: [String]) throws -> String {
            let process = Process()
            process.executableURL = burrow
            process.arguments = args + ["--home", home.path, "--passphrase-file", pass.path, "--json", "--timeout", "5"]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        _ = try cli(["init", "--kdf-memory-mib", "8"])
        _ = try cli(["relay", "add", relay])
        _ = try cli(["group", "create", "Bench"])
        if let interval { _ = try cli(["share", "start", "Bench", "--source", "fixed:52.52,13.405", "--interval", interval, "--battery", "off"]) }
        let run = Process()
        run.executableURL = burrow
        run.arguments = ["run", "--home", home.path, "--passphrase-file", pass.path, "--json", "--no-embedded-relay"]
        run.standardOutput = FileHandle.nullDevice
        run.standardError = FileHandle.nullDevice
        try run.run()
        defer {
            if run.isRunning { run.terminate() }
            run.waitUntilExit()
        }
        Thread.sleep(forTimeInterval: 5)
        let pid = run.processIdentifier
        guard let before = Self.sample(pid) else { throw BenchFailure.check("no /proc figures for the run process") }
        Thread.sleep(forTimeInterval: seconds)
        guard let after = Self.sample(pid) else { throw BenchFailure.check("the run process ended early") }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let cpuSeconds = Double(after.ticks - before.ticks) / ticks
        let wakeups = Double(after.switches - before.switches) / (seconds / 60)
        // Publishes: our own location messages, oldest first.
        let listed = try cli(["messages", "Bench"])
        let times = ((try? JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [String: Any])?["messages"] as? [[String: Any]] ?? [])
            .filter { $0["kind"] as? Int == 1 }.compactMap { $0["created_at"] as? Int }.sorted()
        var accuracy = "—"
        if let interval, interval == "10s", times.count >= 3 {
            let gaps = zip(times, times.dropFirst()).map { Double($1 - $0) }
            let errors = gaps.map { abs($0 - 10) }
            accuracy = String(format: "%.1f ± %.0f", gaps.reduce(0, +) / Double(gaps.count), errors.max() ?? 0)
        }
        return [label, String(Int(seconds)), String(format: "%.2f", cpuSeconds / seconds * 100), String(format: "%.1f", cpuSeconds / seconds * 3600),
                String(format: "%.0f", wakeups), String(times.count), accuracy]
    }

    /// The process's CPU ticks (utime + stime) and its threads' context switches.
    static func sample(_ pid: Int32) -> (ticks: Int64, switches: Int64)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command's ")": state, ppid, … — utime and stime are the 12th and 13th fields.
        guard fields.count > 13, let utime = Int64(fields[11]), let stime = Int64(fields[12]) else { return nil }
        var switches: Int64 = 0
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
            for line in status.split(separator: "\n") {
                if line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") {
                    switches += Int64(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
                }
            }
        }
        return (utime + stime, switches)
    }
}
