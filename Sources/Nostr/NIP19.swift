/// NIP-19 bech32 entities: bare keys and ids (`npub`, `nsec`, `note`) and TLV pointers
/// (`nprofile`, `nevent`). For display and copy-paste only; never used on the wire.
public enum NIP19 {
    /// `nprofile`: a public key with relays where it can be found.
    public struct ProfilePointer: Sendable, Hashable {
        public var publicKey: PublicKey
        public var relays: [String]
        public init(publicKey: PublicKey, relays: [String] = []) {
            self.publicKey = publicKey
            self.relays = relays
        }
    }

    /// `nevent`: an event id with optional relays, author and kind hints.
    public struct EventPointer: Sendable, Hashable {
        public var id: EventID
        public var relays: [String]
        public var author: PublicKey?
        public var kind: Int?
        public init(id: EventID, relays: [String] = [], author: PublicKey? = nil, kind: Int? = nil) {
            self.id = id
            self.relays = relays
            self.author = author
            self.kind = kind
        }
    }

    /// Any decoded entity, for input whose prefix is not known in advance.
    public enum Entity: Sendable {
        case publicKey(PublicKey)
        case secretKey(SecretKey)
        case eventID(EventID)
        case profile(ProfilePointer)
        case event(EventPointer)
    }

    public static func decode(_ string: String) throws -> Entity {
        let (hrp, data) = try Bech32.decode(string)
        switch hrp {
        case "npub": return .publicKey(try PublicKey(bytes: exactly32(data)))
        case "nsec":
            var bytes = data
            defer { bytes.zeroize() }
            return .secretKey(try SecretKey(bytes: bytes))
        case "note": return .eventID(try EventID(bytes: exactly32(data)))
        case "nprofile": return .profile(try decodeProfile(data))
        case "nevent": return .event(try decodeEvent(data))
        default: throw NostrError.nip19UnexpectedPrefix(hrp)
        }
    }

    static func decode(_ string: String, expecting prefix: String) throws -> [UInt8] {
        let (hrp, data) = try Bech32.decode(string)
        guard hrp == prefix else { throw NostrError.nip19UnexpectedPrefix(hrp) }
        return data
    }

    private static func exactly32(_ data: [UInt8]) throws -> [UInt8] {
        guard data.count == 32 else { throw NostrError.bech32InvalidLength }
        return data
    }

    // MARK: TLV

    private enum TLVType: UInt8 { case special = 0, relay = 1, author = 2, kind = 3 }

    /// Records in order; unknown types are skipped as NIP-19 asks.
    private static func parseTLV(_ data: [UInt8]) throws -> [(UInt8, ArraySlice<UInt8>)] {
        var records: [(UInt8, ArraySlice<UInt8>)] = []
        var i = 0
        while i < data.count {
            guard data.count - i >= 2 else { throw NostrError.nip19InvalidTLV("truncated header") }
            let type = data[i], length = Int(data[i + 1])
            i += 2
            guard data.count - i >= length else { throw NostrError.nip19InvalidTLV("truncated value") }
            records.append((type, data[i..<(i + length)]))
            i += length
        }
        return records
    }

    private static func relay(_ value: ArraySlice<UInt8>) throws -> String {
        guard let s = String(validating: value, as: UTF8.self) else { throw NostrError.nip19InvalidTLV("relay is not UTF-8") }
        return s
    }

    private static func decodeProfile(_ data: [UInt8]) throws -> ProfilePointer {
        var key: PublicKey?
        var relays: [String] = []
        for (type, value) in try parseTLV(data) {
            switch TLVType(rawValue: type) {
            case .special?:
                guard key == nil else { continue }
                guard value.count == 32 else { throw NostrError.nip19InvalidTLV("public key is not 32 bytes") }
                key = try PublicKey(bytes: Array(value))
            case .relay?: relays.append(try relay(value))
            default: continue
            }
        }
        guard let key else { throw NostrError.nip19InvalidTLV("missing public key") }
        return ProfilePointer(publicKey: key, relays: relays)
    }

