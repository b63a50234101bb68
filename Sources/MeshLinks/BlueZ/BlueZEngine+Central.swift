import DBus
import CSystemd
import Glibc
import Mesh

/// The central role of `BlueZEngine` (Docs/protocols/mesh.md 11.1): nodes found by their ServiceData, the
/// connection rule (the smaller short id connects, the larger waits 10 s), AcquireWrite and
/// AcquireNotify (or StartNotify), and each connection as a link of its own.
extension BlueZEngine {

    /// Our advertisement as another node's device shows it, if it is a Burrow node on our adapter.
    func meshAdvertisement(of path: String) -> MeshAdvertisement? {
        guard let device = objects[path]?[BlueZNames.device], device["Adapter"]?.stringValue == adapterPath,
              let serviceData = device["ServiceData"]?.dictValue,
              let bytes = serviceData.first(where: { $0.key.lowercased() == BlueZNames.serviceUUID })?.value.bytesValue
        else { return nil }
        return MeshAdvertisement(serviceData: bytes)
    }

    /// Starts (or schedules) a connection to a Burrow node if 11.1 says we should.
    func considerDevice(_ path: String) {
        guard running, let remote = meshAdvertisement(of: path) else { return }
        switch phases[path] ?? .idle {
        case .idle: break
        default: return
        }
        guard remote.hasFreeSlot, phases.values.filter(\.holdsSlot).count < BlueZLimits.maxCentralLinks else { return }
        let delay = centralConnectDelay(ours: advertisement.shortID, theirs: remote.shortID)
        if delay == 0 { return connect(device: path) }
        let timer = loop.after(delay) { [self] in
            guard case .waitingTurn = phases[path] else { return }
            phases[path] = .idle
            // The smaller id already came to us as a central: that connection is our link.
            guard !notifyLink.contains(device: path) else { return }
            guard running, phases.values.filter(\.holdsSlot).count < BlueZLimits.maxCentralLinks else { return }
            connect(device: path)
        }
        phases[path] = .waitingTurn(timer: timer)
    }

    func connect(device path: String) {
        phases[path] = .connecting
        bus?.call(BlueZNames.bus, path, BlueZNames.device, "Connect", timeoutSeconds: BlueZLimits.connectTimeout) { [self] result in
            guard phases[path] == .connecting else { return }
            if case .failure(let error) = result, error.name != "org.bluez.Error.AlreadyConnected" { return backOff(path) }
            if objects[path]?[BlueZNames.device]?["ServicesResolved"]?.boolValue == true { return acquire(device: path) }
            let timer = loop.after(BlueZLimits.servicesResolvedTimeout) { [self] in
                guard case .resolving = phases[path] else { return }
                disconnectAndBackOff(path)
            }
            phases[path] = .resolving(timer: timer)
        }
    }

    /// The remote mesh characteristic with `uuid` under a device.
    func remoteCharacteristic(_ uuid: String, of device: String) -> String? {
        objects.keys.sorted().first { path in
            guard path.hasPrefix(device + "/"), let characteristic = objects[path]?[BlueZNames.gattCharacteristic],
                  characteristic["UUID"]?.stringValue?.lowercased() == uuid,
                  let service = characteristic["Service"]?.stringValue
            else { return false }
            return objects[service]?[BlueZNames.gattService]?["UUID"]?.stringValue?.lowercased() == BlueZNames.serviceUUID
        }
    }

    /// AcquireWrite on 0002, then AcquireNotify (or StartNotify) on 0003: the link is up.
    func acquire(device path: String) {
        guard let inbound = remoteCharacteristic(BlueZNames.inboundUUID, of: path),
              let outbound = remoteCharacteristic(BlueZNames.outboundUUID, of: path)
        else { return disconnectAndBackOff(path) }
        phases[path] = .acquiring
        bus?.call(BlueZNames.bus, inbound, BlueZNames.gattCharacteristic, "AcquireWrite", [.properties([:])]) { [self] result in
            guard case .success(let values) = result, values.count == 2, let writeSocket = values[0].fdValue, let attMTU = values[1].intValue else {
                if case .success(let values) = result { for fd in values.flatMap(\.descriptors) { Glibc.close(fd) } }
                return disconnectAndBackOff(path)
            }
            guard phases[path] == .acquiring else { Glibc.close(writeSocket); return }
            bus?.call(BlueZNames.bus, outbound, BlueZNames.gattCharacteristic, "AcquireNotify", [.properties([:])]) { [self] result in
                guard phases[path] == .acquiring else {
                    Glibc.close(writeSocket)
                    if case .success(let values) = result { for fd in values.flatMap(\.descriptors) { Glibc.close(fd) } }
                    return
                }
                if case .success(let values) = result, let notifySocket = values.first?.fdValue {
                    return linkUp(device: path, writeSocket: writeSocket, notifySocket: notifySocket, notifyCharacteristic: outbound, attMTU: attMTU)
                }
                // No AcquireNotify: StartNotify, notifications then come as Value changes.
                bus?.call(BlueZNames.bus, outbound, BlueZNames.gattCharacteristic, "StartNotify") { [self] result in
                    guard phases[path] == .acquiring, case .success = result else {
                        Glibc.close(writeSocket)
                        if phases[path] == .acquiring { disconnectAndBackOff(path) }
                        return
                    }
                    linkUp(device: path, writeSocket: writeSocket, notifySocket: nil, notifyCharacteristic: outbound, attMTU: attMTU)
                }
            }
        }
    }

