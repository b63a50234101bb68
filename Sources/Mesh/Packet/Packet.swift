import Crypto

/// A packet decoded from the air whose structure is sound (section 4, step 3) but whose
/// signature is unchecked. It has an id already, because the seen-cache is consulted (step 5)
/// before the signature is (step 6); only `verified()` yields a `Packet`.
public struct UnverifiedPacket: Sendable {
    public let type: PacketType
    public let ttl: UInt8
    public let timestamp: UInt64
    public let sender: MeshID
    public let recipient: MeshID?
    public let payload: [UInt8]
    public let meshKey: [UInt8]
    public let signature: [UInt8]
    /// `"burrow-mesh-v1:packet" ‖ P'` (TTL byte zeroed): what the signature covers.
    public let signedBytes: [UInt8]
    public let id: PacketID

    /// Section 4 step 3: the structural checks, in the spec's order, each with its refusal.
    /// `feeds`: whether the feed types 0x40–0x44 are known (a node with feeds on).
    public static func decode(_ bytes: [UInt8], feeds: Bool = false) throws(MeshError) -> UnverifiedPacket {
        guard bytes.count >= 2 else { throw .truncated }
        guard bytes[0] == MeshProtocol.version else { throw .badVersion }
        guard let type = PacketType(rawValue: bytes[1]), feeds || !type.isFeed else { throw .unknownType }
        guard bytes.count >= 20 else { throw .truncated }
        let ttl = bytes[2]
        guard ttl >= 1, ttl <= MeshProtocol.maxTTL, !type.isLinkLocal || ttl == 1 else { throw .badTTL }
        let flags = bytes[3]
        guard flags & ~Packet.recipientFlag == 0 else { throw .badFlags }
        let hasRecipient = flags & Packet.recipientFlag != 0
        guard hasRecipient == type.isDirected else { throw .badRecipient }
        var reader = ByteReader(bytes, offset: 4)
        let timestamp = try reader.u64()
        let senderBytes = try reader.take(8)
        var recipient: MeshID?
        if hasRecipient {
            let field = try reader.take(8)
            guard let id = MeshID(bytes: field), id != .broadcast else { throw .badRecipient }
            recipient = id
        }
        let length = Int(try reader.u16())
        guard length <= type.maxPayload else { throw .payloadTooLarge }
        guard reader.remaining >= length + 96 else { throw .truncated }
        guard reader.remaining == length + 96 else { throw .trailingBytes }
        let payload = try reader.take(length)
        let meshKey = try reader.take(32)
        let signature = try reader.take(64)
        let sender = MeshID(meshKey: meshKey)
        guard MeshID(bytes: senderBytes) == sender else { throw .senderMismatch }

        var signed = Domain.packet
        signed.reserveCapacity(Domain.packet.count + bytes.count - 64)
        signed.append(contentsOf: bytes[0..<(bytes.count - 64)])
        signed[Domain.packet.count + 2] = 0
        return UnverifiedPacket(
            type: type, ttl: ttl, timestamp: timestamp, sender: sender, recipient: recipient, payload: payload,
            meshKey: meshKey, signature: signature, signedBytes: signed, id: PacketID(digest: Array(SHA256.hash(data: signed)))
        )
    }

    /// The wire bytes these fields encode to (the decoder accepts exactly one encoding).
    public var encoded: [UInt8] {
        Packet(type: type, ttl: ttl, timestamp: timestamp, sender: sender, recipient: recipient, payload: payload,
               meshKey: meshKey, signature: signature, id: id).encoded
    }

    /// Section 4 step 4.
    public func checkFreshness(now: UInt64) throws(MeshError) {
        try Freshness.check(timestamp: timestamp, type: type, now: now)
    }

    /// Section 4 step 6: the Ed25519 signature under the carried mesh key.
    public func verified() throws(MeshError) -> Packet {
        guard Ed25519Verifier.verify(signature: signature, message: signedBytes, publicKey: meshKey) else {
            throw .badSignature
        }
        return Packet(
            type: type, ttl: ttl, timestamp: timestamp, sender: sender, recipient: recipient, payload: payload,
            meshKey: meshKey, signature: signature, id: id
        )
    }
}