    private static func decodeEvent(_ data: [UInt8]) throws -> EventPointer {
        var id: EventID?
        var relays: [String] = []
        var author: PublicKey?
        var kind: Int?
        for (type, value) in try parseTLV(data) {
            switch TLVType(rawValue: type) {
            case .special?:
                guard id == nil else { continue }
                guard value.count == 32 else { throw NostrError.nip19InvalidTLV("event id is not 32 bytes") }
                id = try EventID(bytes: Array(value))
            case .relay?: relays.append(try relay(value))
            case .author?:
                guard author == nil else { continue }
                guard value.count == 32 else { throw NostrError.nip19InvalidTLV("author is not 32 bytes") }
                author = try PublicKey(bytes: Array(value))
            case .kind?:
                guard kind == nil else { continue }
                guard value.count == 4 else { throw NostrError.nip19InvalidTLV("kind is not 4 bytes") }
                kind = value.reduce(0) { $0 << 8 | Int($1) }
            case nil: continue
            }
        }
        guard let id else { throw NostrError.nip19InvalidTLV("missing event id") }
        return EventPointer(id: id, relays: relays, author: author, kind: kind)
    }

    static func appendTLV(_ type: UInt8, _ value: [UInt8], to out: inout [UInt8]) throws {
        guard value.count <= 255 else { throw NostrError.nip19InvalidTLV("value longer than 255 bytes") }
        out.append(type)
        out.append(UInt8(value.count))
        out.append(contentsOf: value)
    }
}

extension PublicKey {
    public var npub: String { Bech32.encode(hrp: "npub", data: bytes) }

    public init(npub: String) throws {
        let data = try NIP19.decode(npub, expecting: "npub")
        guard data.count == 32 else { throw NostrError.bech32InvalidLength }
        try self.init(bytes: data)
    }
}

extension SecretKey {
    /// The secret as `nsec…`, for the user's own backup only.
    public var nsec: String {
        var b = bytes
        defer { b.zeroize() }
        return Bech32.encode(hrp: "nsec", data: b)
    }

    public convenience init(nsec: String) throws {
        var data = try NIP19.decode(nsec, expecting: "nsec")
        defer { data.zeroize() }
        try self.init(bytes: data)
    }
}

extension EventID {
    public var note: String { Bech32.encode(hrp: "note", data: bytes) }

    public init(note: String) throws {
        let data = try NIP19.decode(note, expecting: "note")
        guard data.count == 32 else { throw NostrError.bech32InvalidLength }
        try self.init(bytes: data)
    }
}

extension NIP19.ProfilePointer {
    /// Throws only when a relay URL is longer than a TLV value can hold (255 bytes).
    public func nprofile() throws -> String {
        var out: [UInt8] = []
        try NIP19.appendTLV(0, publicKey.bytes, to: &out)
        for relay in relays { try NIP19.appendTLV(1, Array(relay.utf8), to: &out) }
        return Bech32.encode(hrp: "nprofile", data: out)
    }

    public init(nprofile: String) throws {
        guard case .profile(let pointer) = try NIP19.decode(nprofile) else {
            throw NostrError.nip19UnexpectedPrefix(String(nprofile.prefix(while: { $0 != "1" })))
        }
        self = pointer
    }
}

extension NIP19.EventPointer {
    /// Throws only when a relay URL is longer than 255 bytes or the kind is outside 0…2³²−1.
    public func nevent() throws -> String {
        var out: [UInt8] = []
        try NIP19.appendTLV(0, id.bytes, to: &out)
        for relay in relays { try NIP19.appendTLV(1, Array(relay.utf8), to: &out) }
        if let author { try NIP19.appendTLV(2, author.bytes, to: &out) }
        if let kind {
            guard kind >= 0, kind <= Int(UInt32.max) else { throw NostrError.nip19InvalidTLV("kind out of range") }
            try NIP19.appendTLV(3, [UInt8(kind >> 24 & 0xff), UInt8(kind >> 16 & 0xff), UInt8(kind >> 8 & 0xff), UInt8(kind & 0xff)], to: &out)
        }
        return Bech32.encode(hrp: "nevent", data: out)
    }

    public init(nevent: String) throws {
        guard case .event(let pointer) = try NIP19.decode(nevent) else {
            throw NostrError.nip19UnexpectedPrefix(String(nevent.prefix(while: { $0 != "1" })))
        }
        self = pointer
    }
}
