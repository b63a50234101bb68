import Foundation

/// "waiting for the relays… 4 s" on stderr while a wait lasts over two seconds, so a person at
/// a terminal knows the command is alive (issue 22, item 7). Only at a terminal, never with
/// `--json`, never inside `burrow run` (a forwarded command's caller shows its own); the line
/// is rewritten in place and erased when the wait ends.
enum WaitIndicator {
    static let threshold: Duration = .seconds(2)

    static func whileWaiting<T>(for what: String, json: Bool, _ body: () async throws -> T) async rethrows -> T {
        guard !json, Console.capture == nil, ServingNode.current == nil, isatty(STDERR_FILENO) == 1 else { return try await body() }
        let ticker = Task {
            let started = ContinuousClock.now
            do { try await Task.sleep(for: threshold) } catch { return }
            while !Task.isCancelled {
                let seconds = (ContinuousClock.now - started).components.seconds
                FileHandle.standardError.write(Data("\r\u{1B}[Kwaiting for \(what)… \(seconds) s".utf8))
                do { try await Task.sleep(for: .seconds(1)) } catch { break }
            }
            FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        }
        defer { ticker.cancel() }
        let result = try await body()
        ticker.cancel()
        _ = await ticker.value
        return result
    }
}
