/// A fragment frame (section 5): `0x01 ‖ 0x20 ‖ fragment_id 8 ‖ index u16 ‖ total u16 ‖
/// original_type u8 ‖ chunk`. Fragmentation is per hop: each node reassembles, checks the whole
/// packet and cuts it again for each outgoing link's MTU.
public struct FragmentFrame: Sendable, Hashable {
    public static let typeByte: UInt8 = 0x20
    public static let headerLength = 15

    /// The packet id's first 8 bytes.
    public let fragmentID: UInt64
    public let index: UInt16
    public let total: UInt16
    public let originalType: PacketType
    public let chunk: [UInt8]

    public var isFinal: Bool { index == total &- 1 }

    /// Whether a frame is a fragment (section 4 step 2: byte 0 = 1 and byte 1 = 0x20).
    public static func isFragment(_ frame: [UInt8]) -> Bool {
        frame.count >= 2 && frame[0] == MeshProtocol.version && frame[1] == typeByte
    }

    /// The header checks of section 5, in order: `truncated`, `fragment_total`,
    /// `fragment_index`, `fragment_type`.
    public static func decode(_ frame: [UInt8]) throws(MeshError) -> FragmentFrame {
        guard frame.count > headerLength else { throw .truncated }
        // The router only gets here for frames `isFragment` matched; other callers may not.
        guard frame[0] == MeshProtocol.version else { throw .badVersion }
        guard frame[1] == typeByte else { throw .unknownType }
        var reader = ByteReader(frame, offset: 2)
        let fragmentID = try reader.u64()
        let index = try reader.u16()
        let total = try reader.u16()
        let typeByte = try reader.u8()
        guard total >= 2 else { throw .fragmentTotal }
        guard index < total else { throw .fragmentIndex }
        guard let originalType = PacketType(rawValue: typeByte) else { throw .fragmentType }
        return FragmentFrame(fragmentID: fragmentID, index: index, total: total, originalType: originalType, chunk: reader.rest())
    }

    public var encoded: [UInt8] {
        var out: [UInt8] = [MeshProtocol.version, Self.typeByte]
        out.appendU64(fragmentID)
        out.appendU16(index)
        out.appendU16(total)
        out.append(originalType.rawValue)
        out += chunk
        return out
    }

    /// The frames that carry `packet` over a link of `mtu` (20–509): the packet itself if it
    /// fits, else `⌈len / c⌉` fragments of `c = mtu − 15` bytes (the last one shorter or equal).
    public static func frames(for packet: Packet, mtu: Int) -> [[UInt8]] {
        frames(encoded: packet.encoded, type: packet.type, id: packet.id, mtu: mtu)
    }

    static func frames(encoded: [UInt8], type: PacketType, id: PacketID, mtu: Int) -> [[UInt8]] {
        let mtu = min(max(mtu, MeshProtocol.minMTU), MeshProtocol.maxFrame)
        if encoded.count <= mtu { return [encoded] }
        let c = mtu - headerLength
        let total = (encoded.count + c - 1) / c
        return (0..<total).map { i in
            FragmentFrame(
                fragmentID: id.id8.value, index: UInt16(i), total: UInt16(total), originalType: type,
                chunk: Array(encoded[(i * c)..<min((i + 1) * c, encoded.count)])
            ).encoded
        }
    }
}