/// A verified mesh packet (section 3): its signature checked under its own mesh key, whose id is
/// its sender. Only `UnverifiedPacket.verified()` and `Packet.sign` make one.
public struct Packet: Sendable, Hashable {
    public let type: PacketType
    /// The TTL it was received (or made) with; `encoded(ttl:)` writes another.
    public let ttl: UInt8
    public let timestamp: UInt64
    public let sender: MeshID
    public let recipient: MeshID?
    public let payload: [UInt8]
    public let meshKey: [UInt8]
    public let signature: [UInt8]
    public let id: PacketID

    static let recipientFlag: UInt8 = 0x01

    /// Fixed bytes around the payload: 118, or 126 with a recipient.
    public static func overhead(directed: Bool) -> Int { directed ? 126 : 118 }

    public static func == (lhs: Packet, rhs: Packet) -> Bool { lhs.id == rhs.id && lhs.ttl == rhs.ttl }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// Builds and signs a packet. Throws `invalidArgument` for values the spec forbids on the
    /// air (TTL outside 1–7 or ≠ 1 for link-local types, a recipient on a broadcast type or none
    /// on a directed one, `ff×8`, a payload over the type's cap).
    public static func sign(
        type: PacketType, ttl: UInt8? = nil, timestamp: UInt64, recipient: MeshID?, payload: [UInt8], key: MeshKey
    ) throws(MeshError) -> Packet {
        let ttl = ttl ?? type.originTTL
        guard ttl >= 1, ttl <= MeshProtocol.maxTTL, !type.isLinkLocal || ttl == 1,
              (recipient != nil) == type.isDirected, recipient != .broadcast,
              payload.count <= type.maxPayload
        else { throw .invalidArgument }
        var signed = Domain.packet
        signed.append(contentsOf: header(type: type, ttl: 0, timestamp: timestamp, sender: key.id, recipient: recipient))
        signed.appendU16(UInt16(payload.count))
        signed.append(contentsOf: payload)
        signed.append(contentsOf: key.publicKey)
        let signature = key.sign(signed)
        return Packet(
            type: type, ttl: ttl, timestamp: timestamp, sender: key.id, recipient: recipient, payload: payload,
            meshKey: key.publicKey, signature: signature, id: PacketID(digest: Array(SHA256.hash(data: signed)))
        )
    }

    init(type: PacketType, ttl: UInt8, timestamp: UInt64, sender: MeshID, recipient: MeshID?, payload: [UInt8],
         meshKey: [UInt8], signature: [UInt8], id: PacketID) {
        self.type = type
        self.ttl = ttl
        self.timestamp = timestamp
        self.sender = sender
        self.recipient = recipient
        self.payload = payload
        self.meshKey = meshKey
        self.signature = signature
        self.id = id
    }

    private static func header(type: PacketType, ttl: UInt8, timestamp: UInt64, sender: MeshID, recipient: MeshID?) -> [UInt8] {
        var out: [UInt8] = [MeshProtocol.version, type.rawValue, ttl, recipient == nil ? 0 : recipientFlag]
        out.appendU64(timestamp)
        out.appendU64(sender.value)
        if let recipient { out.appendU64(recipient.value) }
        return out
    }

    /// The signed bytes: `"burrow-mesh-v1:packet" ‖ P'` with the TTL byte 0.
    public var signedBytes: [UInt8] { Domain.packet + encoded(ttl: 0).dropLast(64) }

    /// The wire encoding with this packet's TTL.
    public var encoded: [UInt8] { encoded(ttl: ttl) }

    /// The wire encoding with `ttl` (forwarding sends TTL − 1; the signature is unaffected).
    public func encoded(ttl: UInt8) -> [UInt8] {
        var out = Self.header(type: type, ttl: ttl, timestamp: timestamp, sender: sender, recipient: recipient)
        out.reserveCapacity(out.count + 2 + payload.count + 96)
        out.appendU16(UInt16(payload.count))
        out.append(contentsOf: payload)
        out.append(contentsOf: meshKey)
        out.append(contentsOf: signature)
        return out
    }

    /// The packet with another TTL (same id and signature).
    public func with(ttl newTTL: UInt8) -> Packet {
        Packet(type: type, ttl: newTTL, timestamp: timestamp, sender: sender, recipient: recipient, payload: payload,
               meshKey: meshKey, signature: signature, id: id)
    }

    public var encodedLength: Int { Self.overhead(directed: recipient != nil) + payload.count }
}

extension MeshProtocol {
    public static let maxTTL: UInt8 = 7
    /// The largest frame any link carries (section 1).
    public static let maxFrame = 509
    public static let minMTU = 20
}
