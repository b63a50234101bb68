import DBus
import CSystemd
import Glibc
import Mesh

/// The BlueZ link layer's state and logic, confined to its `BusLoop` thread: the D-Bus
/// connection, the cached `org.bluez` object tree, the exported GATT application and
/// advertisement, the central connections and the notify link. `BlueZTransport` posts work here.
final class BlueZEngine: @unchecked Sendable {
    let loop: BusLoop
    let continuation: AsyncStream<TransportEvent>.Continuation
    var bus: DBusConnection?

    /// The adapter asked for (`hci1`), nil for the first one.
    let requestedAdapter: String?
    private(set) var adapterPath = ""
    var advertisement: MeshAdvertisement
    var inviteOpen: Bool
    var advertisementRegistered = false
    /// `advertise` callers waiting for the re-registration under way, and for the next one.
    private var advertisementInFlight: [(MeshLinkError?) -> Void] = []
    private var advertisementQueued: [(MeshLinkError?) -> Void] = []

    /// The unique name owning `org.bluez`: only its signals are believed.
    var bluezOwner: String?
    private var applicationRegistered = false
    /// Bumped whenever org.bluez changes owner. Each registration step checks it: a step
    /// answered by (or meant for) a bluetoothd that has gone since belongs to a void attempt.
    private var generation = 0
    /// bluetoothd is back but has not reported our adapter yet: its InterfacesAdded resumes
    /// the registration.
    private var awaitingAdapter = false
    /// The timer of the next try after a failed re-registration.
    private var attachRetry: Int?
    /// `org.bluez`'s objects: path → interface → properties.
    var objects: [String: [String: [String: DBusValue]]] = [:]

    var gatt = GattApplicationState()
    var notifyLink = NotifyLinkState()
    var notifyLinkAnnounced: (up: Bool, mtu: Int) = (false, 0)
    /// Each central writing to our peripheral: its receive link (issue 19: one central must not
    /// spend the others' frame budget and reassembly slots) and the MTU last reported for it.
    var receiveLinks: [String: (link: LinkID, mtu: Int)] = [:]

    var phases: [String: CentralPhase] = [:]
    var centralLinks: [LinkID: CentralLink] = [:]
    var nextLinkValue: UInt32 = 1
    var running = false

    init(loop: BusLoop, continuation: AsyncStream<TransportEvent>.Continuation, adapter: String?, shortID: [UInt8], inviteOpen: Bool) {
        self.loop = loop
        self.continuation = continuation
        requestedAdapter = adapter
        self.inviteOpen = inviteOpen
        advertisement = MeshAdvertisement(shortID: shortID, freeSlot: true, inviteOpen: inviteOpen)
    }

    // MARK: Start

