/// Names from `Docs/protocols/mesh.md` 11.1 and BlueZ's D-Bus API (doc/org.bluez.*.rst).
enum BlueZNames {
    static let bus = "org.bluez"
    static let adapter = "org.bluez.Adapter1"
    static let device = "org.bluez.Device1"
    static let gattManager = "org.bluez.GattManager1"
    static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    static let gattService = "org.bluez.GattService1"
    static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    static let advertisement = "org.bluez.LEAdvertisement1"
    static let properties = "org.freedesktop.DBus.Properties"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let introspectable = "org.freedesktop.DBus.Introspectable"

    /// The mesh's GATT service and its two characteristics: frames to the node (written by
    /// centrals, `write-without-response`) and frames from it (`notify`).
    static let serviceUUID = "3fbe0001-b015-4ed5-aa45-fcefd7872a63"
    static let inboundUUID = "3fbe0002-b015-4ed5-aa45-fcefd7872a63"
    static let outboundUUID = "3fbe0003-b015-4ed5-aa45-fcefd7872a63"
}

/// The objects this node exports for BlueZ: the GATT application (object manager at its root,
/// one service, two characteristics) and the advertisement. Paths are fixed; bluetoothd tells
/// registrations apart by our unique bus name.
enum BlueZObjects {
    static let applicationRoot = "/org/burrow/mesh"
    static let service = "/org/burrow/mesh/service0"
    static let inbound = "/org/burrow/mesh/service0/char0"
    static let outbound = "/org/burrow/mesh/service0/char1"
    /// Outside the GATT tree: bluetoothd reads the application's objects whole and has no use
    /// for the advertisement there.
    static let advertisementRoot = "/org/burrow/advertisement"
    static let advertisement = "/org/burrow/advertisement/adv0"
}
