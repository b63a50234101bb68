import Foundation

/// What the Marmot bench says about durability beside its timings: the filesystem a directory
/// is on, and the fsync/fdatasync calls each timed operation makes.
///
/// Calls are counted by running a short pass of the same operations under `strace -f`, with
/// every timed operation bracketed by a write of "begin NAME" / "end NAME" to file descriptor
/// -1 (it fails with EBADF and does nothing else); the calls between a pair are that
/// operation's.
enum DurabilityProbe {
    /// Brackets timed operations when the process runs under the counting pass.
    static let markersEnabled = ProcessInfo.processInfo.environment["BURROW_BENCH_MARKERS"] == "1"

    static func mark(_ text: String) {
        guard markersEnabled else { return }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(-1, $0.baseAddress, $0.count) }
    }

    /// The filesystem type of the mount holding `path` (the longest matching mount point in
    /// /proc/mounts), e.g. "ext4", "overlay", "tmpfs".
    static func filesystem(of path: String) -> String {
        guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return "unknown" }
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var best: (point: String, type: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let point = String(fields[1]), type = String(fields[2])
            let matches = point == "/" || resolved == point || resolved.hasPrefix(point + "/")
            if matches, point.count >= (best?.point.count ?? -1) { best = (point, type) }
        }
        return best?.type ?? "unknown"
    }

    /// A directory on tmpfs for the engine-only figures (nil when /dev/shm is not tmpfs).
    static func tmpfsDirectory() -> URL? {
        guard filesystem(of: "/dev/shm") == "tmpfs" else { return nil }
        return URL(fileURLWithPath: "/dev/shm").appendingPathComponent("burrow-bench-\(UUID().uuidString)")
    }

    /// Runs `executable arguments` under `strace -f` with markers on and returns, per operation
    /// name, the fsync + fdatasync calls per occurrence. Nil when strace is not installed.
    static func countSyncs(executable: String, arguments: [String], timeout: Double) throws -> [String: Double]? {
        let strace = ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let strace else { return nil }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-bench-strace-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: log) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: strace)
        process.arguments = ["-f", "-qq", "-o", log.path, "-e", "trace=fsync,fdatasync,write", "-e", "signal=none", executable] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["BURROW_BENCH_MARKERS"] = "1"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning {
            process.terminate()
            throw BenchFailure.check("the fsync-counting pass did not finish within \(Int(timeout)) s")
        }
        guard process.terminationStatus == 0 else { throw BenchFailure.check("the fsync-counting pass exited with \(process.terminationStatus)") }
        return parse(try String(contentsOf: log, encoding: .utf8))
    }

    /// fsync + fdatasync calls between each "begin NAME" and "end NAME" marker, averaged over
    /// the occurrences of NAME.
    static func parse(_ trace: String) -> [String: Double] {
        var open: String?
        var current = 0
        var totals: [String: (calls: Int, times: Int)] = [:]
        for line in trace.split(separator: "\n") {
            if line.contains("write(-1, \"") {
                guard let start = line.range(of: "write(-1, \""), let end = line[start.upperBound...].firstIndex(of: "\"") else { continue }
                let text = String(line[start.upperBound..<end])
                if text.hasPrefix("begin ") {
                    open = String(text.dropFirst(6))
                    current = 0
                } else if text.hasPrefix("end "), let name = open, name == String(text.dropFirst(4)) {
                    totals[name, default: (0, 0)].calls += current
                    totals[name, default: (0, 0)].times += 1
                    open = nil
                }
            } else if open != nil, line.contains("fsync(") || line.contains("fdatasync(") {
                current += 1
            }
        }
        return totals.mapValues { Double($0.calls) / Double(max(1, $0.times)) }
    }
}
