import DBus
import Mesh

/// Link MTU from an ATT MTU (11.1): `min(mtu − 3, 509)`, and never under the mesh minimum of 20
/// (the ATT default of 23 leaves 20).
func linkMTU(attMTU: Int) -> Int {
    min(max(attMTU - 3, MeshProtocol.minMTU), MeshProtocol.maxFrame)
}

/// Which of two nodes seeing each other connects (11.1): the one with the smaller short id at
/// once, the other after 10 s if no connection has come from the first by then. Equal short ids
/// (a 1 in 2³² collision) both connect at once; the duplicate is for the layer above to close.
func centralConnectDelay(ours: [UInt8], theirs: [UInt8]) -> Double {
    ours.lexicographicallyPrecedes(theirs) || ours == theirs ? 0 : BlueZLimits.largerIDWait
}

/// The numbers of 11.1 and a few of our own choosing.
enum BlueZLimits {
    /// At most 4 central connections.
    static let maxCentralLinks = 4
    /// The node with the larger short id waits this long before connecting itself.
    static let largerIDWait = 10.0
    /// Device1.Connect and the service discovery after it.
    static let connectTimeout: UInt64 = 30
    static let servicesResolvedTimeout = 20.0
    /// Before trying a device again after a failed or lost connection.
    static let retryDelay = 15.0
}

/// Where a remote node's central connection stands.
enum CentralPhase: Equatable {
    /// Seen, not connecting (no free slot, our limit reached, or between attempts).
    case idle
    /// The larger short id waits its turn; the timer id.
    case waitingTurn(timer: Int)
    case connecting
    /// Connected, waiting for `ServicesResolved`; the timeout timer.
    case resolving(timer: Int)
    /// AcquireWrite / AcquireNotify in flight.
    case acquiring
    case up(LinkID)
    /// After a failure; the retry timer.
    case backingOff(timer: Int)
    /// Our connection to it was closed as a duplicate (11.1): not connected to again until a
    /// link goes down (the connection kept may have been the one that went).
    case duplicate

    /// The timer this phase waits on, if any.
    var timer: Int? {
        switch self {
        case .waitingTurn(let timer), .resolving(let timer), .backingOff(let timer): return timer
        case .idle, .connecting, .acquiring, .up, .duplicate: return nil
        }
    }

    /// Counts against the 4 central connections.
    var holdsSlot: Bool {
        switch self {
        case .connecting, .resolving, .acquiring, .up: return true
        case .idle, .waitingTurn, .backingOff, .duplicate: return false
        }
    }
}

/// One central connection that is up: the sockets bluetoothd handed over.
struct CentralLink {
    let link: LinkID
    let device: String
    let mtu: Int
    /// AcquireWrite socket: one write = one write-without-response.
    let writeSocket: Int32
    /// AcquireNotify socket (one read = one notification), or nil when notifications come as
    /// PropertiesChanged on `notifyCharacteristic` after StartNotify.
    let notifySocket: Int32?
    let notifyCharacteristic: String
}
