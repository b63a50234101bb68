import Foundation
import Logging
import TestSupport
import XCTest
@testable import Control
@_spi(StoreAccess) @testable import Node

/// Raw Unix-socket ends for what `ControlClient` never sends (garbage, half frames, stalls) and
/// for a listener that is not a `ControlServer`.
enum RawUnixSocket {
    private static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8) + [0]
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes.prefix($0.count)) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    private static func newSocket() throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw POSIXFailure(call: "socket", errno: errno) }
        return fd
    }

    static func connect(_ path: String) throws -> Int32 {
        let fd = try newSocket()
        let rc = withAddress(path) { Foundation.connect(fd, $0, $1) }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw POSIXFailure(call: "connect", errno: e)
        }
        return fd
    }

    /// A bound, listening socket at `path`; closing its descriptor without unlinking leaves the
    /// file exactly as a killed server leaves it.
    static func listen(_ path: String) throws -> Int32 {
        let fd = try newSocket()
        guard withAddress(path, { bind(fd, $0, $1) }) == 0, Foundation.listen(fd, 4) == 0 else {
            let e = errno
            close(fd)
            throw POSIXFailure(call: "bind/listen", errno: e)
        }
        return fd
    }

    static func send(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw POSIXFailure(call: "send", errno: errno) }
            offset += n
        }
    }

    /// Reads until the peer closes or `timeout` passes: the bytes read and whether it closed.
    static func readToEnd(_ fd: Int32, timeout: TimeInterval) -> (bytes: [UInt8], closed: Bool) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return (received, false) }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, Int32(remaining * 1000) + 1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { received.append(contentsOf: chunk[..<n]) } else if n < 0 && errno == EINTR { continue } else { return (received, true) }
        }
    }
}

func fileMode(_ path: String) -> mode_t? {
    var st = stat()
    guard lstat(path, &st) == 0 else { return nil }
    return st.st_mode & 0o7777
}

func isSocket(_ path: String) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK
}

/// Waits (polling) until `condition` holds; false if it did not within `timeout`.
func eventually(timeout: TimeInterval = 20, _ condition: () async -> Bool) async -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while Date() < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}

/// A gate a handler waits at until the test opens it.
actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters.removeAll()
    }
}

/// What a handler saw: the order of calls and whether two ever overlapped.
actor HandlerJournal {
    private(set) var started: [String] = []
    private(set) var running = 0
    private(set) var mostAtOnce = 0

    func enter(_ name: String) {
        started.append(name)
        running += 1
        mostAtOnce = max(mostAtOnce, running)
    }

    func leave() { running -= 1 }
}

/// Log lines of a server, to see the typed reason a connection was rejected.
final class CapturedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    var messages: [String] { lock.withLock { lines } }
    func append(_ line: String) { lock.withLock { lines.append(line) } }

    var logger: Logger {
        Logger(label: "test.control") { _ in Handler(sink: self) }
    }

    struct Handler: LogHandler {
        let sink: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            sink.append("\(event.message)")
        }
    }
}

/// Asserts `body` throws exactly the error `expected`.
func XCTAssertThrowsExactly<T, E: Error & Equatable>(_ expected: E, _ body: () async throws -> T,
                                                    file: StaticString = #filePath, line: UInt = #line) async {
    do {
        let value = try await body()
        XCTFail("expected \(expected), got \(value)", file: file, line: line)
    } catch {
        XCTAssertEqual(error as? E, expected, "\(error)", file: file, line: line)
    }
}
