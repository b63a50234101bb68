import Foundation
import Marmot
import Nostr
import RelayClient
import Store

/// What `burrow run` needs from the node: live filters, one live event at a time, and the
/// periodic upkeep that keeps the identity reachable and the groups' keys fresh.
extension BurrowNode {
    /// A KeyPackage is replaced this long before its lifetime ends.
    static let keyPackageRenewalMargin: Int64 = 7 * 24 * 60 * 60
    /// Whistle's default self-update period.
    public static let defaultSelfUpdatePeriod: Int64 = 7 * 24 * 60 * 60

    /// Our relays and those of every group we read: the live subscription's relay set.
    public func liveRelays() throws -> [String] {
        let ours = try relays()
        var urls = ours
        let readable = try store.transaction { tx in try tx.groups.readable().map { try LoadedGroup($0) } }
        for group in readable { for url in groups.relayURLs(for: group.group, ours: ours) where !urls.contains(url) { urls.append(url) } }
        return urls
    }

    /// At most this many people's profiles are followed live (the rest at each sync).
    static let liveProfileAuthors = 500

    /// Gift wraps to us, the group events of every group we read, and new profiles of the
    /// people we show.
    public func liveFilters() throws -> [Filter] {
        let now = Self.now()
        var filters = [Filter(kinds: [Kind.giftWrap], since: now - Self.giftWrapMargin, tags: ["p": [publicKey.hex]])]
        let ids = try store.transaction { tx in
            try tx.groups.readable().map { Hex.encode($0.nostrGroupID) }
        }
        if !ids.isEmpty { filters.append(Filter(kinds: [MarmotKind.groupEvent], since: now - GroupService.groupEventMargin, tags: ["h": ids.sorted()])) }
        // New profiles of the people we show, so a name set while we run shows at once.
        let people = groups.unique(profiles.peopleWeShow()).prefix(Self.liveProfileAuthors).map { $0 }
        profiles.liveProfileAuthors = Set(people)
        filters.append(Filter(authors: people, kinds: [0], limit: people.count))
        return filters
    }

    /// Periodic upkeep: a fresh KeyPackage when ours is consumed, missing or near its end, a
    /// self-update for each active group not updated within `selfUpdatePeriod` seconds, and the
    /// write-ahead log truncated (a long `burrow run` may never sync in full).
    public func maintain(selfUpdatePeriod: Int64, timeout: Duration) async -> SyncReport {
        var report = SyncReport()
        defer { truncateLog() }
        // Members whose location went stale since the last look (once each); old locations go.
        report.updates += groups.staleLocationAlerts()
        groups.pruneLocationHistory(now: Self.now())
        let now = Self.now()
        // Feed keys owed to contacts go with the DMs below (a reply decided while a command
        // held the mailbox, a 24 h resend).
        do {
            try feeds.recordGroupSecrets()
            try feeds.queueFeedKeys()
            report.updates += feeds.takeReopened().map { .feed($0) }
        } catch {
            logger.warning("feed keys not queued", metadata: ["error": "\(Self.describe(error))"])
        }
        // Direct messages: lifetimes, queued messages, unanswered handshakes, unsent frames.
        await directMessages.advanceDMs(timeout: timeout)
        // A DM identity made after the mesh started (the first `contact card`) is addressed too.
        meshBridge.mesh?.setDMIdentityKeys(directMessages.meshDMIdentityKeys())
        do {
            let newest = try store.transaction { try $0.keyPackages.list().first }
            if newest == nil || newest?.consumedAt != nil || (newest?.notAfter ?? 0) - now < Self.keyPackageRenewalMargin {
                _ = try await groups.publishKeyPackage(timeout: timeout)
                logger.info("published a fresh KeyPackage")
            }
        } catch {
            logger.warning("could not renew our KeyPackage", metadata: ["error": "\(Self.describe(error))"])
        }
        guard selfUpdatePeriod > 0,
              let due = try? store.transaction({ tx in
                  try tx.groups.list().filter { $0.state == .active && now - $0.lastSelfUpdate >= selfUpdatePeriod }.map(\.mlsGroupID)
              }) else { return report }
        for id in due {
            do {
                let view = try await groups.selfUpdate(Hex.encode(id), timeout: timeout)
                report.updates.append(.group(view))
            } catch {
                logger.warning("scheduled self-update failed", metadata: ["error": "\(Self.describe(error))"])
            }
        }
        return report
    }
}
