import CSystemd
import Glibc

/// A handler sd-bus calls with a message: a method call on an exported path, a signal that
/// matched, or a reply to an asynchronous call.
private final class MessageCallback {
    let body: (DBusMessage) -> Void
    public init(_ body: @escaping (DBusMessage) -> Void) { self.body = body }
}

/// Runs the callback in `userdata` and reports the message handled.
private let dispatchMessage: sd_bus_message_handler_t = { message, userdata, _ in
    guard let message, let userdata else { return 0 }
    let callback = Unmanaged<MessageCallback>.fromOpaque(userdata).takeUnretainedValue()
    callback.body(DBusMessage(borrowing: message))
    return 1
}

/// Releases the callback when sd-bus frees its slot (reply arrived, bus closed).
private let releaseCallback: sd_bus_destroy_t = { userdata in
    guard let userdata else { return }
    Unmanaged<MessageCallback>.fromOpaque(userdata).release()
}

/// An sd-bus connection. Every call happens on the thread that drives it (`BusLoop`): sd-bus is
/// not thread-safe, so nothing here locks. Replies and exported methods are answered from
/// callbacks on that thread, never with blocking calls, because bluetoothd calls back into the
/// application (GetManagedObjects, GetAll) before it answers our registrations.
public final class DBusConnection {
    private var bus: OpaquePointer?

    /// Connects to the bus at `address` (a D-Bus address string such as `unix:path=/tmp/bus`),
    /// or to the system bus (honouring `DBUS_SYSTEM_BUS_ADDRESS`) when nil.
    public init(address: String?) throws {
        var bus: OpaquePointer?
        if let address {
            try check(sd_bus_new(&bus), "sd_bus_new")
            guard let created = bus else { throw DBusError(name: "errno", message: "sd_bus_new returned no bus") }
            do {
                try check(address.withCString { sd_bus_set_address(created, $0) }, "bus address \(address)")
                try check(sd_bus_set_bus_client(created, 1), "bus client")
                try check(sd_bus_start(created), "connect to \(address)")
            } catch {
                sd_bus_unref(created)
                throw error
            }
        } else {
            try check(sd_bus_open_system(&bus), "connect to the system bus")
        }
        guard let bus else { throw DBusError(name: "errno", message: "no bus") }
        self.bus = bus
    }

    deinit { close() }

    /// Flushes what is queued and drops the connection; its slots release their callbacks.
    /// Called from a callback (inside `process`), it takes effect when `process` returns: sd-bus
    /// must not be freed under its own dispatcher.
    public func close() {
        guard bus != nil else { return }
        if processing {
            closeRequested = true
            return
        }
        closeNow()
    }

    private func closeNow() {
        guard let bus else { return }
        self.bus = nil
        sd_bus_flush_close_unref(bus)
    }

    private var processing = false
    private var closeRequested = false

    public var isOpen: Bool { bus != nil && !closeRequested }

    /// This connection's unique name (`:1.42`).
    public var uniqueName: String? {
        guard let bus else { return nil }
        var name: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(bus, &name) >= 0, let name else { return nil }
        return String(cString: name)
    }

    // MARK: Driving (for the loop)

    public var fileDescriptor: Int32 { bus.map { sd_bus_get_fd($0) } ?? -1 }

    /// The poll events sd-bus waits for.
    public var pollEvents: Int16 { bus.map { Int16(truncatingIfNeeded: max(0, sd_bus_get_events($0))) } ?? 0 }

    /// sd-bus's next deadline on CLOCK_MONOTONIC in µs, nil when none.
    public var deadline: UInt64? {
        guard let bus else { return nil }
        var usec: UInt64 = 0
        guard sd_bus_get_timeout(bus, &usec) >= 0, usec != UInt64.max else { return nil }
        return usec
    }

    /// Processes everything ready; false when the connection is gone.
    public func process() -> Bool {
        guard let bus, !processing else { return bus != nil }
        processing = true
        var alive = true
        while !closeRequested {
            let r = sd_bus_process(bus, nil)
            if r < 0 { alive = false; break }
            if r == 0 { break }
        }
        processing = false
        if closeRequested {
            closeRequested = false
            closeNow()
            return false
        }
        return alive
    }

    // MARK: Calls

    /// Calls a method; `reply` runs on the loop thread with the reply's values or its error.
    public func call(
        _ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
        timeoutSeconds: UInt64 = 25, reply: @escaping (Result<[DBusValue], DBusError>) -> Void
    ) {
        do {
            let message = try newMethodCall(destination, path, interface, member, arguments)
            guard let bus else { throw DBusError(name: "errno", message: "bus closed") }
            let callback = MessageCallback { message in
                if let error = message.error {
                    reply(.failure(error))
                } else {
                    do { reply(.success(try message.readAll())) } catch let error as DBusError { reply(.failure(error)) } catch {
                        reply(.failure(DBusError(name: "errno", message: "\(error)")))
                    }
                }
            }
            try floatingSlot(callback) { slot, userdata in
                sd_bus_call_async(bus, &slot, message.pointer, dispatchMessage, userdata, timeoutSeconds * 1_000_000)
            }
        } catch let error as DBusError {
            reply(.failure(error))
        } catch {
            reply(.failure(DBusError(name: "errno", message: "\(error)")))
        }
    }