    func linkUp(device: String, writeSocket: Int32, notifySocket: Int32?, notifyCharacteristic: String, attMTU: Int) {
        let link = newLinkID()
        let central = CentralLink(
            link: link, device: device, mtu: linkMTU(attMTU: attMTU), writeSocket: writeSocket, notifySocket: notifySocket,
            notifyCharacteristic: notifyCharacteristic
        )
        centralLinks[link] = central
        phases[device] = .up(link)
        // Hang-ups on the write socket mean the connection is gone too.
        loop.watch(writeSocket, events: 0) { [self] _ in centralLost(device: device) }
        if let notifySocket {
            loop.watch(notifySocket, events: Int16(POLLIN)) { [self] revents in readNotification(central, revents: revents) }
        }
        continuation.yield(.linkUp(link, mtu: central.mtu))
    }

    /// One read = one notification = one frame.
    func readNotification(_ central: CentralLink, revents: Int16) {
        guard let socket = central.notifySocket else { return }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if n > 0 {
            if n <= MeshProtocol.maxFrame { continuation.yield(.frame(central.link, Array(buffer[0..<n]))) }
            return
        }
        if n == 0 || revents & Int16(POLLHUP | POLLERR) != 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            centralLost(device: central.device)
        }
    }

    /// A central connection ended (Connected false, a socket hung up, the device removed).
    func centralLost(device: String) {
        guard case .up(let link) = phases[device], let central = centralLinks[link] else { return }
        closeCentral(central)
        backOff(device)
        reconsiderDuplicates()
    }

    func closeCentral(_ central: CentralLink) {
        loop.unwatch(central.writeSocket)
        Glibc.close(central.writeSocket)
        if let notifySocket = central.notifySocket {
            loop.unwatch(notifySocket)
            Glibc.close(notifySocket)
        }
        centralLinks[central.link] = nil
        phases[central.device] = .idle
        continuation.yield(.linkDown(central.link))
    }

    /// Ends a connection the router found to duplicate another to the same node (11.1,
    /// `MeshAction.close`).
    /// * Our central connection: its sockets are released and the device disconnected — unless
    ///   it is also connected to us as a central, when that one radio connection carries the
    ///   link kept. We do not connect to it again while the duplicate may stand (`.duplicate`).
    /// * A central's connection to us (a receive link): when we are connected to that same
    ///   device, our side of it is released as above (the radio connection carries both);
    ///   otherwise the device is disconnected.
    /// * The notify link carries every central: it is never closed.
    func close(_ link: LinkID) {
        if let central = centralLinks[link] { return closeDuplicate(central) }
        guard let device = receiveLinks.first(where: { $0.value.link == link })?.key else { return }
        if let central = centralLinks.values.first(where: { $0.device == device }) { return closeDuplicate(central) }
        bus?.call(BlueZNames.bus, device, BlueZNames.device, "Disconnect") { _ in }
        notifyLink.remove(device: device)
        updateNotifyLink()
    }

    private func closeDuplicate(_ central: CentralLink) {
        if !notifyLink.contains(device: central.device) {
            bus?.call(BlueZNames.bus, central.device, BlueZNames.device, "Disconnect") { _ in }
        }
        closeCentral(central)
        phases[central.device] = .duplicate
    }

    /// A link went down: the devices left alone as duplicates may have been the same node as
    /// that link's peer, so 11.1 decides about them again (a duplicate still there is closed
    /// again by the router).
    func reconsiderDuplicates() {
        guard running, objects[adapterPath]?[BlueZNames.adapter]?["Powered"]?.boolValue == true else { return }
        for (path, phase) in phases.sorted(by: { $0.key < $1.key }) where phase == .duplicate {
            phases[path] = .idle
            considerDevice(path)
        }
    }

    func deviceGone(_ path: String) {
        if notifyLink.contains(device: path) {
            notifyLink.remove(device: path)
            updateNotifyLink()
        }
        switch phases[path] {
        case .up: centralLost(device: path)
        case .resolving(let timer), .waitingTurn(let timer):
            loop.cancelTimer(timer)
            backOff(path)
        case .connecting, .acquiring: backOff(path)
        case .idle, .backingOff, .duplicate, nil: break
        }
        if objects[path]?[BlueZNames.device] == nil {
            switch phases[path] {
            case .backingOff(let timer):
                loop.cancelTimer(timer)
                phases[path] = nil
            case .duplicate:
                phases[path] = nil
            default:
                break
            }
        }
    }

    func disconnectAndBackOff(_ path: String) {
        bus?.call(BlueZNames.bus, path, BlueZNames.device, "Disconnect") { _ in }
        backOff(path)
    }

    func backOff(_ path: String) {
        if case .resolving(let timer) = phases[path] { loop.cancelTimer(timer) }
        let timer = loop.after(BlueZLimits.retryDelay) { [self] in
            guard case .backingOff = phases[path] else { return }
            phases[path] = .idle
            considerDevice(path)
        }
        phases[path] = .backingOff(timer: timer)
    }
}
