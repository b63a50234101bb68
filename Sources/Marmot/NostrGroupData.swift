import MLS
import Nostr

/// Marmot's group metadata, carried in the GroupContext as extension 0xF2EE (MIP-01), with the
/// exact bytes MDK's `TlsNostrGroupDataExtension` has (tls_codec derive, MLS varint vectors):
///
/// ```
/// uint16   version
/// opaque   nostr_group_id[32]
/// V<u8>    name, description                (UTF-8)
/// V<[32]>  admin_pubkeys                    (raw x-only keys, sorted)
/// V<V<u8>> relays                           (RelayUrl strings, sorted by parsed URL)
/// V<u8>    image_hash, image_key, image_nonce, image_upload_key   (empty, or 32/32/12/32)
/// V<u8>    disappearing_message_secs        (version ≥ 3 only: empty, or u64 big-endian > 0)
/// ```
///
/// Reading follows MDK after 0.8.0: versions 1 and 2 without trailing bytes, version 3 with the
/// disappearing-messages field, versions above 3 with unknown appended fields tolerated (kept
/// here and written back, so a newer peer's fields survive our metadata updates). MDK 0.8.0
/// itself reads only the 10-field body, so write version 2 (`currentVersion`) unless
/// disappearing messages are on. Admins and relays are sets, as in MDK: decoding sorts and
/// deduplicates them, so re-encoding gives MDK's bytes.
public struct NostrGroupData: Equatable, Sendable {
    public static let extensionType = ExtensionType(0xF2EE)
    /// The version MDK 0.8.0 writes.
    public static let currentVersion: UInt16 = 2
    /// The first version with `disappearing_message_secs`.
    public static let disappearingMessagesVersion: UInt16 = 3

    public var version: UInt16
    /// 32 random bytes; lowercase hex of it is the kind-445 `h` tag.
    public var nostrGroupID: [UInt8]
    public var name: String
    public var description: String
    /// 32-byte x-only Nostr keys, raw (MDK does not check them against the curve), kept sorted
    /// and unique.
    public var admins: [[UInt8]] { didSet { admins = Self.adminSet(admins) } }
    /// Kept sorted and unique by `RelayURL` order.
    public var relays: [RelayURL] { didSet { relays = RelayURL.sortedSet(relays) } }
    /// SHA-256 of the encrypted image blob (32 bytes).
    public var imageHash: [UInt8]?
    /// Version 2: the image seed; version 1: the image key itself (32 bytes).
    public var imageKey: Secret?
    /// 12 bytes.
    public var imageNonce: Secret?
    /// Version 2: the Blossom upload seed (32 bytes).
    public var imageUploadKey: Secret?
    /// Version ≥ 3: messages expire this many seconds after creation; nil = off.
    public var disappearingMessageSecs: UInt64?
    /// Fields a version above 3 appended, kept verbatim.
    public var unknownFields: [UInt8]

    /// A group's data as MDK creates it: version 2, or 3 when disappearing messages are on.
    public init(
        nostrGroupID: [UInt8], name: String, description: String = "", admins: [[UInt8]], relays: [RelayURL],
        imageHash: [UInt8]? = nil, imageKey: Secret? = nil, imageNonce: Secret? = nil, imageUploadKey: Secret? = nil,
        disappearingMessageSecs: UInt64? = nil
    ) {
        let disappearing = disappearingMessageSecs == 0 ? nil : disappearingMessageSecs
        self.version = disappearing == nil ? Self.currentVersion : Self.disappearingMessagesVersion
        self.nostrGroupID = nostrGroupID
        self.name = name
        self.description = description
        self.admins = Self.adminSet(admins)
        self.relays = RelayURL.sortedSet(relays)
        self.imageHash = imageHash
        self.imageKey = imageKey
        self.imageNonce = imageNonce
        self.imageUploadKey = imageUploadKey
        self.disappearingMessageSecs = disappearing
        self.unknownFields = []
    }

