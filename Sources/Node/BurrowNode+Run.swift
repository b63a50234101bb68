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

    /// Fetches the profiles of members who just joined, so the update says "Dave joined
    /// Family" rather than a key (a short wait: the line is not held up by a silent relay).
    func nameNewMembers(in report: inout SyncReport, timeout: Duration) async {
        var unnamed: [PublicKey] = []
        for case .group(let view) in report.updates {
            for key in view.joined where view.memberNames[key] == nil { if let k = try? PublicKey(hex: key) { unnamed.append(k) } }
        }
        guard !unnamed.isEmpty else { return }
        await profiles.fetchProfiles(of: unnamed, timeout: ProfileService.profileWait(timeout))
        report.updates = report.updates.map { update in
            guard case .group(let view) = update else { return update }
            return .group(profiles.withStoredNames(view, for: view.joined))
        }
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

    /// Handles one event from the live subscription (held group events are retried with it)
    /// and commits what is owed. `resubscribe` tells the caller the filters changed.
    public func handleLive(_ event: Event, timeout: Duration) async -> (report: SyncReport, resubscribe: Bool) {
        var report = SyncReport()
        var resubscribe = false
        switch event.kind {
        case Kind.giftWrap:
            report = await handleLiveGiftWraps([event], timeout: timeout)
        case 0:
            // Only the people we show (the filter asks for no one else; a relay may send more).
            if profiles.liveProfileAuthors.contains(event.pubkey) {
                _ = try? store.transaction { try profiles.keepProfile(event, tx: $0) }
            }
        case MarmotKind.groupEvent:
            // A commit of ours whose OK was lost is settled first: the relays may hold it.
            await groups.recoverPendingCommits(timeout: timeout)
            let (changed, held) = groups.processGroupEvents(groups.liveHeld + [event], report: &report, keepHeld: true)
            groups.liveHeld = Array(held.suffix(1000))
            resubscribe = !changed.isEmpty
            await groups.carryOutEffects(timeout: timeout, report: &report)
            await gateway.flushOutbox(timeout: timeout)
            await nameNewMembers(in: &report, timeout: timeout)
        default:
            break
        }
        return (report, resubscribe)
    }

    /// Live gift wraps, one batch per mailbox job: each is processed and one receipt per
    /// contact queued; the replies (handshakes, acks, receipts, queued messages) and the batch's
    /// mailbox deletion leave at once through `liveSender`, outside the mailbox.
    func handleLiveGiftWraps(_ events: [Event], timeout: Duration) async -> SyncReport {
        var report = SyncReport()
        for event in events { handleGiftWrap(event, report: &report) }
        directMessages.queueReceipts(for: report.updates[...])
        directMessages.liveSender.kick(directMessages, deletions: report.settledWraps, timeout: timeout)
        report.settledWraps = []
        return report
    }

    /// Periodic upkeep: a fresh KeyPackage when ours is consumed, missing or near its end, a
    /// self-update for each active group not updated within `selfUpdatePeriod` seconds, and the
    /// write-ahead log truncated (a long `burrow run` may never sync in full).
    public func maintain(selfUpdatePeriod: Int64, timeout: Duration) async -> SyncReport {
        var report = SyncReport()
        defer { truncateLog() }
        let now = Self.now()
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
