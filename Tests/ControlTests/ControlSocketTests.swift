import Foundation
import Logging
import Store
import TestSupport
import XCTest
@testable import Control
@_spi(StoreAccess) @testable import Node

/// The control socket end to end: a real `ControlServer` on `<home>/burrow.sock`, real
/// `ControlClient`s, and raw sockets for what a well-behaved client never sends.
/// `@unchecked Sendable`: XCTest runs one test method at a time on an instance; its stored
/// properties are set in setUp and only read while a test's tasks run.
final class ControlSocketTests: XCTestCase, @unchecked Sendable {
    private var home: URL!
    private var servers: [ControlServer] = []
    private let passphrase: [UInt8] = Array("correct horse battery staple".utf8)

    override func setUpWithError() throws {
        home = try makeShortHome()
    }

    override func tearDown() async throws {
        for server in servers { await server.close() }
        servers = []
        try? FileManager.default.removeItem(at: home)
    }

    private var socketPath: String { ControlServer.socketPath(home: home) }

    @discardableResult
    private func start(requestTimeout: Duration = .seconds(30), logger: Logger = Logger(label: "test.control"),
                       handler: @escaping ControlServer.Handler) async throws -> ControlServer {
        let server = try await ControlServer.start(home: home, requestTimeout: requestTimeout, logger: logger, handler: handler)
        servers.append(server)
        return server
    }

    /// Answers with the arguments, so each client can check it got its own answer.
    private static let echo: ControlServer.Handler = { request in
        ControlResponse(exitCode: Int32(request.args.count), stdout: request.args.joined(separator: " "),
                        stderr: "passphrase \(request.passphrase.count) bytes")
    }

    private func send(_ args: [String], timeout: Duration = .seconds(20)) async throws -> ControlResponse {
        try await ControlClient.send(ControlRequest(args: args, passphrase: passphrase), home: home, timeout: timeout)
    }

    // MARK: Round trip

    func testRoundTrip() async throws {
        let seen = HandlerJournal()
        let big = String(repeating: "0123456789abcdef", count: 256 * 1024)  // a 4 MiB answer: many reads
        let expectedPassphrase = passphrase
        try await start { request in
            await seen.enter(request.args.joined(separator: "|"))
            await seen.leave()
            let ok = request.passphrase == expectedPassphrase
            return ControlResponse(exitCode: ok ? 0 : 9, stdout: request.args.first == "big" ? big : "{\"ok\":true}\n",
                                   stderr: "hé\u{1F43F}")
        }
        let answer = try await send(["group", "list", "--json"])
        XCTAssertEqual(answer, ControlResponse(exitCode: 0, stdout: "{\"ok\":true}\n", stderr: "hé\u{1F43F}"))
        let large = try await send(["big"])
        XCTAssertEqual(large.stdout.utf8.count, 4 << 20)
        XCTAssertEqual(large.stdout, big)
        let wrong = try await ControlClient.send(ControlRequest(args: ["x"], passphrase: []), home: home, timeout: .seconds(20))
        XCTAssertEqual(wrong.exitCode, 9)
        let started = await seen.started
        XCTAssertEqual(started, ["group|list|--json", "big", "x"])
    }

    /// How `burrow run` uses it: the node owns the store (its lock held), and a forwarded command
    /// proves the passphrase against the store header before anything runs.
    /// Progress frames reach the client in order before the answer, each restarting its
    /// timeout; the caller's stdin travels with the request and never shows in a description.
    func testProgressStreamsBeforeTheAnswerAndStdinTravels() async throws {
        try await start { request in
            request.progress?("first\n")
            try? await Task.sleep(for: .milliseconds(600))
            request.progress?("second\n")
            try? await Task.sleep(for: .milliseconds(600))
            return ControlResponse(exitCode: 0, stdout: String(decoding: request.stdin ?? [], as: UTF8.self), stderr: "")
        }
        let received = ProgressLog()
        let request = ControlRequest(args: ["join", "nearby", "--code-stdin"], passphrase: passphrase, stdin: Array("042 517\n".utf8))
        XCTAssertFalse("\(request)".contains("042"), "stdin is redacted like the passphrase")
        // 1 s per wait: the whole exchange takes 1.2 s, each gap 0.6 s.
        let answer = try await ControlClient.send(request, home: home, timeout: .seconds(1)) { received.append($0) }
        XCTAssertEqual(received.all, ["first\n", "second\n"])
        XCTAssertEqual(answer, ControlResponse(exitCode: 0, stdout: "042 517\n", stderr: ""))
        // A request without stdin still decodes as before (the field is optional on the wire).
        let plain = try ControlRequest(frame: ControlRequest(args: ["x"], passphrase: []).encodedFrame())
        XCTAssertNil(plain.stdin)
    }

