import ArgumentParser
import Foundation
import Web

/// Options every command accepts, before or after the subcommand name (see `Arguments.hoistGlobals`).
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The home directory holding the encrypted store.")
    var home: String?

    @Flag(name: .long, help: "Print exactly one JSON document on stdout.")
    var json = false

    @Option(name: .long, parsing: .unconditional, help: "Seconds each relay wait may make no progress before giving up.")
    var timeout: Double = 10

    @Option(name: .customLong("passphrase-file"), help: "Read the passphrase from this file.")
    var passphraseFile: String?

    /// `--home`, else `$BURROW_HOME`, else `$XDG_DATA_HOME/burrow`, else `~/.local/share/burrow`.
    var homeURL: URL {
        let env = ProcessInfo.processInfo.environment
        if let home, !home.isEmpty { return URL(fileURLWithPath: home) }
        if let h = env["BURROW_HOME"], !h.isEmpty { return URL(fileURLWithPath: h) }
        if let xdg = env["XDG_DATA_HOME"], !xdg.isEmpty { return URL(fileURLWithPath: xdg).appendingPathComponent("burrow") }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/burrow")
    }

    var timeoutDuration: Duration { .milliseconds(Int64((timeout * 1000).rounded())) }

    func validate() throws {
        guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout must be a number of seconds above 0 and at most 86400") }
    }
}

enum Arguments {
    /// Options whose value is the next argument.
    static let valued: Set<String> = ["--home", "--timeout", "--passphrase-file"]
    /// Options naming a file the command writes or reads (resolved before forwarding).
    static let pathValued: Set<String> = ["--svg", "--gpx", "--backup-passphrase-file", "--new-passphrase-file"]

    /// `args` with every path option made absolute against `directory`: a command forwarded to
    /// `burrow run` works in run's directory, and "rel.svg" must mean the caller's (issue 22).
    static func resolvingPaths(_ args: [String], in directory: String) -> [String] {
        func absolute(_ path: String) -> String {
            path.hasPrefix("/") ? path : URL(fileURLWithPath: directory).appendingPathComponent(path).standardizedFileURL.path
        }
        var out: [String] = []
        var index = 0
        // `backup create FILE`: the file is a positional argument.
        let backupFile = args.firstIndex(of: "backup").flatMap { b in
            b + 1 < args.count && args[b + 1] == "create" ? args[(b + 2)...].firstIndex { !$0.hasPrefix("-") } : nil
        }
        while index < args.count {
            let arg = args[index]
            if index == backupFile {
                out.append(absolute(arg))
                index += 1
                continue
            }
            if pathValued.contains(arg), index + 1 < args.count {
                out += [arg, absolute(args[index + 1])]
                index += 2
                continue
            }
            if let equals = arg.firstIndex(of: "="), pathValued.contains(String(arg[..<equals])) {
                out.append(String(arg[...equals]) + absolute(String(arg[arg.index(after: equals)...])))
            } else {
                out.append(arg)
            }
            index += 1
        }
        return out
    }
    static let flags: Set<String> = ["--json"]

    /// Moves global options written before the subcommand name to the end, where every leaf
    /// command's `GlobalOptions` group parses them. Only the leading run of options is moved, so a
    /// value such as `--content --json` after the subcommand is never misread.
    static func hoistGlobals(_ args: [String]) -> [String] {
        var leading: [String] = []
        var i = 0
        while i < args.count {
            let arg = args[i]
            let name = arg.split(separator: "=", maxSplits: 1).first.map(String.init) ?? arg
            if flags.contains(arg) {
                leading.append(arg)
                i += 1
            } else if valued.contains(name) {
                leading.append(arg)
                if !arg.contains("="), i + 1 < args.count {
                    leading.append(args[i + 1])
                    i += 1
                }
                i += 1
            } else {
                break
            }
        }
        return Array(args[i...]) + leading
    }

    /// `--web` with no address (last, or before another option) serves on the default one:
    /// the parser needs a value, so the default is written in.
    static func bareWeb(_ args: [String]) -> [String] {
        var out = args
        for (index, arg) in args.enumerated() where arg == "--web" {
            let next = index + 1 < args.count ? args[index + 1] : nil
            if next == nil || next?.hasPrefix("-") == true { out[index] = "--web=\(WebOptions.defaultHost):\(WebOptions.defaultPort)" }
        }
        return out
    }

    static func wantsJSON(_ args: [String]) -> Bool {
        args.prefix(while: { $0 != "--" }).contains("--json")
    }

    /// Whether a forwarded command reads stdin: `join nearby --code-stdin`, `contact add -`.
    /// Only for these does a forwarding process pass its stdin on (reading it otherwise could
    /// wait forever on an open pipe).
    static func readsStdin(_ args: [String]) -> Bool {
        if args.contains("--code-stdin") || args.contains("--backup-passphrase-stdin") || args.contains("--new-passphrase-stdin") { return true }
        guard let contact = args.firstIndex(of: "contact"), args.count > contact + 2, args[contact + 1] == "add" else { return false }
        return args[(contact + 2)...].contains("-")
    }
}
