import Foundation
import MLS
import Marmot
import Nostr
import RelayClient
import Store

/// The event pipeline (ARCHITECTURE "The event pipeline"): gift wraps become invites, group
/// events are decrypted and processed in created_at order, and every state change commits in
/// one transaction with the messages it unlocks and the event's dedup record.
extension BurrowNode {
    /// Gift wraps are back-dated up to two days; fetch them with a week's margin (as White Noise).
    static let giftWrapMargin: Int64 = 7 * 24 * 60 * 60

    /// Connects, fetches and processes everything pending, publishes what is owed, and reports.
    public func sync(timeout: Duration) async throws -> SyncReport {
        var report = SyncReport()
        await groups.recoverPendingCommits(timeout: timeout)
        await gateway.flushOutbox(timeout: timeout)
        try await syncGiftWraps(timeout: timeout, report: &report)
        await directMessages.advanceDMs(timeout: timeout)
        try await groups.syncGroups(try readGroupIDs(), timeout: timeout, report: &report)
        await groups.resumeRestoredGroups(timeout: timeout, report: &report)
        await groups.commitOwedProposals(groups.groupsOwingCommits(), timeout: timeout, report: &report)
        await gateway.flushOutbox(timeout: timeout)
        await syncFeeds(timeout: timeout, report: &report)
        await fetchProfileNames(timeout: timeout)
        groups.pruneIntents()
        truncateLog()
        return report
    }

    /// Checkpoints and truncates the write-ahead log, so deleted secrets (old epochs, spent
    /// snapshots) do not linger in it: after every sync, and periodically under `burrow run`.
    func truncateLog() {
        do { try store.checkpoint() } catch { logger.warning("WAL checkpoint failed", metadata: ["error": "\(error)"]) }
    }

    /// Feed keys owed to contacts, then the followed feeds through the relay carrier (when on).
    func syncFeeds(timeout: Duration, report: inout SyncReport) async {
        do {
            try feeds.recordGroupSecrets()
            if try feeds.queueFeedKeys() { await directMessages.flushDMOutbox(timeout: timeout) }
            for entry in try await feeds.fetchFromRelays(timeout: timeout) { report.updates.append(.feed(entry)) }
            report.updates += feeds.takeReopened().map { .feed($0) }
        } catch {
            logger.warning("feeds were not synced", metadata: ["error": "\(Self.describe(error))"])
        }
    }

    // MARK: Gift wraps

    func syncGiftWraps(timeout: Duration, report: inout SyncReport) async throws {
        let sources = try await fetchAndHandleGiftWraps(timeout: timeout, report: &report)
        await directMessages.deleteSettledWraps(report.settledWraps, sources: sources, timeout: timeout)
        report.settledWraps = []
    }

    /// `run`'s catch-up after its relay inbox dropped events: the gift wraps and group events
    /// since the cursors, processed as `sync` does, but what they owe the relays (replies,
    /// mailbox deletions) leaves through `liveSender`, outside the mailbox, as for live events.
    public func catchUpLive(timeout: Duration) async throws -> SyncReport {
        var report = SyncReport()
        _ = try await fetchAndHandleGiftWraps(timeout: timeout, report: &report)
        directMessages.liveSender.kick(directMessages, deletions: report.settledWraps, timeout: timeout)
        report.settledWraps = []
        try await groups.syncGroups(try readGroupIDs(), timeout: timeout, report: &report)
        return report
    }

    /// The groups whose events we read (active, or leaving until our leave is committed).
    private func readGroupIDs() throws -> [MLSGroupID] {
        try store.transaction { tx in
            try tx.groups.readable().map { MLSGroupID($0.mlsGroupID) }
        }
    }

    /// Fetches the gift wraps to us since the cursor, processes them, queues one receipt per
    /// contact, and moves the cursor; returns which relay returned each wrap.
    private func fetchAndHandleGiftWraps(timeout: Duration, report: inout SyncReport) async throws -> [EventID: [String]] {
        let started = Self.now()
        let cursor = try store.transaction { try $0.settings.get(Settings.giftWrapCursor) }.flatMap { Int64($0) }
        let filter = Filter(kinds: [Kind.giftWrap], since: cursor.map { max(0, $0 - Self.giftWrapMargin) }, tags: ["p": [publicKey.hex]])
        let fetched = try await gateway.pool(try relays()).fetch(filter, timeout: timeout, stragglerGrace: RelayGateway.stragglerGrace)
        for failure in fetched.errors { logger.warning("relay failed during fetch", metadata: ["relay": "\(failure)"]) }
        let events = fetched.events
        Failpoint.syncFetched.check()
        let before = report.updates.count
        for event in events.sorted(by: Self.createdAtOrder) {
            handleGiftWrap(event, report: &report)
            Failpoint.giftWrapProcessed.check()
        }
        directMessages.queueReceipts(for: report.updates[before...])
        try store.transaction { try $0.settings.set(Settings.giftWrapCursor, String(started)) }
        return fetched.sources
    }

    // MARK: Group events

    /// Reads the kind-0 profiles of the people we show: members of our groups and pending
    /// invites, inviters, ourselves (a group nickname still wins over a profile name).
    func fetchProfileNames(timeout: Duration) async {
        await profiles.fetchProfiles(of: profiles.peopleWeShow(), timeout: timeout)
    }

    static func hTag(_ event: Event) -> String? { event.tags.first { $0.count >= 2 && $0[0] == "h" }?[1] }

    static func createdAtOrder(_ a: Event, _ b: Event) -> Bool { (a.createdAt, a.id.hex) < (b.createdAt, b.id.hex) }

    /// A reason for `errors`, from any error (never secret: errors carry no secret material).
    static func describe(_ error: Error) -> String {
        if let rejection = error as? PipelineRejection { return rejection.reason }
        // A NodeError's description is its message (see NodeError.swift).
        if let node = error as? NodeError { return node.description }
        return PlainWords.describe(error)
    }
}

/// An event the pipeline refuses, with the reason recorded and reported.
struct PipelineRejection: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
