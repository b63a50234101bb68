import Foundation

// burrow-bench: Burrow's throughput beside third-party implementations, measured in one run
// and printed as markdown (`make bench` tees it to bench-results.md).
//
//   burrow-bench [--only SECTION[,SECTION…]] [--seconds S] [--no-peers] [--list]
//
// The interop venv's Python comes from $BURROW_VENV, else ./.venv; the peer scripts from
// Tests/Interop/peers of the repository (the current directory, else this source tree).

struct Options {
    var only: Set<String>? = nil
    var seconds = 1.0
    var includePeers = true
    var list = false
}

func usage() -> String {
    let names = BenchSections.all.map(\.name).joined(separator: ", ")
    return """
    usage: burrow-bench [--only SECTION[,SECTION...]] [--seconds S] [--no-peers] [--list]
      --only      run only these sections (\(names))
      --seconds   CPU seconds per measurement (default 1, at most 10)
      --no-peers  skip third-party implementations (nostr-sdk, ...)
      --list      print the section names and exit
    """
}

/// A command line that asked for help or that could not be parsed.
struct UsageError: Error {
    var message: String
}

func parseOptions(_ arguments: [String]) -> Result<Options, UsageError> {
    var options = Options()
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch argument {
        case "--only":
            guard let value = iterator.next() else { return .failure(UsageError(message: "--only needs a section name")) }
            let names = Set(value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
            let known = Set(BenchSections.all.map(\.name))
            let unknown = names.subtracting(known)
            guard unknown.isEmpty else { return .failure(UsageError(message: "unknown section(s): \(unknown.sorted().joined(separator: ", "))")) }
            options.only = names
        case "--seconds":
            guard let value = iterator.next(), let seconds = Double(value), seconds > 0, seconds <= 10 else {
                return .failure(UsageError(message: "--seconds needs a number in (0, 10]"))
            }
            options.seconds = seconds
        case "--no-peers": options.includePeers = false
        case "--list": options.list = true
        case "-h", "--help": return .failure(UsageError(message: ""))
        default: return .failure(UsageError(message: "unknown argument \(argument)"))
        }
    }
    return .success(options)
}

/// The repository: the current directory when it holds the peer scripts (as under `make`),
/// else the tree this program was built from.
func repositoryRoot() -> URL {
    let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    if FileManager.default.fileExists(atPath: cwd.appendingPathComponent("Tests/Interop/peers").path) { return cwd }
    return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

func venvPython(root: URL) -> URL {
    if let venv = ProcessInfo.processInfo.environment["BURROW_VENV"], !venv.isEmpty {
        return URL(fileURLWithPath: venv).appendingPathComponent("bin/python")
    }
    return root.appendingPathComponent(".venv/bin/python")
}

/// One line about the machine, so figures from different runs can be read in context.
func machineLine() -> String {
    var parts: [String] = []
    if let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
       let model = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
       let name = model.split(separator: ":", maxSplits: 1).last {
        parts.append(name.trimmingCharacters(in: .whitespaces))
    }
    parts.append("\(ProcessInfo.processInfo.activeProcessorCount) CPUs")
    if let load = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) {
        parts.append("load average \(load.split(separator: " ").prefix(3).joined(separator: " "))")
    }
    return parts.joined(separator: ", ")
}

// The Marmot section's fsync-counting pass, run by the section itself under strace.
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--marmot-sync-pass" {
    do {
        try MarmotBench.syncPass(directory: URL(fileURLWithPath: CommandLine.arguments[2]))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("burrow-bench: \(error)\n".utf8))
        exit(1)
    }
}

let options: Options
switch parseOptions(Array(CommandLine.arguments.dropFirst())) {
case .success(let parsed): options = parsed
case .failure(let error):
    let message = error.message
    if !message.isEmpty { FileHandle.standardError.write(Data("burrow-bench: \(message)\n".utf8)) }
    FileHandle.standardError.write(Data((usage() + "\n").utf8))
    exit(message.isEmpty ? 0 : 2)
}

if options.list {
    for section in BenchSections.all { print("\(section.name)\t\(section.title)") }
    exit(0)
}

let root = repositoryRoot()
let context = BenchContext(seconds: options.seconds, includePeers: options.includePeers,
                           repositoryRoot: root, python: venvPython(root: root))
let sections = BenchSections.all.filter { options.only?.contains($0.name) ?? true }

#if DEBUG
let buildNote = "debug build: figures are not representative"
#else
let buildNote = "release build"
#endif
print("# Burrow benchmarks\n")
print("\(machineLine()); \(buildNote).\n")

var problems: [String] = []
for section in sections {
    print("## \(section.title)\n")
    do {
        let report = try section.run(context)
        print(report.table.markdown)
        print()
        for note in report.notes { print(note + "\n") }
        for problem in report.problems { print("**Problem:** \(problem)\n") }
        problems += report.problems.map { "\(section.name): \($0)" }
    } catch {
        print("**Failed:** \(error)\n")
        problems.append("\(section.name): \(error)")
    }
}
if !problems.isEmpty {
    FileHandle.standardError.write(Data(("burrow-bench: " + problems.joined(separator: "; ") + "\n").utf8))
    exit(1)
}
