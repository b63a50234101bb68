import DBus
import CSystemd
import Glibc
import Mesh

/// The peripheral role of `BlueZEngine` (Docs/protocols/mesh.md 11.1): the exported GATT
/// application and advertisement answering bluetoothd's method calls, each central's writes
/// as a receive link of its own, and the notify link that carries what we send to them.
extension BlueZEngine {
    func handleMethodCall(_ call: DBusMessage) {
        guard let bus, call.isMethodCall else { return }
        let path = call.path ?? ""
        let interface = call.interface ?? ""
        let member = call.member ?? ""
        let arguments: [DBusValue]
        do { arguments = try call.readAll() } catch {
            return bus.replyError(to: call, name: DBusError.invalidArgs, message: "\(error)")
        }
        defer { for fd in arguments.flatMap(\.descriptors) { Glibc.close(fd) } }
        guard let interfaces = exportedInterfaces(at: path) else {
            return bus.replyError(to: call, name: DBusError.unknownObject, message: path)
        }
        // Frames and subscriptions come from bluetoothd only; anyone may read properties.
        if interface == BlueZNames.gattCharacteristic || interface == BlueZNames.advertisement, call.sender != bluezOwner {
            return bus.replyError(to: call, name: "org.bluez.Error.NotAuthorized", message: "only bluetoothd may call \(member)")
        }
        switch (interface, member) {
        case (BlueZNames.introspectable, "Introspect"):
            bus.reply(to: call, [.string(BlueZIntrospection.xml(path: path, interfaces: interfaces.keys.sorted(), children: children(of: path)))])
        case (BlueZNames.objectManager, "GetManagedObjects") where path == BlueZObjects.applicationRoot:
            bus.reply(to: call, [gatt.managedObjects])
        case (BlueZNames.properties, "Get"):
            guard let name = arguments.first?.stringValue, arguments.count == 2, let property = arguments[1].stringValue else {
                return bus.replyError(to: call, name: DBusError.invalidArgs, message: "Get takes (ss)")
            }
            guard let value = interfaces[name]?[property] else {
                return bus.replyError(to: call, name: DBusError.unknownProperty, message: "\(name).\(property)")
            }
            bus.reply(to: call, [.variant(value)])
        case (BlueZNames.properties, "GetAll"):
            guard let name = arguments.first?.stringValue else { return bus.replyError(to: call, name: DBusError.invalidArgs, message: "GetAll takes (s)") }
            bus.reply(to: call, [.properties(interfaces[name] ?? [:])])
        case (BlueZNames.properties, "Set"):
            bus.replyError(to: call, name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "read-only")
        case (BlueZNames.gattCharacteristic, "ReadValue") where path == BlueZObjects.outbound:
            bus.reply(to: call, [.bytes(gatt.outboundValue)])
        case (BlueZNames.gattCharacteristic, "WriteValue") where path == BlueZObjects.inbound:
            centralWrote(call, arguments)
        case (BlueZNames.gattCharacteristic, "StartNotify") where path == BlueZObjects.outbound:
            if !gatt.notifying {
                gatt.notifying = true
                notifyLink.notifying = true
                notifyingChanged()
            }
            bus.reply(to: call)
        case (BlueZNames.gattCharacteristic, "StopNotify") where path == BlueZObjects.outbound:
            if gatt.notifying {
                gatt.notifying = false
                notifyLink.notifying = false
                notifyingChanged()
            }
            bus.reply(to: call)
        case (BlueZNames.gattCharacteristic, "AcquireNotify") where path == BlueZObjects.outbound:
            acquireNotify(call, options: arguments.first?.dictValue ?? [:])
        case (BlueZNames.advertisement, "Release") where path == BlueZObjects.advertisement:
            // bluetoothd dropped the advertisement (adapter gone or reset).
            advertisementRegistered = false
            bus.reply(to: call)
        default:
            bus.replyError(to: call, name: DBusError.unknownMethod, message: "\(interface).\(member) on \(path)")
        }
    }

    func exportedInterfaces(at path: String) -> [String: [String: DBusValue]]? {
        switch path {
        case BlueZObjects.applicationRoot: return [BlueZNames.objectManager: [:]]
        case BlueZObjects.advertisement: return [BlueZNames.advertisement: advertisement.properties]
        case BlueZObjects.advertisementRoot: return [:]
        default: return gatt.interfaces(at: path)
        }
    }

    func children(of path: String) -> [String] {
        switch path {
        case BlueZObjects.applicationRoot: return ["service0"]
        case BlueZObjects.service: return ["char0", "char1"]
        case BlueZObjects.advertisementRoot: return ["adv0"]
        default: return []
        }
    }

