import DBus
import Foundation
import Mesh
@testable import MeshLinks
import TestSupport
import XCTest

/// python-dbusmock as org.bluez on a `PrivateBus`, and a client to drive it.
final class MockBlueZ: @unchecked Sendable {
    static let control = "org.burrow.BlueZMock"
    let bus: PrivateBus
    /// The mock bluetoothd now running; `drop` ends it and `restore` starts another.
    private var process: PeerProcess?
    private let arguments: [String]
    private let environment: [String: String]
    private let client: DBusConnection
    private let lock = NSLock()

    /// `adapters`: the adapters bluetoothd reports; `powered`: whether they start powered;
    /// `powerable`: whether powering one on works (false: refused, as with rfkill).
    init(bus: PrivateBus, adapters: [String] = ["hci0"], powered: Bool = true, powerable: Bool = true) async throws {
        self.bus = bus
        let names = adapters.map { "\"\($0)\"" }.joined(separator: ",")
        let parameters = "{\"adapters\": [\(names)], \"powered\": \(powered), \"powerable\": \(powerable)}"
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        environment["PYTHONUNBUFFERED"] = "1"
        self.environment = environment
        arguments = ["-m", "dbusmock", "--template", Fixtures.url("bluez/bluez_mesh_template.py").path, "-p", parameters]
        client = try DBusConnection(address: bus.address)
        try await launch(parameters: parameters)
    }

    /// Starts a mock bluetoothd with `parameters` (the template's JSON) and waits until it owns org.bluez.
    private func launch(parameters: String) async throws {
        var arguments = self.arguments
        arguments[arguments.count - 1] = parameters
        let process = try PeerProcess(executable: URL(fileURLWithPath: DBusMockPrerequisites.python), arguments: arguments,
                                      environment: environment)
        _ = replaceProcess(with: process)
        try await waitForOwner(true, what: "org.bluez mock did not come up: \(process.standardError)")
    }

    /// Puts `process` in place of the running mock and returns the one it replaces.
    private func replaceProcess(with process: PeerProcess?) -> PeerProcess? {
        lock.lock()
        defer { lock.unlock() }
        let previous = self.process
        self.process = process
        return previous
    }

    private func waitForOwner(_ owned: Bool, what: @autoclosure () -> String) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        while true {
            let answer = try? call(destination: "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                                   [.string("org.bluez")])
            if answer?.first?.boolValue == owned { return }
            guard ContinuousClock.now < deadline else { throw PeerProcess.Failure.notReady(what()) }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// bluetoothd stops (crash or restart): its process ends, org.bluez has no owner, and every
    /// registration, connection and socket it held is gone with it.
    func drop() async throws {
        replaceProcess(with: nil)?.kill()
        try await waitForOwner(false, what: "org.bluez kept its owner after the mock was killed")
    }

    /// A new bluetoothd takes org.bluez, knowing nothing of the previous one's registrations.
    /// `adapterDelay`: its adapters appear that long after it owns the name, as bluetoothd's do
    /// once the kernel reports them.
    func restore(adapterDelay: Duration = .zero) async throws {
        let milliseconds = adapterDelay.components.seconds * 1000 + adapterDelay.components.attoseconds / 1_000_000_000_000_000
        var parameters = arguments[arguments.count - 1]
        parameters.removeLast()
        try await launch(parameters: parameters + ", \"adapter_delay_ms\": \(milliseconds)}")
    }

    deinit { process?.kill() }

    /// Calls a method of the mock's control interface (or another interface on org.bluez).
    @discardableResult
    func call(_ member: String, _ arguments: [DBusValue] = [], path: String = "/", interface: String = MockBlueZ.control) throws -> [DBusValue] {
        lock.lock()
        defer { lock.unlock() }
        return try client.callBlocking("org.bluez", path, interface, member, arguments)
    }

    /// Calls any bus name (our node, as a process other than bluetoothd would).
    @discardableResult
    func call(destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) throws -> [DBusValue] {
        lock.lock()
        defer { lock.unlock() }
        return try client.callBlocking(destination, path, interface, member, arguments)
    }

    var callLog: [String] { (try? call("CallLog").first?.stringsValue) ?? [] }

    /// Waits until `condition` holds, polling; fails the wait after `timeout`.
    func waitUntil(_ what: String, timeout: Duration = .seconds(10), _ condition: () throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try !condition() {
            guard ContinuousClock.now < deadline else { throw PeerProcess.Failure.notReady("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(25))
        }
    }
}

/// Collects a transport's events so a test can wait for the one it expects.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [TransportEvent] = []
    private var task: Task<Void, Never>?

    init(_ stream: AsyncStream<TransportEvent>) {
        task = Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                self.append(event)
            }
        }
    }

    deinit { task?.cancel() }

    private func append(_ event: TransportEvent) {
        lock.lock()
        events.append(event)
        lock.unlock()
    }

    var all: [TransportEvent] { lock.lock(); defer { lock.unlock() }; return events }

    /// The first event (in arrival order) matching `predicate`, waiting up to `timeout`; with
    /// `since`, only among the events after the first `since`.
    @discardableResult
    func wait(
        for what: String, since: Int = 0, timeout: Duration = .seconds(10), _ predicate: (TransportEvent) -> Bool
    ) async throws -> TransportEvent {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let event = all.dropFirst(since).first(where: predicate) { return event }
            guard ContinuousClock.now < deadline else { throw PeerProcess.Failure.notReady("no \(what) event; got \(all)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
