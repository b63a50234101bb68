import DBus
import Location

/// Why GeoClue gives us no positions.
enum GeoClueFailure: Error, Equatable, CustomStringConvertible {
    /// GeoClue (or the bus) refused: no agent allows `burrow`, or location services are off.
    /// `share status` reports it as `location_denied`.
    case denied(String)
    /// No system bus, or GeoClue is not running or answered nonsense.
    case unavailable(String)

    var description: String {
        switch self {
        case .denied(let reason): return "GeoClue refused location access (\(reason))"
        case .unavailable(let reason): return "GeoClue is not available (\(reason))"
        }
    }
}

/// GeoClue2 on the system D-Bus (honouring `DBUS_SYSTEM_BUS_ADDRESS`): a client from the
/// Manager (`GetClient`), our `DesktopId` and `RequestedAccuracyLevel` set, `Start`, then each
/// `LocationUpdated` signal's new Location object read whole. The stream ends when GeoClue
/// leaves the bus or the connection drops; the caller reconnects with backoff.
enum GeoClueReader {
    static let bus = "org.freedesktop.GeoClue2"
    static let managerPath = "/org/freedesktop/GeoClue2/Manager"
    static let managerInterface = "org.freedesktop.GeoClue2.Manager"
    static let clientInterface = "org.freedesktop.GeoClue2.Client"
    static let locationInterface = "org.freedesktop.GeoClue2.Location"
    static let properties = "org.freedesktop.DBus.Properties"
    /// The id GeoClue's agents and its config whitelist know us by.
    static let desktopID = "burrow"
    /// GCLUE_ACCURACY_LEVEL_EXACT: a family map wants the street, not the city.
    static let exactAccuracy: UInt32 = 8

    static func positions(busAddress: String? = nil) async throws(GeoClueFailure)
        -> (fixes: AsyncStream<UnverifiedFix>, close: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream.makeStream(of: UnverifiedFix.self, bufferingPolicy: .bufferingNewest(64))
        let loop: BusLoop
        do { loop = try BusLoop() } catch { throw .unavailable("\(error)") }
        let session = GeoClueSession(loop: loop, continuation: continuation)
        let failure: GeoClueFailure? = await withCheckedContinuation { resume in
            let accepted = loop.execute { session.start(busAddress: busAddress) { resume.resume(returning: $0) } }
            if !accepted { resume.resume(returning: .unavailable("the D-Bus thread ended")) }
        }
        if let failure {
            loop.stop()
            throw failure
        }
        return (stream, {
            loop.execute { session.stop() }
            loop.stop()
        })
    }
}

/// One GeoClue client, confined to its `BusLoop` thread (sd-bus is not thread-safe).
private final class GeoClueSession: @unchecked Sendable {
    let loop: BusLoop
    let continuation: AsyncStream<UnverifiedFix>.Continuation
    var bus: DBusConnection?
    var clientPath: String?

    init(loop: BusLoop, continuation: AsyncStream<UnverifiedFix>.Continuation) {
        self.loop = loop
        self.continuation = continuation
    }