    /// A fresh group's data with a random `nostr_group_id` drawn from `rng`.
    public init<R: RandomNumberGenerator>(
        name: String, description: String = "", admins: [[UInt8]], relays: [RelayURL], using rng: inout R
    ) {
        self.init(nostrGroupID: rng.randomBytes(32), name: name, description: description, admins: admins, relays: relays)
    }

    /// The `h` tag value.
    public var nostrGroupIDHex: String { Hex.encode(nostrGroupID) }

    public func isAdmin(_ identity: [UInt8]) -> Bool { admins.contains(identity) }

    private static func adminSet(_ keys: [[UInt8]]) -> [[UInt8]] {
        Array(Set(keys)).sorted { $0.lexicographicallyPrecedes($1) }
    }

    // MARK: Decoding

    /// Decodes the extension body (the `extension_data` of a 0xF2EE extension).
    public init(extensionData bytes: [UInt8]) throws {
        var r = TLSReader(bytes)
        do {
            let version = try r.readUInt16()
            let nostrGroupID = try r.readRaw(32)
            let name = try r.readOpaque()
            let description = try r.readOpaque()
            let admins = try r.readVector { try $0.readRaw(32) }
            let relays = try r.readVector { try $0.readOpaque() }
            let imageHash = try r.readOpaque()
            let imageKey = try r.readOpaque()
            let imageNonce = try r.readOpaque()
            let imageUploadKey = try r.readOpaque()
            var disappearing: [UInt8] = []
            if version >= Self.disappearingMessagesVersion { disappearing = try r.readOpaque() }
            var unknown: [UInt8] = []
            if !r.isAtEnd {
                guard version > Self.disappearingMessagesVersion else {
                    throw MarmotError.groupDataTrailingBytes(version: version, count: r.remaining)
                }
                unknown = try r.readRaw(r.remaining)
            }
            try self.init(
                version: version, nostrGroupID: nostrGroupID, name: name, description: description, admins: admins,
                relays: relays, imageHash: imageHash, imageKey: imageKey, imageNonce: imageNonce,
                imageUploadKey: imageUploadKey, disappearing: disappearing, unknown: unknown)
        } catch let error as TLSDecodingError {
            throw MarmotError.groupDataDecoding(error)
        }
    }

    /// MDK's `from_raw` checks, in its order.
    private init(
        version: UInt16, nostrGroupID: [UInt8], name: [UInt8], description: [UInt8], admins: [[UInt8]], relays: [[UInt8]],
        imageHash: [UInt8], imageKey: [UInt8], imageNonce: [UInt8], imageUploadKey: [UInt8],
        disappearing: [UInt8], unknown: [UInt8]
    ) throws {
        guard version != 0 else { throw MarmotError.groupDataVersionZero }
        var urls: [RelayURL] = []
        for relay in relays {
            guard let text = String(validating: relay, as: UTF8.self) else { throw MarmotError.groupDataInvalidUTF8(field: "relays") }
            urls.append(try RelayURL.marmot(text))
        }
        func optional(_ bytes: [UInt8], _ field: String, _ size: Int) throws -> [UInt8]? {
            if bytes.isEmpty { return nil }
            guard bytes.count == size else { throw MarmotError.groupDataFieldLength(field: field, expected: size, actual: bytes.count) }
            return bytes
        }
        let hash = try optional(imageHash, "image_hash", 32)
        let key = try optional(imageKey, "image_key", 32).map(Secret.init)
        let nonce = try optional(imageNonce, "image_nonce", 12).map(Secret.init)
        let uploadKey = try optional(imageUploadKey, "image_upload_key", 32).map(Secret.init)
        var secs: UInt64?
        if let raw = try optional(disappearing, "disappearing_message_secs", 8) {
            let value = raw.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard value != 0 else { throw MarmotError.groupDataDisappearingZero }
            secs = value
        }
        guard let nameText = String(validating: name, as: UTF8.self) else { throw MarmotError.groupDataInvalidUTF8(field: "name") }
        guard let descriptionText = String(validating: description, as: UTF8.self) else {
            throw MarmotError.groupDataInvalidUTF8(field: "description")
        }
        self.version = version
        self.nostrGroupID = nostrGroupID
        self.name = nameText
        self.description = descriptionText
        self.admins = Self.adminSet(admins)
        self.relays = RelayURL.sortedSet(urls)
        self.imageHash = hash
        self.imageKey = key
        self.imageNonce = nonce
        self.imageUploadKey = uploadKey
        self.disappearingMessageSecs = secs
        self.unknownFields = unknown
    }

