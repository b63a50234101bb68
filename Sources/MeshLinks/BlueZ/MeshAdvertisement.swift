import DBus

/// What the advertisement says (11.1): `ServiceData` for the mesh service =
/// `0x01 ‖ mesh_id[0..4] ‖ flags`, no name, type `peripheral`. With the flags AD this is
/// 3 + 2 + 16 + 6 = 27 bytes, inside the 31 of a legacy advertisement, which is why there is no
/// `ServiceUUIDs` list (another 18) and no local name.
struct MeshAdvertisement: Sendable, Equatable {
    static let version: UInt8 = 0x01

    /// Bit 0: this node has a free peripheral slot (fewer than 4 subscribed centrals).
    static let freeSlot: UInt8 = 0x01
    /// Bit 1: this node hosts an open nearby invite.
    static let inviteOpen: UInt8 = 0x02

    /// `mesh_id[0..4]`: decides which of two nodes connects (the smaller).
    var shortID: [UInt8]
    var flags: UInt8

    var serviceData: [UInt8] { [MeshAdvertisement.version] + shortID + [flags] }

    /// Parses another node's service data; nil unless it is a version-1 Burrow advertisement.
    init?(serviceData: [UInt8]) {
        guard serviceData.count == 6, serviceData[0] == MeshAdvertisement.version else { return nil }
        shortID = Array(serviceData[1..<5])
        flags = serviceData[5]
    }

    init(shortID: [UInt8], freeSlot: Bool, inviteOpen: Bool) {
        self.shortID = shortID
        flags = (freeSlot ? MeshAdvertisement.freeSlot : 0) | (inviteOpen ? MeshAdvertisement.inviteOpen : 0)
    }

    var hasFreeSlot: Bool { flags & MeshAdvertisement.freeSlot != 0 }

    /// `org.bluez.LEAdvertisement1` properties.
    var properties: [String: DBusValue] {
        [
            "Type": .string("peripheral"),
            "ServiceData": .dict(key: "s", value: "v", [
                DBusDictEntry(key: .string(BlueZNames.serviceUUID), value: .variant(.bytes(serviceData))),
            ]),
            "Includes": .strings([]),
        ]
    }
}
