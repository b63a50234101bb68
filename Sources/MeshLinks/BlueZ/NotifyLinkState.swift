import DBus
import Mesh

/// The peripheral side (11.1): every central subscribed to our notify characteristic hears each
/// notification, so together they are one link. bluetoothd does not say who subscribed
/// (StartNotify/AcquireNotify come once, for the first subscriber), so a central becomes a peer
/// when it writes to us or acquires notifications with its `device` option, and stops being one
/// when it disconnects.
struct NotifyLinkState: Sendable, Equatable {
    static let maxCentrals = 4

    /// Device path → link MTU from its `mtu` option, nil while unknown.
    private(set) var centrals: [String: Int?] = [:]
    /// StartNotify is in force.
    var notifying = false
    /// AcquireNotify sockets (our ends) open.
    var acquiredSockets: Set<Int32> = []

    /// Up while anyone can hear a notification or has written to us.
    var isUp: Bool { notifying || !acquiredSockets.isEmpty || !centrals.isEmpty }

    /// The smallest known MTU; 20 (the ATT default minus 3) while no central has told us its own,
    /// since a longer notification would be cut short by bluetoothd.
    var mtu: Int { centrals.values.compactMap { $0 }.min() ?? MeshProtocol.minMTU }

    var hasFreeSlot: Bool { centrals.count < NotifyLinkState.maxCentrals }

    /// Adds or refreshes a central; false when it is new and all 4 slots are taken.
    mutating func admit(device: String, attMTU: Int?) -> Bool {
        if centrals[device] == nil, centrals.count >= NotifyLinkState.maxCentrals { return false }
        let known = centrals[device] ?? nil
        centrals[device] = attMTU.map { linkMTU(attMTU: $0) } ?? known
        return true
    }

    mutating func remove(device: String) { centrals[device] = nil }

    func contains(device: String) -> Bool { centrals[device] != nil }
}