    func start(busAddress: String?, done: @escaping (GeoClueFailure?) -> Void) {
        let bus: DBusConnection
        do {
            bus = try DBusConnection(address: busAddress)
            try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(GeoClueReader.bus)'"
            ) { [self] in ownerChanged($0) }
        } catch let error as DBusError {
            return done(Self.failure(error))
        } catch {
            return done(.unavailable("\(error)"))
        }
        self.bus = bus
        loop.connection = bus
        bus.call(GeoClueReader.bus, GeoClueReader.managerPath, GeoClueReader.managerInterface, "GetClient", timeoutSeconds: 10) { [self] result in
            switch result {
            case .failure(let error): done(Self.failure(error))
            case .success(let values):
                guard let path = values.first?.stringValue, path.hasPrefix("/") else {
                    return done(.unavailable("GetClient answered no client path"))
                }
                clientPath = path
                configure(path, done: done)
            }
        }
    }

    /// Sets DesktopId and the accuracy, subscribes to LocationUpdated, then Start.
    private func configure(_ path: String, done: @escaping (GeoClueFailure?) -> Void) {
        guard let bus else { return done(.unavailable("the bus closed")) }
        let settings: [(String, DBusValue)] = [
            ("DesktopId", .string(GeoClueReader.desktopID)),
            ("RequestedAccuracyLevel", .uint32(GeoClueReader.exactAccuracy)),
        ]
        do {
            try bus.addMatch(
                "type='signal',sender='\(GeoClueReader.bus)',path='\(path)',interface='\(GeoClueReader.clientInterface)',member='LocationUpdated'"
            ) { [self] in locationUpdated($0) }
        } catch let error as DBusError {
            return done(Self.failure(error))
        } catch {
            return done(.unavailable("\(error)"))
        }
        func set(_ index: Int) {
            guard index < settings.count else {
                bus.call(GeoClueReader.bus, path, GeoClueReader.clientInterface, "Start", timeoutSeconds: 10) { result in
                    switch result {
                    case .failure(let error): done(Self.failure(error))
                    case .success:
                        self.watchConnection()
                        done(nil)
                    }
                }
                return
            }
            let (name, value) = settings[index]
            bus.call(GeoClueReader.bus, path, GeoClueReader.properties, "Set",
                     [.string(GeoClueReader.clientInterface), .string(name), .variant(value)], timeoutSeconds: 10) { result in
                if case .failure(let error) = result { return done(Self.failure(error)) }
                set(index + 1)
            }
        }
        set(0)
    }

    /// `LocationUpdated(o old, o new)`: reads the new Location's properties.
    private func locationUpdated(_ signal: DBusMessage) {
        guard let bus, let arguments = try? signal.readAll(), arguments.count == 2, let path = arguments[1].stringValue,
              path.hasPrefix("/") else { return }
        bus.call(GeoClueReader.bus, path, GeoClueReader.properties, "GetAll", [.string(GeoClueReader.locationInterface)],
                 timeoutSeconds: 10) { [self] result in
            guard case .success(let values) = result, let properties = values.first?.dictValue,
                  let location = Self.location(properties) else { return }
            continuation.yield(location.reported)
        }
    }

    /// A Location's properties; nil when a required one is missing or of another type.
    static func location(_ properties: [String: DBusValue]) -> GeoClueLocation? {
        func double(_ name: String) -> Double? {
            if case .double(let value)? = properties[name]?.unwrapped { return value }
            return nil
        }
        guard let latitude = double("Latitude"), let longitude = double("Longitude"), let accuracy = double("Accuracy"),
              case .structure(let stamp)? = properties["Timestamp"]?.unwrapped, stamp.count == 2,
              case .uint64(let seconds) = stamp[0], case .uint64(let microseconds) = stamp[1] else { return nil }
        return GeoClueLocation(latitude: latitude, longitude: longitude, accuracy: accuracy,
                               altitude: double("Altitude") ?? GeoClueLocation.unknownAltitude, speed: double("Speed") ?? -1,
                               seconds: seconds, microseconds: microseconds)
    }

    /// The bus connection can drop without a signal (the system bus restarted): checked every 5 s.
    private func watchConnection() {
        loop.after(5) { [self] in
            guard let bus else { return }
            if bus.isOpen, loop.connection != nil { return watchConnection() }
            finish()
        }
    }

    /// GeoClue left the bus: the client is gone with it.
    private func ownerChanged(_ signal: DBusMessage) {
        guard let arguments = try? signal.readAll(), arguments.count == 3, arguments[0].stringValue == GeoClueReader.bus,
              arguments[2].stringValue?.isEmpty == true else { return }
        finish()
    }

    /// Stops the client politely (GeoClue drops it anyway when we disconnect) and ends the stream.
    func stop() {
        if let bus, let clientPath {
            bus.call(GeoClueReader.bus, clientPath, GeoClueReader.clientInterface, "Stop") { _ in }
        }
        finish()
    }

    private func finish() {
        bus?.close()
        bus = nil
        loop.connection = nil
        continuation.finish()
    }

    static func failure(_ error: DBusError) -> GeoClueFailure {
        if error.isAccessDenied { return .denied(error.message) }
        if error.name == DBusError.serviceUnknown || error.name == DBusError.nameHasNoOwner {
            return .unavailable("GeoClue is not running on the system bus")
        }
        return .unavailable(error.description)
    }
}
