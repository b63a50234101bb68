import Foundation
import MLS
import Marmot
import Nostr
import Store

/// The events `keypackage publish` signed, by kind.
public struct KeyPackagePublication: Sendable {
    public let keyPackage: EventID
    public let legacyKeyPackage: EventID
    public let relayList: EventID
    public let inboxList: EventID
    /// The signed kind-30443 event itself (a join request carries it).
    public let keyPackageEvent: Event
}

/// An invitee's newest valid KeyPackage and where their welcomes go.
struct InviteeKeyPackage {
    let keyPackage: VerifiedKeyPackageEvent
    /// Their inbox relays (kind 10050), possibly empty.
    let inbox: [String]
}

/// Kind 10050 (NIP-17 inbox relays), read the same way as 10051.
enum InboxRelayList {
    static let kind = 10050

    static func relays(_ event: Event) -> [String] {
        var seen = Set<String>()
        return event.tags.compactMap { tag -> String? in
            guard tag.count >= 2, tag[0] == "relay", let url = try? RelayURL(tag[1]) else { return nil }
            return seen.insert(url.string).inserted ? url.string : nil
        }
    }
}

extension GroupService {
    /// Publishes a fresh last-resort KeyPackage (kind 30443 and its 443 twin) and our relay
    /// lists (10051 for KeyPackages, 10050 for welcomes), all pointing at our relays. The
    /// private keys are stored before anything is published.
    public func publishKeyPackage(timeout: Duration) async throws -> KeyPackagePublication {
        let urls = try relays()
        let staged = try stageKeyPackage()
        Failpoint.keyPackageStored.check()
        for signed in [staged.keyPackage, staged.legacyKeyPackage, staged.relayList, staged.inboxList] {
            try await gateway.publishAccepted(signed, to: urls, timeout: timeout)
        }
        return KeyPackagePublication(keyPackage: staged.keyPackage.id, legacyKeyPackage: staged.legacyKeyPackage.id,
                                     relayList: staged.relayList.id, inboxList: staged.inboxList.id, keyPackageEvent: staged.keyPackage)
    }

    /// The signed events of a fresh KeyPackage, its private keys already stored.
    struct StagedKeyPackage {
        let keyPackage: Event
        let legacyKeyPackage: Event
        let relayList: Event
        let inboxList: Event
    }

    /// Makes and stores a fresh KeyPackage without publishing it (a nearby join hands the
    /// 30443 event to the inviter over the mesh, relays or not).
    func stageKeyPackage(now: Int64 = BurrowNode.now()) throws -> StagedKeyPackage {
        let urls = try relays()
        guard !urls.isEmpty else { throw NodeError.invalidInput("no relays configured: add one with `burrow relay add URL`") }
        let relayURLs = try urls.map(BurrowNode.relayURL)
        var rng = SystemRandomNumberGenerator()
        let bundle = try MarmotProfile.keyPackage(for: publicKey, now: now, using: &rng)
        let content = try KeyPackageEventContent(keyPackage: bundle.keyPackage, relays: relayURLs, using: &rng)
        let (event, legacy) = try content.sign(keys: keys, createdAt: now, rng: &rng)
        let relayList = try KeyPackageRelayList.sign(relays: relayURLs, keys: keys, createdAt: now, rng: &rng)
        let inbox = try Event.sign(kind: InboxRelayList.kind, content: "", tags: KeyPackageRelayList.tags(relays: relayURLs),
                                   createdAt: now, keys: keys, rng: &rng)
        try store.transaction { tx in
            try tx.keyPackages.insert(StoredKeyPackage(
                ref: bundle.reference, eventID: event.id.bytes, legacyEventID: legacy.id.bytes, slot: content.slot,
                bundle: bundle.tlsSerialized, createdAt: now, notAfter: Self.notAfter(bundle)))
            try tx.settings.set(Settings.lastKeyPackage, String(now))
        }
        return StagedKeyPackage(keyPackage: event, legacyKeyPackage: legacy, relayList: relayList, inboxList: inbox)
    }

    static func notAfter(_ bundle: KeyPackageBundle) -> Int64 {
        if case .keyPackage(let lifetime) = bundle.keyPackage.leafNode.source { return Int64(clamping: lifetime.notAfter) }
        return 0
    }

    /// Finds `invitee`'s newest valid KeyPackage (30443 preferred over 443) on their 10051
    /// relays and ours, and their 10050 inbox relays.
    func fetchKeyPackage(for invitee: PublicKey, timeout: Duration) async throws -> InviteeKeyPackage {
        let ours = try relays()
        let lists = try await gateway.fetchEvents(
            Filter(authors: [invitee], kinds: [MarmotKind.keyPackageRelayList, InboxRelayList.kind]), from: ours, timeout: timeout)
        func newest(_ kind: Int) -> Event? {
            lists.filter { $0.kind == kind }.max { ($0.createdAt, $0.id.hex) < ($1.createdAt, $1.id.hex) }
        }
        var urls = ours
        if let list = newest(MarmotKind.keyPackageRelayList), let parsed = try? KeyPackageRelayList(list) {
            for url in parsed.relays.map(\.string) where !urls.contains(url) { urls.append(url) }
        }
        let inbox = newest(InboxRelayList.kind).map(InboxRelayList.relays) ?? []
        let events = try await gateway.fetchEvents(
            Filter(authors: [invitee], kinds: [MarmotKind.keyPackage, MarmotKind.legacyKeyPackage]), from: urls, timeout: timeout)
        let now = Self.now()
        let valid = events.compactMap { try? KeyPackageEvent.verify($0, now: now) }
        func best(_ kind: Int) -> VerifiedKeyPackageEvent? {
            valid.filter { $0.event.kind == kind }.max { ($0.event.createdAt, $0.event.id.hex) < ($1.event.createdAt, $1.event.id.hex) }
        }
        guard let chosen = best(MarmotKind.keyPackage) ?? best(MarmotKind.legacyKeyPackage) else {
            // Say who, by name when a profile can be had quickly, and what they must do.
            await profiles.fetchProfiles(of: [invitee], timeout: ProfileService.profileWait(timeout))
            throw NodeError.noKeyPackage("\(profiles.label(for: invitee)) has no KeyPackage on \(urls.joined(separator: ", ")): they need to run"
                                         + " `burrow keypackage publish` (or open their Marmot app) before they can be added")
        }
        return InviteeKeyPackage(keyPackage: chosen, inbox: inbox)
    }
}

/// Keys of the settings table.
enum Settings {
    static let lastKeyPackage = "last_key_package_at"
    static let giftWrapCursor = "gift_wrap_cursor"
    static let locationInterval = "location_interval"
    /// Days location messages are kept (`locations --keep`).
    static let locationRetentionDays = "location_retention_days"
    /// A random stamp written with every change of the DM engine's records (`PigeonStateCache`).
    static let pigeonStateVersion = "pigeon_state_version"
    static func needsReAdd(_ mlsGroupID: MLSGroupID) -> String { "needs_readd:" + mlsGroupID.hex }
}
