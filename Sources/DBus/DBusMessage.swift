import CSystemd
import Glibc

/// A D-Bus error: one a peer replied with (`org.bluez.Error.Failed`, …) or a local sd-bus failure
/// (named `errno` with its text), so callers can map names like `AccessDenied` to link errors.
public struct DBusError: Error, Equatable, CustomStringConvertible {
    public let name: String
    public let message: String

    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// A negative sd-bus return code.
    public init(errno code: Int32, _ context: String) {
        name = "errno"
        message = "\(context): \(String(cString: strerror(-code)))"
    }

    public var description: String { "\(name): \(message)" }

    /// Whether the bus or a peer refused us for lack of permission.
    public var isAccessDenied: Bool {
        name == DBusError.accessDenied || name == "org.bluez.Error.NotAuthorized" || message.contains("EACCES")
            || message.contains("Permission denied")
    }
}

/// An `sd_bus_message` reference. Reads and appends go through sd-bus's non-variadic calls
/// (`read_basic`, `enter_container`, `append_basic`, `open_container`) driven by `DBusValue`.
/// Not thread-safe, like sd-bus itself: only the bus loop's thread touches messages.
public final class DBusMessage {
    public let pointer: OpaquePointer

    /// Takes over a reference the caller owns (from `sd_bus_message_new_*`).
    public init(owning pointer: OpaquePointer) { self.pointer = pointer }

    /// Adds a reference to a message sd-bus lends to a callback.
    public init(borrowing pointer: OpaquePointer) {
        self.pointer = pointer
        sd_bus_message_ref(pointer)
    }

    deinit { sd_bus_message_unref(pointer) }

    public var path: String? { sd_bus_message_get_path(pointer).map { String(cString: $0) } }
    public var interface: String? { sd_bus_message_get_interface(pointer).map { String(cString: $0) } }
    public var member: String? { sd_bus_message_get_member(pointer).map { String(cString: $0) } }
    public var sender: String? { sd_bus_message_get_sender(pointer).map { String(cString: $0) } }

    public var isMethodCall: Bool { sd_bus_message_is_method_call(pointer, nil, nil) > 0 }

    /// The error this reply carries, if it is an error reply.
    public var error: DBusError? {
        guard let error = sd_bus_message_get_error(pointer), let name = error.pointee.name else { return nil }
        return DBusError(name: String(cString: name), message: error.pointee.message.map { String(cString: $0) } ?? "")
    }

    // MARK: Appending

    public func append(_ values: [DBusValue]) throws {
        for value in values { try append(value) }
    }

    public func append(_ value: DBusValue) throws {
        switch value {
        case .byte(var v): try basic("y", &v)
        case .bool(let b):
            var v: Int32 = b ? 1 : 0
            try basic("b", &v)
        case .int16(var v): try basic("n", &v)
        case .uint16(var v): try basic("q", &v)
        case .int32(var v): try basic("i", &v)
        case .uint32(var v): try basic("u", &v)
        case .int64(var v): try basic("x", &v)
        case .uint64(var v): try basic("t", &v)
        case .double(var v): try basic("d", &v)
        case .fd(var v): try basic("h", &v)
        case .string(let s), .objectPath(let s), .signature(let s):
            let type: CChar = value.signature.utf8.first.map { CChar(bitPattern: $0) } ?? 0
            try check(s.withCString { sd_bus_message_append_basic(pointer, type, $0) }, "append \(value.signature)")
        case .array(let element, let items):
            if element == "y" {
                let bytes = items.compactMap { item -> UInt8? in if case .byte(let b) = item { return b } else { return nil } }
                guard bytes.count == items.count else { throw DBusError(name: DBusError.invalidArgs, message: "ay holds a non-byte") }
                try check(bytes.withUnsafeBytes { sd_bus_message_append_array(pointer, ascii("y"), $0.baseAddress, $0.count) }, "append ay")
                return
            }
            try container("a", element) {
                for item in items {
                    guard item.signature == element else { throw DBusError(name: DBusError.invalidArgs, message: "array of \(element) holds \(item.signature)") }
                    try append(item)
                }
            }
        case .dict(let key, let valueType, let entries):
            try container("a", "{" + key + valueType + "}") {
                for entry in entries {
                    try container("e", key + valueType) {
                        try append(entry.key)
                        try append(entry.value)
                    }
                }
            }
        case .structure(let fields):
            try container("r", fields.map(\.signature).joined()) { try append(fields) }
        case .variant(let inner):
            try container("v", inner.signature) { try append(inner) }
        }
    }

    private func basic<T>(_ type: Character, _ value: inout T) throws {
        try check(withUnsafePointer(to: &value) { sd_bus_message_append_basic(pointer, ascii(type), $0) }, "append \(type)")
    }

