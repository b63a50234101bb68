/// Names from `mesh.md` 11.1 and BlueZ's D-Bus API (doc/org.bluez.*.rst).
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

/// The GATT application's property values; `Value` and `Notifying` of the outbound
/// characteristic change as frames are notified.
struct GattApplicationState: Sendable {
    /// The last frame notified (what a `ReadValue` or `Get Value` returns).
    var outboundValue: [UInt8] = []
    /// Set by StartNotify/StopNotify.
    var notifying = false
    /// Set while an AcquireNotify socket is open.
    var notifyAcquired = false

    func interfaces(at path: String) -> [String: [String: DBusValue]]? {
        switch path {
        case BlueZObjects.service:
            return [BlueZNames.gattService: [
                "UUID": .string(BlueZNames.serviceUUID),
                "Primary": .bool(true),
                "Characteristics": .array(element: "o", [.objectPath(BlueZObjects.inbound), .objectPath(BlueZObjects.outbound)]),
            ]]
        case BlueZObjects.inbound:
            return [BlueZNames.gattCharacteristic: [
                "UUID": .string(BlueZNames.inboundUUID),
                "Service": .objectPath(BlueZObjects.service),
                "Flags": .strings(["write-without-response"]),
            ]]
        case BlueZObjects.outbound:
            return [BlueZNames.gattCharacteristic: [
                "UUID": .string(BlueZNames.outboundUUID),
                "Service": .objectPath(BlueZObjects.service),
                "Flags": .strings(["notify"]),
                "Value": .bytes(outboundValue),
                "Notifying": .bool(notifying),
                // Its presence tells bluetoothd to try AcquireNotify before StartNotify.
                "NotifyAcquired": .bool(notifyAcquired),
            ]]
        default:
            return nil
        }
    }

    /// `GetManagedObjects` at the application root: `a{oa{sa{sv}}}`.
    var managedObjects: DBusValue {
        let paths = [BlueZObjects.service, BlueZObjects.inbound, BlueZObjects.outbound]
        return .dict(key: "o", value: "a{sa{sv}}", paths.compactMap { path in
            interfaces(at: path).map { DBusDictEntry(key: .objectPath(path), value: interfaceMap($0)) }
        })
    }
}

/// `a{sa{sv}}` from interface → properties.
func interfaceMap(_ interfaces: [String: [String: DBusValue]]) -> DBusValue {
    .dict(key: "s", value: "a{sv}", interfaces.keys.sorted().compactMap { name in
        interfaces[name].map { DBusDictEntry(key: .string(name), value: .properties($0)) }
    })
}

/// Introspection XML for the exported objects (bluetoothd does not need it; `busctl` and
/// `gdbus introspect` do).
enum BlueZIntrospection {
    static func xml(path: String, interfaces: [String], children: [String]) -> String {
        var xml = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
         <interface name="org.freedesktop.DBus.Introspectable"><method name="Introspect"><arg type="s" direction="out"/></method></interface>
         <interface name="org.freedesktop.DBus.Properties">
          <method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
          <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>
          <signal name="PropertiesChanged"><arg type="s"/><arg type="a{sv}"/><arg type="as"/></signal>
         </interface>

        """
        for interface in interfaces { xml += methods[interface] ?? " <interface name=\"\(interface)\"/>\n" }
        for child in children { xml += " <node name=\"\(child)\"/>\n" }
        xml += "</node>\n"
        return xml
    }

    private static let methods: [String: String] = [
        BlueZNames.objectManager: """
         <interface name="org.freedesktop.DBus.ObjectManager">
          <method name="GetManagedObjects"><arg type="a{oa{sa{sv}}}" direction="out"/></method>
          <signal name="InterfacesAdded"><arg type="o"/><arg type="a{sa{sv}}"/></signal>
          <signal name="InterfacesRemoved"><arg type="o"/><arg type="as"/></signal>
         </interface>

        """,
        BlueZNames.gattCharacteristic: """
         <interface name="org.bluez.GattCharacteristic1">
          <method name="ReadValue"><arg type="a{sv}" direction="in"/><arg type="ay" direction="out"/></method>
          <method name="WriteValue"><arg type="ay" direction="in"/><arg type="a{sv}" direction="in"/></method>
          <method name="StartNotify"/>
          <method name="StopNotify"/>
          <method name="AcquireNotify"><arg type="a{sv}" direction="in"/><arg type="h" direction="out"/><arg type="q" direction="out"/></method>
          <property name="UUID" type="s" access="read"/>
          <property name="Service" type="o" access="read"/>
          <property name="Flags" type="as" access="read"/>
          <property name="Value" type="ay" access="read"/>
          <property name="Notifying" type="b" access="read"/>
          <property name="NotifyAcquired" type="b" access="read"/>
         </interface>

        """,
        BlueZNames.gattService: """
         <interface name="org.bluez.GattService1">
          <property name="UUID" type="s" access="read"/>
          <property name="Primary" type="b" access="read"/>
          <property name="Characteristics" type="ao" access="read"/>
         </interface>

        """,
        BlueZNames.advertisement: """
         <interface name="org.bluez.LEAdvertisement1">
          <method name="Release"/>
          <property name="Type" type="s" access="read"/>
          <property name="ServiceData" type="a{sv}" access="read"/>
          <property name="Includes" type="as" access="read"/>
         </interface>

        """,
    ]
}
