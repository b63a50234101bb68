import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Resolves the passphrase: `--passphrase-file`, else `$BURROW_PASSPHRASE`, else a no-echo prompt
/// on a TTY, else `passphrase_required`. Never a command-line argument.
enum Passphrase {
    static func resolve(_ globals: GlobalOptions, confirm: Bool = false) throws -> [UInt8] {
        if let path = globals.passphraseFile {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CLIError(.invalid_input, "cannot read the passphrase file \(path)")
            }
            return try nonEmpty(stripOneNewline(Array(data)))
        }
        if let env = ProcessInfo.processInfo.environment["BURROW_PASSPHRASE"] {
            return try nonEmpty(Array(env.utf8))
        }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CLIError(.passphrase_required, "no passphrase: use --passphrase-file or BURROW_PASSPHRASE")
        }
        // Asked once per command: finding the store busy and forwarding to `burrow run` need
        // the same passphrase, and asking twice is a question the user cannot make sense of.
        if !confirm, let asked = prompted { return asked }
        let first = try prompt("Passphrase: ")
        if confirm {
            let second = try prompt("Repeat passphrase: ")
            guard first == second else { throw CLIError(.invalid_input, "the passphrases differ") }
        }
        let passphrase = try nonEmpty(first)
        prompted = passphrase
        return passphrase
    }

    /// The password of a NIP-49 key (`ncryptsec`), apart from the store's passphrase:
    /// `--key-password-file`, else `$BURROW_KEY_PASSWORD`, else a no-echo prompt on a TTY
    /// (twice when `confirm`), else `passphrase_required`. Never a command-line argument.
    static func keyPassword(file: String?, confirm: Bool) throws -> String {
        try secret(file: file, environment: "BURROW_KEY_PASSWORD", prompt: "Key password: ", what: "key password",
                   option: "--key-password-file", confirm: confirm)
    }

    /// A secret other than the store's passphrase (a key password, a backup's passphrase):
    /// `file`, else the `environment` variable, else a no-echo prompt on a TTY (twice when
    /// `confirm`), else `passphrase_required`. Non-empty UTF-8.
    static func secret(file: String?, environment: String, prompt text: String, what: String, option: String, confirm: Bool) throws -> String {
        let bytes: [UInt8]
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else { throw CLIError(.invalid_input, "cannot read the \(what) file \(file)") }
            bytes = stripOneNewline(Array(data))
        } else if let env = ProcessInfo.processInfo.environment[environment] {
            bytes = Array(env.utf8)
        } else {
            guard isatty(STDIN_FILENO) == 1 else {
                throw CLIError(.passphrase_required, "no \(what): use \(option) or \(environment)")
            }
            bytes = try prompt(text)
            if confirm, try prompt("Repeat \(text.prefix(1).lowercased() + text.dropFirst())") != bytes {
                throw CLIError(.invalid_input, "the \(what)s differ")
            }
        }
        guard !bytes.isEmpty, let result = String(validating: bytes, as: UTF8.self) else {
            throw CLIError(.passphrase_required, "the \(what) is empty or not UTF-8")
        }
        return result
    }

    /// What the prompt returned in this process (one command), for the second use.
    nonisolated(unsafe) private static var prompted: [UInt8]?

    private static func nonEmpty(_ bytes: [UInt8]) throws -> [UInt8] {
        guard !bytes.isEmpty else { throw CLIError(.passphrase_required, "the passphrase is empty") }
        return bytes
    }

    static func stripOneNewline(_ bytes: [UInt8]) -> [UInt8] {
        var b = bytes
        if b.last == UInt8(ascii: "\n") { b.removeLast() }
        if b.last == UInt8(ascii: "\r") { b.removeLast() }
        return b
    }

    /// Reads one line from the terminal with echo turned off.
    private static func prompt(_ text: String) throws -> [UInt8] {
        FileHandle.standardError.write(Data(text.utf8))
        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(STDIN_FILENO, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        return stripOneNewline(line)
    }
}
