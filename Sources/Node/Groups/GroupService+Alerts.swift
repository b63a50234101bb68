import Marmot
import Nostr
import Store

/// What `run` says about members' locations (issue 23): a `location` line per update, and an
/// alert once per crossing when a battery falls below 20 % or a location goes stale (older
/// than twice the member's interval), as Whistle's BatteryAlertService does.
extension GroupService {
    /// The `location` line of a location message just stored, and a battery alert when it
    /// carries a fall below the threshold.
    func locationUpdates(_ payload: LocationPayload, view: MessageView, group: LoadedGroup, tx: StoreTransaction) -> [NodeUpdate] {
        let groupID = Hex.encode(group.row.mlsGroupID)
        var updates: [NodeUpdate] = [.location(group: groupID, LocationView(member: view.sender, name: view.senderName, payload: payload,
                                                                            stale: payload.isStale(now: Self.now())))]
        if let battery = payload.battery, batteryFell(member: view.sender, group: groupID, to: battery) {
            updates.append(.alert(AlertView(kind: .batteryLow, group: groupID, groupName: group.group.data.name, member: view.sender,
                                            name: view.senderName, battery: battery, lastSeen: payload.timestamp)))
        }
        return updates
    }

    /// Alerts for the members (not us) whose latest location in a group we read went stale
    /// since the last look: once per location (`run`'s upkeep asks).
    func staleLocationAlerts() -> [NodeUpdate] {
        guard let readable = try? store.transaction({ try $0.groups.readable() }) else { return [] }
        var alerts: [NodeUpdate] = []
        for row in readable {
            let groupID = Hex.encode(row.mlsGroupID)
            guard let latest = try? locations(groupID), let name = try? LoadedGroup(row).group.data.name else { continue }
            for entry in latest where entry.stale && entry.member != publicKey.hex
                && staleNotYetReported(member: entry.member, group: groupID, at: entry.payload.timestamp) {
                alerts.append(.alert(AlertView(kind: .stale, group: groupID, groupName: name, member: entry.member, name: entry.name,
                                               battery: entry.payload.battery, lastSeen: entry.payload.timestamp)))
            }
        }
        return alerts
    }
}