    private func container(_ type: Character, _ contents: String, _ body: () throws -> Void) throws {
        try check(contents.withCString { sd_bus_message_open_container(pointer, ascii(type), $0) }, "open \(type)\(contents)")
        try body()
        try check(sd_bus_message_close_container(pointer), "close \(type)\(contents)")
    }

    // MARK: Reading

    /// Every remaining top-level value.
    public func readAll() throws -> [DBusValue] {
        var values: [DBusValue] = []
        while let value = try readValue() { values.append(value) }
        return values
    }

    /// The next value at the current level, or nil at the end of it.
    public func readValue() throws -> DBusValue? {
        var type: CChar = 0
        var contentsPointer: UnsafePointer<CChar>?
        let peeked = sd_bus_message_peek_type(pointer, &type, &contentsPointer)
        try check(peeked, "peek")
        if peeked == 0 { return nil }
        let contents = contentsPointer.map { String(cString: $0) } ?? ""
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "y"): return .byte(try readBasic("y", UInt8(0)))
        case UInt8(ascii: "b"): return .bool(try readBasic("b", Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int16(try readBasic("n", Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try readBasic("q", UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try readBasic("i", Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try readBasic("u", UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try readBasic("x", Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try readBasic("t", UInt64(0)))
        case UInt8(ascii: "d"): return .double(try readBasic("d", Double(0)))
        case UInt8(ascii: "h"):
            // The message owns its descriptor; keep a duplicate that outlives it.
            let fd = try readBasic("h", Int32(-1))
            let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
            guard copy >= 0 else { throw DBusError(errno: -errno, "dup fd") }
            return .fd(copy)
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            var string: UnsafePointer<CChar>?
            try check(sd_bus_message_read_basic(pointer, type, &string), "read string")
            let text = string.map { String(cString: $0) } ?? ""
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "o"): return .objectPath(text)
            case UInt8(ascii: "g"): return .signature(text)
            default: return .string(text)
            }
        case UInt8(ascii: "a"):
            if contents == "y" {
                var data: UnsafeRawPointer?
                var size = 0
                try check(sd_bus_message_read_array(pointer, ascii("y"), &data, &size), "read ay")
                guard let data, size > 0 else { return .bytes([]) }
                return .bytes(Array(UnsafeRawBufferPointer(start: data, count: size)))
            }
            return try inContainer("a", contents) {
                if contents.hasPrefix("{"), contents.hasSuffix("}") {
                    let inner = String(contents.dropFirst().dropLast())
                    let (key, value) = splitFirstType(inner)
                    var entries: [DBusDictEntry] = []
                    while let entry = try readValue() {
                        guard case .structure(let pair) = entry, pair.count == 2 else {
                            throw DBusError(name: DBusError.invalidArgs, message: "bad dict entry")
                        }
                        entries.append(DBusDictEntry(key: pair[0], value: pair[1]))
                    }
                    return .dict(key: key, value: value, entries)
                }
                var items: [DBusValue] = []
                while let item = try readValue() { items.append(item) }
                return .array(element: contents, items)
            }
        case UInt8(ascii: "e"), UInt8(ascii: "r"):
            return try inContainer(Character(UnicodeScalar(UInt8(bitPattern: type))), contents) {
                .structure(try readAll())
            }
        case UInt8(ascii: "v"):
            return try inContainer("v", contents) {
                guard let inner = try readValue() else { throw DBusError(name: DBusError.invalidArgs, message: "empty variant") }
                return .variant(inner)
            }
        default:
            throw DBusError(name: DBusError.invalidArgs, message: "unsupported D-Bus type \(type)")
        }
    }

    private func readBasic<T>(_ type: Character, _ initial: T) throws -> T {
        var value = initial
        try check(withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(pointer, ascii(type), $0) }, "read \(type)")
        return value
    }

    private func inContainer(_ type: Character, _ contents: String, _ body: () throws -> DBusValue) throws -> DBusValue {
        try check(contents.withCString { sd_bus_message_enter_container(pointer, ascii(type), $0) }, "enter \(type)\(contents)")
        let value = try body()
        try check(sd_bus_message_exit_container(pointer), "exit \(type)\(contents)")
        return value
    }
}

/// `"sv"` → ("s", "v"); `"oa{sv}"` → ("o", "a{sv}"): a dict entry's key is always basic.
private func splitFirstType(_ signature: String) -> (String, String) {
    guard let first = signature.first else { return ("", "") }
    return (String(first), String(signature.dropFirst()))
}

func ascii(_ character: Character) -> CChar {
    CChar(bitPattern: character.asciiValue ?? 0)
}

/// Throws a `DBusError` for a negative sd-bus return code; returns it otherwise.
@discardableResult
func check(_ code: Int32, _ context: String) throws -> Int32 {
    if code < 0 { throw DBusError(errno: code, context) }
    return code
}
