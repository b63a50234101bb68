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
        let bytes: [UInt8]
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else { throw CLIError(.invalid_input, "cannot read the key password file \(file)") }
            bytes = stripOneNewline(Array(data))
        } else if let env = ProcessInfo.processInfo.environment["BURROW_KEY_PASSWORD"] {
            bytes = Array(env.utf8)
        } else {
            guard isatty(STDIN_FILENO) == 1 else {
                throw CLIError(.passphrase_required, "no key password: use --key-password-file or BURROW_KEY_PASSWORD")
            }
            bytes = try prompt("Key password: ")
            if confirm, try prompt("Repeat key password: ") != bytes { throw CLIError(.invalid_input, "the key passwords differ") }
        }
        guard !bytes.isEmpty, let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIError(.passphrase_required, "the key password is empty or not UTF-8")
        }
        return text
    }

    /// What the prompt returned in this process (one command), for the second use.
    nonisolated(unsafe) private static var prompted: [UInt8]?

    private static func nonEmpty(_ bytes: [UInt8]) throws -> [UInt8] {
        guard !bytes.isEmpty else { throw CLIError(.passphrase_required, "the passphrase is empty") }
        return bytes
    }

    private static func stripOneNewline(_ bytes: [UInt8]) -> [UInt8] {
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