    /// The 0xF2EE extension of a GroupContext (or GroupInfo) extension list, decoded; nil when absent.
    public init?(extensions: Extensions) throws {
        guard let data = extensions.unknown(Self.extensionType) else { return nil }
        try self.init(extensionData: data)
    }

    // MARK: Encoding

    /// The extension body, as MDK writes it: the 10-field struct for versions 1–2, plus
    /// `disappearing_message_secs` (and any kept unknown fields) from version 3.
    public func extensionData() throws -> [UInt8] {
        guard version != 0 else { throw MarmotError.groupDataUnencodable("version 0") }
        guard nostrGroupID.count == 32 else { throw MarmotError.groupDataUnencodable("nostr_group_id must be 32 bytes") }
        guard admins.allSatisfy({ $0.count == 32 }) else { throw MarmotError.groupDataUnencodable("admin keys must be 32 bytes") }
        func check(_ count: Int?, _ field: String, _ size: Int) throws {
            if let count, count != size { throw MarmotError.groupDataUnencodable("\(field) must be \(size) bytes") }
        }
        try check(imageHash?.count, "image_hash", 32)
        try check(imageKey?.count, "image_key", 32)
        try check(imageNonce?.count, "image_nonce", 12)
        try check(imageUploadKey?.count, "image_upload_key", 32)
        if version < Self.disappearingMessagesVersion {
            guard disappearingMessageSecs == nil else {
                throw MarmotError.groupDataUnencodable("disappearing messages need version 3")
            }
            guard unknownFields.isEmpty else { throw MarmotError.groupDataUnencodable("unknown fields need a version above 3") }
        } else if version == Self.disappearingMessagesVersion, !unknownFields.isEmpty {
            throw MarmotError.groupDataUnencodable("unknown fields need a version above 3")
        }
        if disappearingMessageSecs == 0 { throw MarmotError.groupDataUnencodable("disappearing_message_secs must not be 0") }

        var w = TLSWriter(capacity: 128 + name.utf8.count + description.utf8.count + 33 * admins.count)
        w.writeUInt16(version)
        w.writeRaw(nostrGroupID)
        w.writeOpaque(Array(name.utf8))
        w.writeOpaque(Array(description.utf8))
        w.writeVector { inner in for admin in admins { inner.writeRaw(admin) } }
        w.writeVector { inner in for relay in relays { inner.writeOpaque(Array(relay.string.utf8)) } }
        w.writeOpaque(imageHash ?? [])
        w.writeOpaque(imageKey?.unsafeBytes ?? [])
        w.writeOpaque(imageNonce?.unsafeBytes ?? [])
        w.writeOpaque(imageUploadKey?.unsafeBytes ?? [])
        if version >= Self.disappearingMessagesVersion {
            if let secs = disappearingMessageSecs {
                w.writeOpaque((0..<8).map { UInt8(truncatingIfNeeded: secs >> (8 * UInt64(7 - $0))) })
            } else {
                w.writeOpaque([UInt8]())
            }
            w.writeRaw(unknownFields)
        }
        return w.bytes
    }

    /// The GroupContext extension carrying this data.
    public func groupContextExtension() throws -> Extension {
        .unknown(Self.extensionType, try extensionData())
    }
}