    func testForwardedCommandProvesItsPassphrase() async throws {
        let store = try BurrowStore.create(home: home, passphrase: passphrase, kdfMemoryMiB: 8)
        defer { store.close() }
        let home = home!
        XCTAssertThrowsError(try BurrowStore.open(home: home, passphrase: passphrase)) {
            XCTAssertEqual($0 as? StoreError, .busy)
        }
        try await start { request in
            do {
                try BurrowStore.verifyPassphrase(home: home, passphrase: request.passphrase)
                return ControlResponse(exitCode: 0, stdout: "ran \(request.args.joined(separator: " "))\n", stderr: "")
            } catch {
                return ControlResponse(exitCode: 1, stdout: "", stderr: "\(error)\n")
            }
        }
        let right = try await send(["whoami"])
        XCTAssertEqual(right, ControlResponse(exitCode: 0, stdout: "ran whoami\n", stderr: ""))
        let wrong = try await ControlClient.send(ControlRequest(args: ["whoami"], passphrase: Array("guess".utf8)),
                                                 home: home, timeout: .seconds(20))
        XCTAssertEqual(wrong, ControlResponse(exitCode: 1, stdout: "", stderr: "wrong passphrase\n"))
    }

    // MARK: One request at a time

    /// While the first request is held in the handler, eight more arrive one after the other;
    /// they are handled strictly after it, in the order they arrived, never two at once.
    func testHandlerCallsAreSerializedInArrivalOrder() async throws {
        let journal = HandlerJournal()
        let gate = Gate()
        let server = try await start { request in
            let name = request.args[0]
            await journal.enter(name)
            if name == "first" { await gate.wait() }
            try? await Task.sleep(for: .milliseconds(2))
            await journal.leave()
            return ControlResponse(exitCode: 0, stdout: name, stderr: "")
        }
        var clients: [Task<ControlResponse, Error>] = []
        clients.append(Task { try await self.send(["first"]) })
        let firstStarted = await eventually { await journal.started == ["first"] }
        XCTAssertTrue(firstStarted)
        for i in 1...8 {
            clients.append(Task { try await self.send(["request-\(i)"]) })
            let queued = await eventually { server.queuedRequestCount == i }
            XCTAssertTrue(queued, "request \(i) was not queued")
        }
        let startedWhileHeld = await journal.started
        XCTAssertEqual(startedWhileHeld, ["first"])
        await gate.open()

        let expected = ["first"] + (1...8).map { "request-\($0)" }
        for (client, name) in zip(clients, expected) {
            let answer = try await client.value
            XCTAssertEqual(answer.stdout, name)
        }
        let order = await journal.started
        let mostAtOnce = await journal.mostAtOnce
        XCTAssertEqual(order, expected)
        XCTAssertEqual(mostAtOnce, 1)
        XCTAssertEqual(server.queuedRequestCount, 0)
    }

