import Foundation

/// A repository script run to completion with its stdout and stderr as one transcript (the
/// demo, the getting-started walk).
public enum ShellScript {
    public static func run(_ script: URL, arguments: [String] = [], environment: [String: String] = [:],
                           directory: URL? = nil) throws -> (status: Int32, transcript: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script.path] + arguments
        if let directory { process.currentDirectoryURL = directory }
        process.environment = BurrowProcess.childEnvironment(environment)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
