/// How a member runs a group: the knobs OpenMLS puts in `MlsGroupCreateConfig` /
/// `MlsGroupJoinConfig`. They are local: other members never see them. The defaults are
/// MDK 0.8.0's (OpenMLS 0.8.1 with Marmot's settings).
public struct GroupConfiguration: Sendable, Hashable {
    /// Reordering and gap tolerance of every sender ratchet (100 back, 1000 ahead).
    public var senderRatchet: SenderRatchetConfiguration
    /// How many past epochs keep their message secrets, so late application messages still
    /// decrypt (OpenMLS `max_past_epochs`, MDK 5).
    public var maxPastEpochs: Int
    /// How many past epochs keep their resumption PSK for PreSharedKey proposals.
    public var resumptionPSKRetention: Int
    /// The wire format of our commits and proposals (MDK: PrivateMessage). SelfRemove
    /// proposals are always sent as PublicMessage.
    public var handshakeWireFormat: WireFormat
    /// Zero padding of our PrivateMessages (MDK: none).
    public var padding: MessagePadding
    /// Whether our Welcomes carry the ratchet tree in the GroupInfo (MDK: yes).
    public var useRatchetTreeExtension: Bool

    public init(senderRatchet: SenderRatchetConfiguration = .default, maxPastEpochs: Int = 5, resumptionPSKRetention: Int = 5,
                handshakeWireFormat: WireFormat = .privateMessage, padding: MessagePadding = .none,
                useRatchetTreeExtension: Bool = true) {
        self.senderRatchet = senderRatchet
        self.maxPastEpochs = max(0, maxPastEpochs)
        self.resumptionPSKRetention = max(0, resumptionPSKRetention)
        self.handshakeWireFormat = handshakeWireFormat
        self.padding = padding
        self.useRatchetTreeExtension = useRatchetTreeExtension
    }

    /// MDK 0.8.0's settings.
    public static let `default` = GroupConfiguration()
}

extension GroupConfiguration: TLSCodable {
    public func encode(to writer: inout TLSWriter) {
        writer.writeUInt32(senderRatchet.outOfOrderTolerance)
        writer.writeUInt32(senderRatchet.maximumForwardDistance)
        writer.writeUInt32(UInt32(clamping: maxPastEpochs))
        writer.writeUInt32(UInt32(clamping: resumptionPSKRetention))
        handshakeWireFormat.encode(to: &writer)
        switch padding {
        case .none: writer.writeUInt32(0)
        case .toMultiple(let block): writer.writeUInt32(UInt32(clamping: max(0, block)))
        }
        writer.writeUInt8(useRatchetTreeExtension ? 1 : 0)
    }

    public init(from reader: inout TLSReader) throws {
        let ratchet = SenderRatchetConfiguration(outOfOrderTolerance: try reader.readUInt32(), maximumForwardDistance: try reader.readUInt32())
        let pastEpochs = Int(try reader.readUInt32())
        let psks = Int(try reader.readUInt32())
        let wireFormat = try WireFormat(from: &reader)
        guard wireFormat == .publicMessage || wireFormat == .privateMessage else {
            throw TLSDecodingError.invalidValue(field: "handshake wire format", value: UInt64(wireFormat.rawValue))
        }
        let block = Int(try reader.readUInt32())
        let tree = try reader.readUInt8()
        guard tree <= 1 else { throw TLSDecodingError.invalidValue(field: "use_ratchet_tree_extension", value: UInt64(tree)) }
        self.init(senderRatchet: ratchet, maxPastEpochs: pastEpochs, resumptionPSKRetention: psks, handshakeWireFormat: wireFormat,
                  padding: block > 1 ? .toMultiple(of: block) : .none, useRatchetTreeExtension: tree == 1)
    }
}
