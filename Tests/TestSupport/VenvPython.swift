import Foundation

/// Runs a Python script in the interop venv (mdk-python 0.8.0, nostr-sdk, cryptography): JSON
/// on stdin, JSON on stdout. A missing venv fails the test (`InteropVenv`).
public enum VenvPython {
    public static func run(_ script: String, input: Any) throws -> Any {
        let python = try InteropVenv.python()
        let process = Process()
        process.executableURL = python
        process.arguments = ["-c", script]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: input))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "venv-python", code: Int(process.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: String(decoding: errors, as: UTF8.self)])
        }
        return try JSONSerialization.jsonObject(with: output)
    }
}
