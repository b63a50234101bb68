import Foundation

/// Runs a peer's benchmark script with the interop venv's Python and decodes the one JSON
/// object it prints. Bounded: the process is killed when `timeout` passes.
enum PythonBench {
    enum Failure: Error, CustomStringConvertible {
        case pythonMissing(String)
        case scriptMissing(String)
        case launch(String)
        case timedOut(Double)
        case exited(Int32, String)
        case badOutput(String)

        var description: String {
            switch self {
            case .pythonMissing(let path): return "no interop venv Python at \(path) (run `make setup` or set BURROW_VENV)"
            case .scriptMissing(let path): return "no peer bench script at \(path)"
            case .launch(let reason): return "could not start the peer bench: \(reason)"
            case .timedOut(let seconds): return "the peer bench did not finish within \(Int(seconds)) s"
            case .exited(let status, let stderr): return "the peer bench exited with status \(status): \(stderr)"
            case .badOutput(let reason): return "the peer bench printed no usable JSON: \(reason)"
            }
        }
    }

    static func run(python: URL, script: URL, arguments: [String], timeout: Double) throws -> [String: Any] {
        let fm = FileManager.default
        guard fm.isExecutableFile(atPath: python.path) else { throw Failure.pythonMissing(python.path) }
        guard fm.fileExists(atPath: script.path) else { throw Failure.scriptMissing(script.path) }

        let process = Process()
        process.executableURL = python
        process.arguments = [script.path] + arguments
        var env = ProcessInfo.processInfo.environment
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        process.environment = env
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice

        let collected = Collected()
        let readers = DispatchGroup()
        for (pipe, isOut) in [(stdout, true), (stderr, false)] {
            readers.enter()
            Thread.detachNewThread {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collected.store(data, isStdout: isOut)
                readers.leave()
            }
        }
        do {
            try process.run()
        } catch {
            throw Failure.launch("\(error)")
        }

        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            _ = readers.wait(timeout: .now() + 5)
            throw Failure.timedOut(timeout)
        }
        _ = readers.wait(timeout: .now() + 5)
        let (out, err) = collected.values
        guard process.terminationStatus == 0 else {
            throw Failure.exited(process.terminationStatus, String(decoding: err.suffix(2000), as: UTF8.self))
        }
        guard let line = String(decoding: out, as: UTF8.self).split(separator: "\n").last,
              let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { throw Failure.badOutput("\(out.count) bytes on stdout") }
        return object
    }

    /// `@unchecked Sendable`: every field is touched only under `lock`.
    private final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var out = Data()
        private var err = Data()

        func store(_ data: Data, isStdout: Bool) {
            lock.lock()
            if isStdout { out = data } else { err = data }
            lock.unlock()
        }

        var values: (Data, Data) {
            lock.lock()
            defer { lock.unlock() }
            return (out, err)
        }
    }
}
