import DBus

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