    func testConcurrentClientsNeverOverlapInTheHandler() async throws {
        let journal = HandlerJournal()
        try await start { request in
            await journal.enter(request.args[0])
            try? await Task.sleep(for: .milliseconds(3))
            await journal.leave()
            return ControlResponse(exitCode: 0, stdout: request.args[0], stderr: "")
        }
        let answers = try await withThrowingTaskGroup(of: (String, ControlResponse).self) { group in
            for i in 0..<24 {
                group.addTask { ("client-\(i)", try await self.send(["client-\(i)"])) }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        XCTAssertEqual(answers.count, 24)
        for (name, answer) in answers { XCTAssertEqual(answer.stdout, name) }
        let started = await journal.started
        let mostAtOnce = await journal.mostAtOnce
        XCTAssertEqual(Set(started), Set(answers.keys))
        XCTAssertEqual(started.count, 24)
        XCTAssertEqual(mostAtOnce, 1)
    }

    // MARK: Bad clients

    /// Each bad request is refused with a typed reason (logged), its connection is closed without
    /// an answer well before the 60 s request timeout, the handler never sees it, and the next
    /// client is served.
    func testMalformedRequestsAreRefusedAndTheServerKeepsServing() async throws {
        let log = CapturedLog()
        let journal = HandlerJournal()
        try await start(requestTimeout: .seconds(60), logger: log.logger) { request in
            await journal.enter(request.args.joined(separator: " "))
            await journal.leave()
            return ControlResponse(exitCode: 0, stdout: "served", stderr: "")
        }
        func frame(_ json: String) -> [UInt8] {
            let payload = Array(json.utf8)
            return [0, 0, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)] + payload
        }
        let cases: [(name: String, bytes: [UInt8], halfClose: Bool, reason: String)] = [
            ("oversized", [0x7f, 0xff, 0xff, 0xff], false, ControlError.frameTooLarge(announced: 0x7fff_ffff, limit: 1 << 20).description),
            ("garbage", frame("GET / HTTP/1.1\r\n\r\n"), false, "the request is not UTF-8 JSON of the expected shape"),
            ("wrong shape", frame(#"{"version":1,"args":"whoami","passphrase":""}"#), false, #"the field "args" of the request has the wrong type"#),
            ("other version", frame(#"{"version":7,"args":[],"passphrase":""}"#), false, "control protocol version 7"),
            ("truncated", [0, 0, 0, 100] + Array(repeating: 0x20, count: 10), true,
             ControlError.frameTruncated(expected: 104, received: 14).description),
        ]
        for bad in cases {
            let fd = try RawUnixSocket.connect(socketPath)
            defer { close(fd) }
            try RawUnixSocket.send(fd, bad.bytes)
            if bad.halfClose { shutdown(fd, Int32(SHUT_WR)) }
            let (answer, closed) = RawUnixSocket.readToEnd(fd, timeout: 30)
            XCTAssertTrue(closed, "\(bad.name): the server kept the connection open")
            XCTAssertEqual(answer, [], "\(bad.name): the server answered")
            let logged = await eventually(timeout: 10) { log.messages.contains { $0.contains(bad.reason) } }
            XCTAssertTrue(logged, "\(bad.name): no log line with \(bad.reason) in \(log.messages)")

            let next = try await send(["after", bad.name])
            XCTAssertEqual(next.stdout, "served")
        }
        let started = await journal.started
        XCTAssertEqual(started, cases.map { "after \($0.name)" })
    }

    /// A client that sends half a request, or nothing, and then waits is cut off after the
    /// request timeout; the server serves others meanwhile and after.
    func testStalledClientsAreDisconnected() async throws {
        let log = CapturedLog()
        try await start(requestTimeout: .milliseconds(500), logger: log.logger, handler: Self.echo)
        let halfFrame = try RawUnixSocket.connect(socketPath)
        defer { close(halfFrame) }
        try RawUnixSocket.send(halfFrame, Array(try ControlRequest(args: ["x"], passphrase: passphrase).encodedFrame().prefix(9)))
        let silent = try RawUnixSocket.connect(socketPath)
        defer { close(silent) }

        let began = Date()
        let during = try await send(["meanwhile"])
        XCTAssertEqual(during.stdout, "meanwhile")
        for fd in [halfFrame, silent] {
            let (answer, closed) = RawUnixSocket.readToEnd(fd, timeout: 30)
            XCTAssertTrue(closed)
            XCTAssertEqual(answer, [])
        }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(began), 0.4)
        XCTAssertTrue(log.messages.contains { $0.contains("no complete request in time") }, "\(log.messages)")
        let after = try await send(["after"])
        XCTAssertEqual(after.stdout, "after")
    }

    // MARK: The socket file

    func testSocketIs0600AndCloseRemovesIt() async throws {
        let server = try await start(handler: Self.echo)
        XCTAssertEqual(server.socketPath, home.appendingPathComponent("burrow.sock").path)
        XCTAssertTrue(isSocket(socketPath))
        XCTAssertEqual(fileMode(socketPath), 0o600)
        XCTAssertEqual(fileMode(home.path), 0o700)
        _ = try await send(["ping"])
        await server.close()
        await server.close()
        XCTAssertNil(fileMode(socketPath))
        await XCTAssertThrowsExactly(ControlError.notAnswering("nothing accepts on \(socketPath)")) { try await self.send(["ping"]) }
        // The home can be served again.
        try await start(handler: Self.echo)
        let again = try await send(["again"])
        XCTAssertEqual(again.stdout, "again")
    }

    /// A killed server leaves its socket file behind with nobody accepting on it (here: a socket
    /// bound and listened on, whose descriptor is then closed without unlinking). Clients see
    /// nothing answering; the next server replaces the file.
    func testStaleSocketFromAKilledServerIsReplaced() async throws {
        close(try RawUnixSocket.listen(socketPath))
        XCTAssertTrue(isSocket(socketPath))
        let began = Date()
        await XCTAssertThrowsExactly(ControlError.notAnswering("nothing accepts on \(socketPath)")) { try await self.send(["ping"]) }
        XCTAssertLessThan(Date().timeIntervalSince(began), 5)

        try await start(handler: Self.echo)
        XCTAssertEqual(fileMode(socketPath), 0o600)
        let answer = try await send(["ping"])
        XCTAssertEqual(answer.stdout, "ping")
    }

    func testALiveListenerOrAForeignFileIsLeftAlone() async throws {
        let listener = try RawUnixSocket.listen(socketPath)
        defer { close(listener) }
        let before = ControlSocketFile.Identity(path: socketPath)
        await XCTAssertThrowsExactly(ControlError.socketUnavailable("another process is listening on \(socketPath)")) {
            try await ControlServer.start(home: self.home, handler: Self.echo)
        }
        XCTAssertNotNil(before)
        XCTAssertEqual(ControlSocketFile.Identity(path: socketPath), before)

        let other = try makeShortHome()
        defer { try? FileManager.default.removeItem(at: other) }
        let foreign = ControlServer.socketPath(home: other)
        try Data("not a socket".utf8).write(to: URL(fileURLWithPath: foreign))
        await XCTAssertThrowsExactly(ControlError.socketUnavailable("\(foreign) exists and is not a socket")) {
            try await ControlServer.start(home: other, handler: Self.echo)
        }
        XCTAssertEqual(try String(contentsOfFile: foreign, encoding: .utf8), "not a socket")
    }

    func testPathTooLongForASocketIsATypedError() async throws {
        var deep = home!
        while ControlServer.socketPath(home: deep).utf8.count <= 103 { deep.appendPathComponent("directory") }
        try FileManager.default.createDirectory(at: deep, withIntermediateDirectories: true)
        let path = ControlServer.socketPath(home: deep)
        let why = "\(path) is \(path.utf8.count) bytes, longer than the 103 a Unix socket path may have"
        await XCTAssertThrowsExactly(ControlError.socketUnavailable(why)) { try await ControlServer.start(home: deep, handler: Self.echo) }
        await XCTAssertThrowsExactly(ControlError.notAnswering(why)) {
            try await ControlClient.send(ControlRequest(args: [], passphrase: []), home: deep, timeout: .seconds(5))
        }
    }

    // MARK: The client's bounds

    func testClientWithoutAServerFailsQuickly() async throws {
        let began = Date()
        await XCTAssertThrowsExactly(ControlError.notAnswering("nothing accepts on \(socketPath)")) { try await self.send(["ping"]) }
        let missing = home.appendingPathComponent("no-such-home")
        let missingPath = ControlServer.socketPath(home: missing)
        await XCTAssertThrowsExactly(ControlError.notAnswering("nothing accepts on \(missingPath)")) {
            try await ControlClient.send(ControlRequest(args: [], passphrase: []), home: missing, timeout: .seconds(20))
        }
        XCTAssertLessThan(Date().timeIntervalSince(began), 5)
    }

    func testClientGivesUpWhenTheAnswerIsLate() async throws {
        let gate = Gate()
        try await start { request in
            await gate.wait()
            return ControlResponse(exitCode: 0, stdout: "late", stderr: "")
        }
        let began = Date()
        await XCTAssertThrowsExactly(NodeError.timeout("the running node did not answer within 0.3 seconds")) {
            try await self.send(["slow"], timeout: .milliseconds(300))
        }
        XCTAssertLessThan(Date().timeIntervalSince(began), 10)
        await gate.open()
        let next = try await send(["next"])
        XCTAssertEqual(next.stdout, "late")
    }

    /// Closing stops accepting and removes the socket at once, lets the request being handled
    /// finish and answer, and drops the queued one (its client sees the connection end without
    /// an answer).
    func testCloseFinishesTheCurrentRequestAndDropsQueuedOnes() async throws {
        let gate = Gate()
        let journal = HandlerJournal()
        let server = try await start { request in
            await journal.enter(request.args[0])
            if request.args[0] == "current" { await gate.wait() }
            await journal.leave()
            return ControlResponse(exitCode: 0, stdout: request.args[0], stderr: "")
        }
        let current = Task { try await self.send(["current"]) }
        let currentStarted = await eventually { await journal.started == ["current"] }
        XCTAssertTrue(currentStarted)
        let queued = Task { try await self.send(["queued"]) }
        let isQueued = await eventually { server.queuedRequestCount == 1 }
        XCTAssertTrue(isQueued)

        let closing = Task { await server.close() }
        let closed = await eventually { server.isClosing }
        XCTAssertTrue(closed)
        // Nothing new is accepted any more (NIO removes the file as the listener closes)…
        await XCTAssertThrowsExactly(ControlError.notAnswering("nothing accepts on \(socketPath)")) { try await self.send(["late"]) }
        // …but the request being handled still gets its answer.
        await gate.open()
        await closing.value

        let currentAnswer = try await current.value
        XCTAssertEqual(currentAnswer.stdout, "current")
        await XCTAssertThrowsExactly(ControlError.frameTruncated(expected: 4, received: 0)) { try await queued.value }
        let started = await journal.started
        XCTAssertEqual(started, ["current"])
        XCTAssertNil(fileMode(socketPath))
    }
}

/// Progress texts as a client received them.
final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var texts: [String] = []
    func append(_ text: String) { lock.lock(); texts.append(text); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return texts }
}