    /// Calls a method and waits for the reply, processing nothing else meanwhile (messages that
    /// arrive are queued). Only for test clients, which export nothing.
    public func callBlocking(
        _ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
        timeoutSeconds: UInt64 = 10
    ) throws -> [DBusValue] {
        let message = try newMethodCall(destination, path, interface, member, arguments)
        guard let bus else { throw DBusError(name: "errno", message: "bus closed") }
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let r = sd_bus_call(bus, message.pointer, timeoutSeconds * 1_000_000, &error, &reply)
        if r < 0 {
            if let name = error.name { throw DBusError(name: String(cString: name), message: error.message.map { String(cString: $0) } ?? "") }
            throw DBusError(errno: r, "\(interface).\(member)")
        }
        guard let reply else { return [] }
        return try DBusMessage(owning: reply).readAll()
    }

    private func newMethodCall(
        _ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue]
    ) throws -> DBusMessage {
        guard let bus else { throw DBusError(name: "errno", message: "bus closed") }
        var pointer: OpaquePointer?
        try check(sd_bus_message_new_method_call(bus, &pointer, destination, path, interface, member), "new call \(member)")
        guard let pointer else { throw DBusError(name: "errno", message: "no message") }
        let message = DBusMessage(owning: pointer)
        try message.append(arguments)
        return message
    }

    // MARK: Exporting and listening

    /// Routes every method call on `prefix` and the paths under it to `handler`, which must
    /// answer each call (`reply` or `replyError`).
    public func exportSubtree(_ prefix: String, handler: @escaping (DBusMessage) -> Void) throws {
        guard let bus else { throw DBusError(name: "errno", message: "bus closed") }
        try floatingSlot(MessageCallback(handler)) { slot, userdata in
            sd_bus_add_fallback(bus, &slot, prefix, dispatchMessage, userdata)
        }
    }

    /// Subscribes to the signals a match rule selects; the rule is installed asynchronously.
    public func addMatch(_ rule: String, handler: @escaping (DBusMessage) -> Void) throws {
        guard let bus else { throw DBusError(name: "errno", message: "bus closed") }
        try floatingSlot(MessageCallback(handler)) { slot, userdata in
            sd_bus_add_match_async(bus, &slot, rule, dispatchMessage, nil, userdata)
        }
    }

    /// Registers `callback` in a slot the bus owns; the slot releases it when freed.
    private func floatingSlot(
        _ callback: MessageCallback, _ register: (inout OpaquePointer?, UnsafeMutableRawPointer) -> Int32
    ) throws {
        let userdata = Unmanaged.passRetained(callback).toOpaque()
        var slot: OpaquePointer?
        let r = register(&slot, userdata)
        guard r >= 0, let slot else {
            Unmanaged<MessageCallback>.fromOpaque(userdata).release()
            throw DBusError(errno: r < 0 ? r : -EINVAL, "register callback")
        }
        sd_bus_slot_set_destroy_callback(slot, releaseCallback)
        sd_bus_slot_set_floating(slot, 1)
        sd_bus_slot_unref(slot)
    }

    // MARK: Answering and signalling

    public func reply(to call: DBusMessage, _ values: [DBusValue] = []) {
        guard let bus else { return }
        var pointer: OpaquePointer?
        guard sd_bus_message_new_method_return(call.pointer, &pointer) >= 0, let pointer else { return }
        let reply = DBusMessage(owning: pointer)
        do {
            try reply.append(values)
        } catch {
            replyError(to: call, name: "org.bluez.Error.Failed", message: "\(error)")
            return
        }
        sd_bus_send(bus, reply.pointer, nil)
    }

    public func replyError(to call: DBusMessage, name: String, message: String) {
        guard let bus else { return }
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer { sd_bus_error_free(&error) }
        sd_bus_error_set(&error, name, message)
        var pointer: OpaquePointer?
        guard sd_bus_message_new_method_error(call.pointer, &pointer, &error) >= 0, let pointer else { return }
        let reply = DBusMessage(owning: pointer)
        sd_bus_send(bus, reply.pointer, nil)
    }

    public func emitSignal(path: String, interface: String, member: String, _ values: [DBusValue]) {
        guard let bus else { return }
        var pointer: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &pointer, path, interface, member) >= 0, let pointer else { return }
        let signal = DBusMessage(owning: pointer)
        guard (try? signal.append(values)) != nil else { return }
        sd_bus_send(bus, signal.pointer, nil)
    }
}