    /// A frame from a central (WriteValue on 0002, options `device`, `mtu`).
    func centralWrote(_ call: DBusMessage, _ arguments: [DBusValue]) {
        guard let bus else { return }
        guard arguments.count == 2, let frame = arguments[0].bytesValue, let options = arguments[1].dictValue else {
            return bus.replyError(to: call, name: "org.bluez.Error.InvalidArguments", message: "WriteValue takes (aya{sv})")
        }
        guard frame.count <= MeshProtocol.maxFrame else {
            return bus.replyError(to: call, name: "org.bluez.Error.InvalidValueLength", message: "a frame is at most 509 bytes")
        }
        let device = options["device"]?.stringValue ?? "unknown"
        guard notifyLink.admit(device: device, attMTU: options["mtu"]?.intValue) else {
            return bus.replyError(to: call, name: "org.bluez.Error.NotPermitted", message: "already serving 4 centrals")
        }
        updateNotifyLink()
        bus.reply(to: call)
        continuation.yield(.frame(receiveLinks[device]?.link ?? BlueZTransport.notifyLink, frame))
    }

    /// AcquireNotify: a SOCK_SEQPACKET pair, one end to bluetoothd; each write on ours is one
    /// notification to the subscribers.
    func acquireNotify(_ call: DBusMessage, options: [String: DBusValue]) {
        guard let bus else { return }
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return bus.replyError(to: call, name: "org.bluez.Error.Failed", message: "socketpair: \(String(cString: strerror(errno)))")
        }
        let ours = pair[0]
        let theirs = pair[1]
        let attMTU = options["mtu"]?.intValue
        if let device = options["device"]?.stringValue, !notifyLink.admit(device: device, attMTU: attMTU) {
            Glibc.close(ours)
            Glibc.close(theirs)
            return bus.replyError(to: call, name: "org.bluez.Error.NotPermitted", message: "already serving 4 centrals")
        }
        notifyLink.acquiredSockets.insert(ours)
        gatt.notifyAcquired = true
        // sd-bus duplicates the descriptor into the message; ours to close is `theirs`.
        bus.reply(to: call, [.fd(theirs), .uint16(UInt16(clamping: attMTU ?? 23))])
        Glibc.close(theirs)
        loop.watch(ours, events: Int16(POLLIN)) { [self] revents in
            // bluetoothd closes its end when the last subscriber goes; it never writes to it.
            var scratch = [UInt8](repeating: 0, count: 16)
            let n = recv(ours, &scratch, scratch.count, Int32(MSG_DONTWAIT))
            if revents & Int16(POLLHUP | POLLERR) != 0 || n == 0 { releaseNotifySocket(ours) }
        }
        propertiesChanged(BlueZObjects.outbound, ["NotifyAcquired": .bool(true)])
        updateNotifyLink()
    }

    func releaseNotifySocket(_ socket: Int32) {
        guard notifyLink.acquiredSockets.remove(socket) != nil else { return }
        loop.unwatch(socket)
        Glibc.close(socket)
        if notifyLink.acquiredSockets.isEmpty {
            gatt.notifyAcquired = false
            propertiesChanged(BlueZObjects.outbound, ["NotifyAcquired": .bool(false)])
        }
        updateNotifyLink()
    }

    func notifyingChanged() {
        propertiesChanged(BlueZObjects.outbound, ["Notifying": .bool(gatt.notifying)])
        updateNotifyLink()
    }

    func propertiesChanged(_ path: String, _ changed: [String: DBusValue]) {
        bus?.emitSignal(path: path, interface: BlueZNames.properties, member: "PropertiesChanged", [
            .string(BlueZNames.gattCharacteristic), .properties(changed), .strings([]),
        ])
    }

    /// Reports the notify link up, down, or up again with a new (smaller or larger) MTU, and
    /// each admitted central's receive link (sending on the notify link) likewise.
    func updateNotifyLink() {
        let now = (up: notifyLink.isUp, mtu: notifyLink.mtu)
        defer { notifyLinkAnnounced = now; refreshFreeSlotFlag() }
        if now.up, !notifyLinkAnnounced.up || now.mtu != notifyLinkAnnounced.mtu {
            continuation.yield(.linkUp(BlueZTransport.notifyLink, mtu: now.mtu))
        } else if !now.up, notifyLinkAnnounced.up {
            continuation.yield(.linkDown(BlueZTransport.notifyLink))
        }
        var centralLeft = false
        for (device, known) in receiveLinks.sorted(by: { $0.value.link < $1.value.link }) where !notifyLink.contains(device: device) {
            receiveLinks[device] = nil
            continuation.yield(.linkDown(known.link))
            centralLeft = true
        }
        if centralLeft { reconsiderDuplicates() }
        for (device, mtu) in notifyLink.centrals.sorted(by: { $0.key < $1.key }) {
            let mtu = mtu ?? MeshProtocol.minMTU
            let link = receiveLinks[device]?.link ?? newLinkID()
            guard receiveLinks[device]?.mtu != mtu else { continue }
            receiveLinks[device] = (link, mtu)
            continuation.yield(.receiveLinkUp(link, mtu: mtu, sendsOn: BlueZTransport.notifyLink))
        }
    }

    /// A link id not in use: central connections and receive links share the numbering.
    func newLinkID() -> LinkID {
        let link = LinkID(nextLinkValue)
        nextLinkValue &+= 1
        if nextLinkValue == BlueZTransport.notifyLink.value { nextLinkValue = 1 }
        return link
    }
}
