import DBus
import Mesh

/// The Bluetooth LE link layer of `Docs/protocols/mesh.md` 11.1, driving bluetoothd over D-Bus (sd-bus).
///
/// Public API:
///
///     let transport = try await BlueZTransport.start(adapter: "hci0", shortID: id4, inviteOpen: false)
///     for await event in transport.events { … }          // .linkUp / .linkDown / .frame
///     try await transport.send(frame, on: link)
///     try await transport.advertise(shortID: newID4, inviteOpen: true)   // after key rotation, invite open/close
///     await transport.stop()
///
/// * Peripheral: registers a GATT application (service `3fbe0001-…`, characteristic `…0002`
///   write-without-response for frames to this node, `…0003` notify for frames from it) and an
///   advertisement (type peripheral, no name, ServiceData `0x01 ‖ short id ‖ flags`). Every
///   subscribed central is a peer of one link, `BlueZTransport.notifyLink` (LinkID 0; role
///   peripheral): a frame sent on it is one notification to all of them, its MTU is their smallest.
///   Frames a central writes arrive on its own receive link (`TransportEvent.receiveLinkUp`,
///   sending on the notify link), so each central has its own budget and reassembly slots.
/// * Central: discovers nodes by their ServiceData, connects (the smaller short id at once, the
///   larger after 10 s), ≤ 4 connections; each is its own link (LinkID ≥ 1; role central) with
///   MTU `min(ATT MTU − 3, 509)`.
/// * `close(link)` ends a connection the router found to duplicate another (Docs/protocols/mesh.md 11.1).
/// * bluetoothd restarting forgets every registration: the transport registers again with the
///   new one (its links went down with the old one and come up again as before).
///
/// `start` fails with `MeshLinkError.noAdapter` (org.bluez absent, no such adapter, no LE,
/// not powerable), `.bluetoothDenied` (AccessDenied) or `.bluez` (another refusal). All D-Bus
/// and socket I/O runs on one dedicated thread, never on Swift's cooperative pool.
public final class BlueZTransport: MeshTransport, LinkClosing {
    public let name = "bluez"
    public let events: AsyncStream<TransportEvent>
    /// The adapter in use (`hci0`), as `burrow mesh status` prints it.
    public let adapter: String

    /// The notify link: all centrals subscribed to this node. Every other link is a central
    /// connection of this node.
    public static let notifyLink = LinkID(0)

    private let loop: BusLoop
    private let engine: BlueZEngine

    /// Connects to the system bus (or `busAddress`, a D-Bus address such as
    /// `unix:path=/run/dbus/system_bus_socket`, for tests), checks the adapter (`hci1`; nil for
    /// the first one) and powers it on, registers the GATT application and the advertisement
    /// carrying `shortID` (`mesh_id[0..4]`), and starts discovery.
    public static func start(
        adapter: String? = nil, busAddress: String? = nil, shortID: [UInt8], inviteOpen: Bool = false
    ) async throws -> BlueZTransport {
        guard shortID.count == 4 else { throw MeshLinkError.invalidLink("short id of \(shortID.count) bytes, not 4") }
        if let adapter, adapter.isEmpty || !adapter.allSatisfy({ $0.isLetter || $0.isNumber }) {
            throw MeshLinkError.invalidLink("adapter name \(adapter)")
        }
        let (stream, continuation) = AsyncStream<TransportEvent>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let loop: BusLoop
        do { loop = try BusLoop() } catch { throw MeshLinkError.bluez("\(error)") }
        let engine = BlueZEngine(loop: loop, continuation: continuation, adapter: adapter, shortID: shortID, inviteOpen: inviteOpen)
        let outcome: Result<String, MeshLinkError> = await withCheckedContinuation { resume in
            let accepted = loop.execute {
                engine.start(busAddress: busAddress) { error in
                    if let error {
                        engine.stop()
                        loop.stop()
                        resume.resume(returning: .failure(error))
                    } else {
                        resume.resume(returning: .success(engine.adapterName))
                    }
                }
            }
            if !accepted { resume.resume(returning: .failure(.notRunning)) }
        }
        switch outcome {
        case .failure(let error):
            continuation.finish()
            throw error
        case .success(let adapterName):
            return BlueZTransport(adapter: adapterName, events: stream, loop: loop, engine: engine)
        }
    }

    private init(adapter: String, events: AsyncStream<TransportEvent>, loop: BusLoop, engine: BlueZEngine) {
        self.adapter = adapter
        self.events = events
        self.loop = loop
        self.engine = engine
    }

    /// A transport dropped without `stop` still unregisters and ends its thread.
    deinit {
        let engine = self.engine
        loop.execute { engine.stop() }
        loop.stop()
    }

    /// Writes one frame: a write-without-response on a central link, a notification to every
    /// subscribed central on `notifyLink`. Over the link's MTU or on an unknown link:
    /// `MeshLinkError.frameRejected`. A frame the radio has no room for is dropped, like a lost one.
    public func send(_ frame: [UInt8], on link: LinkID) async throws {
        let engine = self.engine
        do {
            try await loop.submit { try engine.send(frame, on: link) }
        } catch let error as MeshLinkError {
            throw error
        } catch {
            throw MeshLinkError.notRunning
        }
    }

    /// Re-registers the advertisement with a new short id (after a key rotation) or invite flag.
    public func advertise(shortID: [UInt8], inviteOpen: Bool) async throws {
        guard shortID.count == 4 else { throw MeshLinkError.invalidLink("short id of \(shortID.count) bytes, not 4") }
        let engine = self.engine
        let loop = self.loop
        let error: MeshLinkError? = await withCheckedContinuation { resume in
            let accepted = loop.execute { engine.advertise(shortID: shortID, inviteOpen: inviteOpen) { resume.resume(returning: $0) } }
            if !accepted { resume.resume(returning: .notRunning) }
        }
        if let error { throw error }
    }

    /// Ends a duplicate connection (`MeshAction.close`, Docs/protocols/mesh.md 11.1); see `BlueZEngine.close`.
    public func close(_ link: LinkID) async {
        let engine = self.engine
        _ = try? await loop.submit { engine.close(link) }
    }

    /// Unregisters from bluetoothd, disconnects, reports every link down and ends `events`.
    public func stop() async {
        let engine = self.engine
        let loop = self.loop
        await withCheckedContinuation { (resume: CheckedContinuation<Void, Never>) in
            let accepted = loop.execute {
                engine.stop()
                resume.resume()
            }
            if !accepted { resume.resume() }
        }
        loop.stop()
    }
}