    /// Connects, checks the adapter, registers the application and advertisement, starts
    /// discovery; `done` gets nil or the error that stops the start.
    func start(busAddress: String?, done: @escaping (MeshLinkError?) -> Void) {
        let bus: DBusConnection
        do {
            bus = try DBusConnection(address: busAddress)
            try bus.exportSubtree(BlueZObjects.applicationRoot) { [self] in handleMethodCall($0) }
            try bus.exportSubtree(BlueZObjects.advertisementRoot) { [self] in handleMethodCall($0) }
            try bus.addMatch("type='signal',interface='\(BlueZNames.objectManager)'") { [self] in handleSignal($0) }
            try bus.addMatch("type='signal',interface='\(BlueZNames.properties)',member='PropertiesChanged'") { [self] in
                handleSignal($0)
            }
            try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(BlueZNames.bus)'"
            ) { [self] in bluezOwnerChanged($0) }
        } catch let error as DBusError {
            if error.isAccessDenied { return done(.bluetoothDenied("the D-Bus system bus refused us: \(error.message)")) }
            return done(.noAdapter("no D-Bus system bus to reach bluetoothd (\(error.message)); use --mesh udp:PORT,PEER… instead"))
        } catch {
            return done(.noAdapter("\(error)"))
        }
        self.bus = bus
        loop.connection = bus
        bus.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", [.string(BlueZNames.bus)]) { [self] result in
            switch result {
            case .failure(let error): done(startError(error, doing: "GetNameOwner"))
            case .success(let values):
                bluezOwner = values.first?.stringValue
                attach(done: done)
            }
        }
    }

    /// What a registration step gets when bluetoothd changed while it was under way.
    private static let restarted = MeshLinkError.bluez("bluetoothd restarted while the mesh registered with it; start the mesh again")

    /// Registers with bluetoothd: reads its objects, chooses and powers the adapter, registers
    /// the GATT application and the advertisement, starts discovery. At start, and again each
    /// time bluetoothd comes back (`reattach`): it keeps nothing of ours across a restart.
    private func attach(done: @escaping (MeshLinkError?) -> Void) {
        let attempt = generation
        bus?.call(BlueZNames.bus, "/", BlueZNames.objectManager, "GetManagedObjects") { [self] result in
            guard attempt == generation else { return done(Self.restarted) }
            switch result {
            case .failure(let error):
                done(startError(error, doing: "GetManagedObjects"))
            case .success(let values):
                cacheObjects(values.first)
                if let problem = chooseAdapter() { return done(problem) }
                powerAdapter(attempt, done: done)
            }
        }
    }

    /// Maps a D-Bus failure during start to a link error.
    private func startError(_ error: DBusError, doing what: String) -> MeshLinkError {
        if error.isAccessDenied { return .bluetoothDenied("\(what) on org.bluez: \(error.message)") }
        if error.name == DBusError.serviceUnknown || error.name == DBusError.nameHasNoOwner {
            return .noAdapter("org.bluez is not on the bus (is bluetoothd running?); use --mesh udp:PORT,PEER… to run the mesh without Bluetooth")
        }
        return .bluez("\(what): \(error)")
    }

    private func chooseAdapter() -> MeshLinkError? {
        let adapters = objects.keys.filter { objects[$0]?[BlueZNames.adapter] != nil }.sorted()
        guard !adapters.isEmpty else {
            return .noAdapter("bluetoothd reports no Bluetooth adapter; use --mesh udp:PORT,PEER… to run the mesh without one")
        }
        let chosen: String
        if let requestedAdapter {
            guard let match = adapters.first(where: { $0.split(separator: "/").last.map(String.init) == requestedAdapter }) else {
                let names = adapters.compactMap { $0.split(separator: "/").last }.joined(separator: ", ")
                return .noAdapter("no Bluetooth adapter \(requestedAdapter) (present: \(names)); use --mesh bluez:NAME or --mesh udp:PORT,PEER…")
            }
            chosen = match
        } else {
            chosen = adapters[0]
        }
        let interfaces = objects[chosen] ?? [:]
        let name = chosen.split(separator: "/").last.map(String.init) ?? chosen
        for needed in [BlueZNames.gattManager, BlueZNames.advertisingManager] where interfaces[needed] == nil {
            return .noAdapter("adapter \(name) has no \(needed) (no Bluetooth LE support); use --mesh udp:PORT,PEER…")
        }
        adapterPath = chosen
        return nil
    }

    var adapterName: String { adapterPath.split(separator: "/").last.map(String.init) ?? "" }

    private func powerAdapter(_ attempt: Int, done: @escaping (MeshLinkError?) -> Void) {
        if objects[adapterPath]?[BlueZNames.adapter]?["Powered"]?.boolValue == true { return registerApplication(attempt, done: done) }
        bus?.call(BlueZNames.bus, adapterPath, BlueZNames.properties, "Set", [
            .string(BlueZNames.adapter), .string("Powered"), .variant(.bool(true)),
        ]) { [self] result in
            guard attempt == generation else { return done(Self.restarted) }
            if case .failure(let error) = result {
                if error.isAccessDenied { return done(.bluetoothDenied("powering \(adapterName): \(error.message)")) }
                return done(.noAdapter("adapter \(adapterName) is off and cannot be powered on (\(error.message)); check rfkill, or use --mesh udp:PORT,PEER…"))
            }
            registerApplication(attempt, done: done)
        }
    }

    private func registerApplication(_ attempt: Int, done: @escaping (MeshLinkError?) -> Void) {
        bus?.call(
            BlueZNames.bus, adapterPath, BlueZNames.gattManager, "RegisterApplication",
            [.objectPath(BlueZObjects.applicationRoot), .properties([:])]
        ) { [self] result in
            guard attempt == generation else { return done(Self.restarted) }
            if case .failure(let error) = result { return done(startError(error, doing: "RegisterApplication")) }
            applicationRegistered = true
            // In the queue of advertisement rounds: an `advertise` under way goes first, this
            // round then registers the latest data.
            queueAdvertisementRound { [self] error in
                guard attempt == generation else { return done(Self.restarted) }
                if let error { return done(error) }
                startDiscovery(attempt, done: done)
            }
        }
    }

    private func registerAdvertisement(_ done: @escaping (DBusError?) -> Void) {
        bus?.call(
            BlueZNames.bus, adapterPath, BlueZNames.advertisingManager, "RegisterAdvertisement",
            [.objectPath(BlueZObjects.advertisement), .properties([:])]
        ) { [self] result in
            switch result {
            case .success: advertisementRegistered = true; done(nil)
            case .failure(let error): done(error)
            }
        }
    }

    private func startDiscovery(_ attempt: Int, done: @escaping (MeshLinkError?) -> Void) {
        let filter: [String: DBusValue] = ["UUIDs": .strings([BlueZNames.serviceUUID]), "Transport": .string("le")]
        // A filter is an optimisation: matching happens on ServiceData either way.
        bus?.call(BlueZNames.bus, adapterPath, BlueZNames.adapter, "SetDiscoveryFilter", [.properties(filter)]) { _ in }
        bus?.call(BlueZNames.bus, adapterPath, BlueZNames.adapter, "StartDiscovery") { [self] result in
            guard attempt == generation else { return done(Self.restarted) }
            if case .failure(let error) = result, error.name != "org.bluez.Error.InProgress" {
                return done(startError(error, doing: "StartDiscovery"))
            }
            running = true
            done(nil)
            for path in objects.keys.sorted() { considerDevice(path) }
        }
    }

    // MARK: Stop

    /// Unregisters, disconnects our central connections, reports every link down.
    func stop() {
        guard let bus else { return }
        let wasRunning = running
        running = false
        if let attachRetry { loop.cancelTimer(attachRetry) }
        attachRetry = nil
        if advertisementRegistered {
            bus.call(BlueZNames.bus, adapterPath, BlueZNames.advertisingManager, "UnregisterAdvertisement", [.objectPath(BlueZObjects.advertisement)]) { _ in }
        }
        if applicationRegistered {
            bus.call(BlueZNames.bus, adapterPath, BlueZNames.gattManager, "UnregisterApplication", [.objectPath(BlueZObjects.applicationRoot)]) { _ in }
        }
        if wasRunning { bus.call(BlueZNames.bus, adapterPath, BlueZNames.adapter, "StopDiscovery") { _ in } }
        for link in centralLinks.values.sorted(by: { $0.link < $1.link }) {
            bus.call(BlueZNames.bus, link.device, BlueZNames.device, "Disconnect") { _ in }
            closeCentral(link)
        }
        for socket in notifyLink.acquiredSockets {
            loop.unwatch(socket)
            Glibc.close(socket)
        }
        notifyLink = NotifyLinkState()
        updateNotifyLink()
        // Replies still outstanding will never come: answer their waiters now.
        let waiters = advertisementInFlight + advertisementQueued
        advertisementInFlight = []
        advertisementQueued = []
        for waiter in waiters { waiter(.notRunning) }
        _ = bus.process()
        bus.close()
        self.bus = nil
        loop.connection = nil
        continuation.finish()
    }

    // MARK: Advertising

    /// Re-registers the advertisement with a new short id or invite flag (after a key rotation
    /// or when an invite opens); `done` gets the error, if any. While bluetoothd is away the new
    /// data is kept for the next one.
    func advertise(shortID: [UInt8], inviteOpen: Bool, done: @escaping (MeshLinkError?) -> Void) {
        self.inviteOpen = inviteOpen
        advertisement = MeshAdvertisement(shortID: shortID, freeSlot: notifyLink.hasFreeSlot, inviteOpen: inviteOpen)
        reregisterAdvertisement(done: done)
    }

    private func reregisterAdvertisement(done: @escaping (MeshLinkError?) -> Void) {
        guard bus != nil, running else { return done(.notRunning) }
        queueAdvertisementRound(done)
    }

    /// Registrations run one at a time (bluetoothd refuses a second registration of the same
    /// object); requests arriving meanwhile share the next round, which reads the latest data.
    private func queueAdvertisementRound(_ done: @escaping (MeshLinkError?) -> Void) {
        advertisementQueued.append(done)
        if advertisementInFlight.isEmpty { runAdvertisementUpdate() }
    }

    private func runAdvertisementUpdate() {
        guard let bus, !advertisementQueued.isEmpty else { return }
        advertisementInFlight = advertisementQueued
        advertisementQueued = []
        let finish: (DBusError?) -> Void = { [self] error in
            let waiters = advertisementInFlight
            advertisementInFlight = []
            // With bluetoothd away there is nothing to register with: the data waits, and the
            // next bluetoothd gets it when the transport registers again (`reattach`).
            let failure = bluezOwner == nil ? nil : error.map { startError($0, doing: "RegisterAdvertisement") }
            for waiter in waiters { waiter(failure) }
            runAdvertisementUpdate()
        }
        guard advertisementRegistered else { return registerAdvertisement(finish) }
        advertisementRegistered = false
        bus.call(BlueZNames.bus, adapterPath, BlueZNames.advertisingManager, "UnregisterAdvertisement", [.objectPath(BlueZObjects.advertisement)]) { [self] _ in
            registerAdvertisement(finish)
        }
    }

    /// The free-slot bit follows the notify link's centrals.
    func refreshFreeSlotFlag() {
        guard running, advertisement.hasFreeSlot != notifyLink.hasFreeSlot else { return }
        advertisement = MeshAdvertisement(shortID: advertisement.shortID, freeSlot: notifyLink.hasFreeSlot, inviteOpen: inviteOpen)
        reregisterAdvertisement { _ in }
    }

    // MARK: Sending

    func send(_ frame: [UInt8], on link: LinkID) throws {
        guard bus != nil else { throw MeshLinkError.notRunning }
        if link == BlueZTransport.notifyLink {
            guard notifyLink.isUp, frame.count <= notifyLink.mtu else { throw MeshLinkError.frameRejected }
            notify(frame)
            return
        }
        guard let central = centralLinks[link], frame.count <= central.mtu else { throw MeshLinkError.frameRejected }
        let written = frame.withUnsafeBytes { Glibc.send(central.writeSocket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        if written < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != ENOBUFS {
            // The connection is gone; bluetoothd reports it too, whichever comes first wins.
            centralLost(device: central.device)
        }
        // A full socket drops the frame, as a busy radio would; the router's sync repairs it.
    }

    /// One notification to every subscribed central: on each AcquireNotify socket, and as a
    /// `Value` change for StartNotify subscribers.
    private func notify(_ frame: [UInt8]) {
        for socket in notifyLink.acquiredSockets {
            let written = frame.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if written < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != ENOBUFS { releaseNotifySocket(socket) }
        }
        if notifyLink.notifying {
            gatt.outboundValue = frame
            bus?.emitSignal(path: BlueZObjects.outbound, interface: BlueZNames.properties, member: "PropertiesChanged", [
                .string(BlueZNames.gattCharacteristic), .properties(["Value": .bytes(frame)]), .strings([]),
            ])
        }
    }

    // MARK: org.bluez's objects

    private func cacheObjects(_ value: DBusValue?) {
        guard let managed = value?.dictValue else { return }
        for (path, interfaces) in managed {
            guard let interfaces = interfaces.dictValue else { continue }
            objects[path] = interfaces.compactMapValues { $0.dictValue }
        }
    }

    /// bluetoothd went away, or a new one took org.bluez (NameOwnerChanged: name, old, new owner).
    private func bluezOwnerChanged(_ signal: DBusMessage) {
        guard let arguments = try? signal.readAll(), arguments.count == 3, arguments[0].stringValue == BlueZNames.bus else { return }
        let previous = arguments[1].stringValue ?? ""
        let owner = arguments[2].stringValue ?? ""
        bluezOwner = owner.isEmpty ? nil : owner
        generation &+= 1
        if !previous.isEmpty { bluetoothdGone() }
        // During start its own steps see the change and fail; once running, the new bluetoothd
        // gets everything again.
        if !owner.isEmpty, running { reattach() }
    }

    /// What bluetoothd told us is void, every link is down, and what we registered with it
    /// (application, advertisement, discovery) went with it.
    private func bluetoothdGone() {
        objects = [:]
        advertisementRegistered = false
        applicationRegistered = false
        awaitingAdapter = false
        if let attachRetry { loop.cancelTimer(attachRetry) }
        attachRetry = nil
        for phase in phases.values { if let timer = phase.timer { loop.cancelTimer(timer) } }
        adapterGone()
        phases = [:]
    }

    /// Registers with a bluetoothd that came back, as at start. A restarted bluetoothd takes
    /// its name before the kernel has reported the adapters: with ours not there yet, its
    /// InterfacesAdded resumes; any other failure is tried again after `BlueZLimits.retryDelay`.
    private func reattach() {
        awaitingAdapter = false
        if let attachRetry { loop.cancelTimer(attachRetry) }
        attachRetry = nil
        let attempt = generation
        attach { [self] error in
            guard error != nil, attempt == generation, running else { return }
            if chooseAdapter() != nil {
                awaitingAdapter = true
                return
            }
            attachRetry = loop.after(BlueZLimits.retryDelay) { [self] in
                attachRetry = nil
                guard attempt == generation, running else { return }
                reattach()
            }
        }
    }

    private func handleSignal(_ signal: DBusMessage) {
        guard let sender = signal.sender, sender == bluezOwner, let path = signal.path else { return }
        guard let arguments = try? signal.readAll() else { return }
        defer { for fd in arguments.flatMap(\.descriptors) { Glibc.close(fd) } }
        switch (signal.interface, signal.member) {
        case (BlueZNames.objectManager, "InterfacesAdded"):
            guard arguments.count == 2, let object = arguments[0].stringValue, let interfaces = arguments[1].dictValue else { return }
            for (name, properties) in interfaces {
                guard let properties = properties.dictValue else { continue }
                objects[object, default: [:]][name] = properties
            }
            if interfaces[BlueZNames.device] != nil { considerDevice(object) }
            if awaitingAdapter, chooseAdapter() == nil { reattach() }
        case (BlueZNames.objectManager, "InterfacesRemoved"):
            guard arguments.count == 2, let object = arguments[0].stringValue, let names = arguments[1].stringsValue else { return }
            for name in names { objects[object]?[name] = nil }
            if objects[object]?.isEmpty == true { objects[object] = nil }
            if names.contains(BlueZNames.device) { deviceGone(object) }
            if names.contains(BlueZNames.adapter), object == adapterPath { adapterGone() }
        case (BlueZNames.properties, "PropertiesChanged"):
            guard arguments.count >= 2, let name = arguments[0].stringValue, let changed = arguments[1].dictValue else { return }
            var properties = objects[path]?[name] ?? [:]
            for (key, value) in changed { properties[key] = value.unwrapped }
            for key in arguments.count > 2 ? arguments[2].stringsValue ?? [] : [] { properties[key] = nil }
            objects[path, default: [:]][name] = properties
            propertiesChanged(path: path, interface: name, changed: changed)
        default:
            return
        }
    }

    private func propertiesChanged(path: String, interface: String, changed: [String: DBusValue]) {
        switch interface {
        case BlueZNames.device:
            if changed["Connected"]?.boolValue == false { deviceGone(path) }
            if changed["ServicesResolved"]?.boolValue == true, case .resolving(let timer) = phases[path] {
                loop.cancelTimer(timer)
                acquire(device: path)
            }
            if changed["ServiceData"] != nil { considerDevice(path) }
        case BlueZNames.gattCharacteristic:
            // Notifications by StartNotify arrive as Value changes on the remote characteristic.
            guard let value = changed["Value"]?.bytesValue, value.count <= MeshProtocol.maxFrame,
                  let central = centralLinks.values.first(where: { $0.notifySocket == nil && $0.notifyCharacteristic == path })
            else { return }
            continuation.yield(.frame(central.link, value))
        case BlueZNames.adapter:
            if path == adapterPath, changed["Powered"]?.boolValue == false { adapterGone() }
        default:
            return
        }
    }

    /// The adapter went away or off: every link is down.
    private func adapterGone() {
        for link in centralLinks.values { closeCentral(link) }
        for socket in notifyLink.acquiredSockets { releaseNotifySocket(socket) }
        notifyLink = NotifyLinkState()
        updateNotifyLink()
    }
}
