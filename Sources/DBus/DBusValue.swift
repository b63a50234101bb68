/// A D-Bus value with its type, as read from or written to a message. BlueZ's properties and
/// options are `a{sv}` trees, so the link layer reads them whole into this and looks things up,
/// rather than walking every message by hand with its own signature.
public indirect enum DBusValue: Sendable, Equatable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A file descriptor. Read: a duplicate this process owns (close it). Written: sd-bus
    /// duplicates it, the caller keeps its own.
    case fd(Int32)
    /// `a…` other than a dictionary; `element` is the element signature (needed when empty).
    case array(element: String, [DBusValue])
    /// `a{kv}`, entries in message order.
    case dict(key: String, value: String, [DBusDictEntry])
    case structure([DBusValue])
    case variant(DBusValue)

    /// Its D-Bus signature.
    public var signature: String {
        switch self {
        case .byte: return "y"
        case .bool: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .fd: return "h"
        case .array(let element, _): return "a" + element
        case .dict(let key, let value, _): return "a{" + key + value + "}"
        case .structure(let fields): return "(" + fields.map(\.signature).joined() + ")"
        case .variant: return "v"
        }
    }

    // MARK: Building

    public static func bytes(_ bytes: [UInt8]) -> DBusValue { .array(element: "y", bytes.map { .byte($0) }) }

    public static func strings(_ strings: [String]) -> DBusValue { .array(element: "s", strings.map { .string($0) }) }

    /// `a{sv}` from a property map, keys sorted so replies are stable.
    public static func properties(_ properties: [String: DBusValue]) -> DBusValue {
        .dict(key: "s", value: "v", properties.keys.sorted().compactMap { key in
            properties[key].map { DBusDictEntry(key: .string(key), value: .variant($0)) }
        })
    }

    // MARK: Reading (nil when the value has another type: D-Bus input is outside data)

    /// The value inside any number of variants.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    public var stringValue: String? {
        switch unwrapped {
        case .string(let value), .objectPath(let value), .signature(let value): return value
        default: return nil
        }
    }

    public var boolValue: Bool? {
        if case .bool(let value) = unwrapped { return value }
        return nil
    }

    /// Any unsigned or non-negative integer that fits an `Int`.
    public var intValue: Int? {
        switch unwrapped {
        case .byte(let v): return Int(v)
        case .uint16(let v): return Int(v)
        case .int16(let v): return Int(v)
        case .uint32(let v): return Int(v)
        case .int32(let v): return Int(v)
        case .uint64(let v): return Int(exactly: v)
        case .int64(let v): return Int(exactly: v)
        default: return nil
        }
    }

    public var fdValue: Int32? {
        if case .fd(let fd) = unwrapped { return fd }
        return nil
    }

    /// `ay` as bytes.
    public var bytesValue: [UInt8]? {
        guard case .array(let element, let items) = unwrapped, element == "y" else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(items.count)
        for item in items {
            guard case .byte(let byte) = item else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// `as` / `ao` as strings.
    public var stringsValue: [String]? {
        guard case .array(_, let items) = unwrapped else { return nil }
        var strings: [String] = []
        for item in items {
            guard let string = item.stringValue else { return nil }
            strings.append(string)
        }
        return strings
    }

    /// A dictionary with string-like keys (`a{sv}`, `a{oa{sa{sv}}}`, `a{sa{sv}}`); later
    /// duplicates win.
    public var dictValue: [String: DBusValue]? {
        guard case .dict(_, _, let entries) = unwrapped else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.stringValue else { return nil }
            result[key] = entry.value
        }
        return result
    }

    /// Every descriptor inside, for closing what a message handed over.
    public var descriptors: [Int32] {
        switch self {
        case .fd(let fd): return [fd]
        case .array(_, let items), .structure(let items): return items.flatMap(\.descriptors)
        case .dict(_, _, let entries): return entries.flatMap { $0.key.descriptors + $0.value.descriptors }
        case .variant(let inner): return inner.descriptors
        default: return []
        }
    }
}

/// One `{key, value}` of a D-Bus dictionary.
public struct DBusDictEntry: Sendable, Equatable {
    public let key: DBusValue
    public let value: DBusValue

    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}
