import Foundation

/// One MDK 0.8.0 user (mdk-python) in its own process, talking Marmot through real relays with
/// rust-nostr's client: `Tests/Interop/peers/mdk_peer.py` (its docstring is the protocol).
///
/// Every method is one request to that process; requests run one at a time on a queue of their
/// own (never on Swift's cooperative pool, so a node under test in the same process keeps
/// running while MDK works) and every wait is bounded by the request's timeout. Group arguments
/// take the MLS group id or the nostr group id (hex). The peer's Nostr secret key never crosses
/// back from the process; the SQLCipher key of its database never leaves it.
public final class MDKPeer: @unchecked Sendable {
    public let pubkey: String
    /// The underlying JSON-lines peer, for requests this wrapper does not type.
    public let peer: PythonPeer
    private let queue: DispatchQueue

    private init(peer: PythonPeer, pubkey: String, queue: DispatchQueue) {
        self.peer = peer
        self.pubkey = pubkey
        self.queue = queue
    }

    deinit { peer.terminate() }

    /// Starts a peer whose database lives in `directory` (created; must not hold a previous
    /// peer's database) and connects it to `relays`. With `freshFetches` every fetch opens
    /// connections of its own (for relays that keep cutting connections).
    public static func start(
        relays: [String], directory: URL, secretKey: String? = nil, freshFetches: Bool = false, timeout: TimeInterval = 60
    ) async throws -> MDKPeer {
        let queue = DispatchQueue(label: "MDKPeer")
        let box = try await run(on: queue) {
            Box(try PythonPeer(script: Fixtures.peerScript("mdk_peer.py"), readyTimeout: timeout))
        }
        let peer = box.value
        var fields: [String: Any] = ["dir": directory.path, "relays": relays]
        if let secretKey { fields["secret_key"] = secretKey }
        if freshFetches { fields["fresh_fetches"] = true }
        do {
            let request = Box(fields)
            let response = try await run(on: queue) { Box(try peer.request("init", request.value, timeout: timeout)) }
            return MDKPeer(peer: peer, pubkey: try response.value.string("pubkey"), queue: queue)
        } catch {
            peer.terminate()
            throw error
        }
    }

    public static func start(
        relay: RelayProcess, directory: URL, secretKey: String? = nil, timeout: TimeInterval = 60
    ) async throws -> MDKPeer {
        try await start(relays: [relay.url], directory: directory, secretKey: secretKey, timeout: timeout)
    }

    /// Stops the process (idempotent; also on deinit).
    public func terminate() { peer.terminate() }

    // MARK: - Operations

    /// Publishes one MDK KeyPackage under `kinds` (30443 and/or the legacy 443 twin) plus the
    /// user's kind-10051 and 10050 relay lists; returns event ids by kind.
    public func publishKeyPackage(kinds: [Int] = [30443], protected: Bool = false) async throws -> [Int: String] {
        let fields = try await call("publish_key_package", ["kinds": kinds, "protected": protected])
        var ids: [Int: String] = [:]
        for (kind, id) in try fields.object("event_ids").raw {
            guard let kind = Int(kind), let id = id as? String else {
                throw PythonPeer.PeerError.malformedResponse(op: fields.op, reason: "event_ids is not {kind: id}")
            }
            ids[kind] = id
        }
        return ids
    }

    public func createGroup(
        name: String, description: String = "", invitees: [String], admins: [String]? = nil,
        keyPackageKind: Int? = nil, relays: [String]? = nil
    ) async throws -> CreatedGroup {
        var request: [String: Any] = ["name": name, "description": description, "invitees": invitees]
        if let admins { request["admins"] = admins }
        if let keyPackageKind { request["kp_kind"] = keyPackageKind }
        if let relays { request["relays"] = relays }
        let fields = try await call("create_group", request)
        return CreatedGroup(
            mlsGroupID: try fields.string("mls_group_id"), nostrGroupID: try fields.string("nostr_group_id"),
            welcomeWrapIDs: try fields.strings("welcome_wrap_ids"),
            keyPackageEventIDs: try fields.strings("key_package_event_ids"))
    }

    public func addMembers(group: String, invitees: [String], keyPackageKind: Int? = nil) async throws -> AddedMembers {
        var request: [String: Any] = ["group": group, "invitees": invitees]
        if let keyPackageKind { request["kp_kind"] = keyPackageKind }
        let fields = try await call("add_members", request)
        return AddedMembers(
            commitEventID: try fields.string("commit_event_id"), welcomeWrapIDs: try fields.strings("welcome_wrap_ids"),
            keyPackageEventIDs: try fields.strings("key_package_event_ids"))
    }

    /// Each of these returns the id of the kind-445 event it published (a commit, merged after
    /// the relay's OK; for `leaveGroup` a proposal, not merged).
    public func removeMembers(group: String, members: [String]) async throws -> String {
        try await call("remove_members", ["group": group, "members": members]).string("event_id")
    }

    public func updateGroupData(
        group: String, name: String? = nil, description: String? = nil, admins: [String]? = nil, relays: [String]? = nil
    ) async throws -> String {
        var request: [String: Any] = ["group": group]
        if let name { request["name"] = name }
        if let description { request["description"] = description }
        if let admins { request["admins"] = admins }
        if let relays { request["relays"] = relays }
        return try await call("update_group_data", request).string("event_id")
    }

    public func selfUpdate(group: String) async throws -> String {
        try await call("self_update", ["group": group]).string("event_id")
    }

    public func selfDemote(group: String) async throws -> String {
        try await call("self_demote", ["group": group]).string("event_id")
    }

    public func leaveGroup(group: String) async throws -> String {
        try await call("leave_group", ["group": group]).string("event_id")
    }

    public func send(group: String, kind: Int, content: String, tags: [[String]]? = nil) async throws -> SentMessage {
        var request: [String: Any] = ["group": group, "kind": kind, "content": content]
        if let tags { request["tags"] = tags }
        let fields = try await call("send", request)
        return SentMessage(eventID: try fields.string("event_id"), rumorID: try fields.string("rumor_id"))
    }

    /// Creates a message without publishing it; `publish(event:)` sends it later (a late delivery).
    public func prepare(group: String, kind: Int, content: String) async throws -> (message: SentMessage, event: String) {
        let fields = try await call("send", ["group": group, "kind": kind, "content": content, "publish": false])
        return (SentMessage(eventID: try fields.string("event_id"), rumorID: try fields.string("rumor_id")), try fields.string("event"))
    }

    public func publish(event: String) async throws -> String {
        try await call("publish_event", ["event": event]).string("event_id")
    }

    /// Reads Welcomes (unless `welcomes` is false) and every active group's kind-445 events from
    /// the relays and hands what is new to MDK (see the script for ordering, auto-commits and
    /// retries). `since` narrows the
    /// fetch; `require` names kind-445 events known to exist: the peer fetches just those, until
    /// all came, before MDK sees any (MDK 0.8.0 never reopens an event it could not place); those
    /// that never came are in `missing`, and then nothing was processed.
    public func sync(acceptWelcomes: Bool = true, welcomes: Bool = true, since: Int? = nil, require: [String] = [],
                     timeout: TimeInterval = 90) async throws -> SyncReport {
        var request: [String: Any] = ["accept_welcomes": acceptWelcomes, "welcomes": welcomes]
        if let since { request["since"] = since }
        if !require.isEmpty { request["require"] = require }
        let fields = try await call("sync", request, timeout: timeout)
        return SyncReport(
            welcomes: try fields.objects("welcomes").map(Welcome.init),
            results: try fields.objects("results").map(ProcessResult.init),
            messages: try fields.objects("messages").map(Message.init),
            missing: (fields.raw["missing"] as? [String]) ?? [])
    }

    /// Makes a commit MDK keeps pending, neither published nor merged (`publish(event:)`, then
    /// `mergePendingCommit` or `clearPendingCommit`, decide its fate). Without `name`, a self-update.
    public func stageCommit(group: String, name: String? = nil) async throws -> StagedCommit {
        var request: [String: Any] = ["group": group, "action": name == nil ? "self_update" : "update_group_data"]
        if let name { request["name"] = name }
        let fields = try await call("stage_commit", request)
        return StagedCommit(eventID: try fields.string("event_id"), event: try fields.string("event"),
                            createdAt: try fields.int("created_at"))
    }

    /// Returns the epoch after merging.
    @discardableResult
    public func mergePendingCommit(group: String) async throws -> Int {
        try await call("merge_pending_commit", ["group": group]).int("epoch")
    }

    /// Returns the epoch after clearing.
    @discardableResult
    public func clearPendingCommit(group: String) async throws -> Int {
        try await call("clear_pending_commit", ["group": group]).int("epoch")
    }

    /// Events matching `filter` on `relays` (oldest first), through a client of their own: for
    /// tests that play the network between relays.
    public func relayFetch(relays: [String], filter: [String: Any]) async throws -> [String] {
        try await call("relay_fetch", ["relays": relays, "filter": filter], timeout: 60).strings("events")
    }

    /// Publishes events of any author to `relays` (accepted or already held), for tests that
    /// play the network between relays.
    @discardableResult
    public func relayPublish(relays: [String], events: [String]) async throws -> [String] {
        guard !events.isEmpty else { return [] }
        return try await call("relay_publish", ["relays": relays, "events": events], timeout: 120).strings("event_ids")
    }

    /// Accepts a Welcome a `sync(acceptWelcomes: false)` left pending; returns its MLS group id.
    public func acceptWelcome(wrapperID: String) async throws -> String {
        try await call("accept_welcome", ["wrapper_id": wrapperID]).string("mls_group_id")
    }

    public func group(_ group: String) async throws -> GroupState {
        try GroupState(try await call("group", ["group": group]))
    }

    public func groups() async throws -> [GroupState] {
        try await call("groups").objects("groups").map(GroupState.init)
    }

    /// Every message MDK stored for the group, oldest first (MDK's `created_at_first`).
    public func messages(group: String) async throws -> [Message] {
        try await call("messages", ["group": group]).objects("messages").map(Message.init)
    }

    public func ratchetTree(group: String) async throws -> RatchetTree {
        let fields = try await call("ratchet_tree", ["group": group])
        return RatchetTree(
            treeHash: try fields.string("tree_hash"), serializedTree: try fields.string("serialized_tree"),
            leaves: try fields.objects("leaf_nodes").map {
                RatchetTree.Leaf(
                    index: try $0.int("index"), encryptionKey: try $0.string("encryption_key"),
                    signatureKey: try $0.string("signature_key"), identity: try $0.string("credential_identity"))
            })
    }

    // MARK: - Results

    public struct CreatedGroup: Sendable, Equatable {
        public let mlsGroupID: String
        public let nostrGroupID: String
        /// Gift wraps published, in the order of the invitees.
        public let welcomeWrapIDs: [String]
        /// The KeyPackage events consumed, in the order of the invitees.
        public let keyPackageEventIDs: [String]
    }

    public struct AddedMembers: Sendable, Equatable {
        public let commitEventID: String
        public let welcomeWrapIDs: [String]
        public let keyPackageEventIDs: [String]
    }

    public struct SentMessage: Sendable, Equatable {
        /// The kind-445 event published.
        public let eventID: String
        /// The inner (rumor) event id, as MDK recorded the message it created.
        public let rumorID: String
    }

    public struct StagedCommit: Sendable, Equatable {
        public let eventID: String
        /// The signed kind-445 event, JSON.
        public let event: String
        public let createdAt: Int
    }

    public struct SyncReport: Sendable {
        public let welcomes: [Welcome]
        public let results: [ProcessResult]
        public let messages: [Message]
        /// Required events that never came through (nothing was processed then).
        public let missing: [String]

        /// Result kinds in processing order ("application", "commit", "proposal", …).
        public var kinds: [String] { results.map(\.kind) }
    }

    public struct Welcome: Sendable {
        public let wrapperID: String
        public let mlsGroupID: String?
        public let nostrGroupID: String?
        public let groupName: String?
        public let welcomer: String?
        public let accepted: Bool
        /// Why the wrapper was not taken (unwrap or MDK failure), if it was not.
        public let error: String?

        init(_ fields: Fields) throws {
            wrapperID = try fields.string("wrapper_id")
            mlsGroupID = fields.optionalString("mls_group_id")
            nostrGroupID = fields.optionalString("nostr_group_id")
            groupName = fields.optionalString("group_name")
            welcomer = fields.optionalString("welcomer")
            accepted = fields.optionalBool("accepted") ?? false
            error = fields.optionalString("error")
        }
    }

    /// What MDK made of one kind-445 event.
    public struct ProcessResult: Sendable {
        public let eventID: String
        /// "application", "commit", "proposal", "pending_proposal", "ignored_proposal",
        /// "external_join_proposal", "unprocessable", "previously_failed" or "error".
        public let kind: String
        public let createdAt: Int
        public let rumorID: String?
        public let sender: String?
        /// For a proposal: "published" (then `commitEventID`) or "superseded" by a commit read later.
        public let commitOutcome: String?
        public let commitEventID: String?
        public let reason: String?
        public let error: String?
        /// Handed to MDK a second time after the epoch moved in the same sync.
        public let isRetry: Bool

        init(_ fields: Fields) throws {
            eventID = try fields.string("event_id")
            kind = try fields.string("kind")
            createdAt = try fields.int("created_at")
            rumorID = fields.optionalString("rumor_id")
            sender = fields.optionalString("sender")
            commitOutcome = fields.optionalString("commit")
            commitEventID = fields.optionalString("commit_event_id")
            reason = fields.optionalString("reason")
            error = fields.optionalString("error")
            isRetry = fields.optionalBool("retry") ?? false
        }
    }

    public struct Message: Sendable, Equatable {
        public let rumorID: String
        public let eventID: String
        public let sender: String
        public let kind: Int
        public let content: String
        public let createdAt: Int
        public let tags: [[String]]
        /// MDK's message state ("processed", or "created" for our own).
        public let state: String

        init(_ fields: Fields) throws {
            rumorID = try fields.string("rumor_id")
            eventID = try fields.string("event_id")
            sender = try fields.string("sender")
            kind = try fields.int("kind")
            content = try fields.string("content")
            createdAt = try fields.int("created_at")
            guard let tags = fields.raw["tags"] as? [[String]] else {
                throw PythonPeer.PeerError.missingField(op: fields.op, field: "tags")
            }
            self.tags = tags
            state = try fields.string("state")
        }
    }

    public struct GroupState: Sendable, Equatable {
        public let mlsGroupID: String
        public let nostrGroupID: String
        public let name: String
        public let description: String
        public let epoch: Int
        /// Sorted hex pubkeys.
        public let admins: [String]
        /// Sorted hex pubkeys; empty unless the group is active here.
        public let members: [String]
        public let relays: [String]
        /// "active", "pending" or "inactive".
        public let state: String
        public let selfUpdateState: String
        /// "self_remove" when the group requires SelfRemove support.
        public let requiredProposals: [String]

        init(_ fields: Fields) throws {
            mlsGroupID = try fields.string("mls_group_id")
            nostrGroupID = try fields.string("nostr_group_id")
            name = try fields.string("name")
            description = try fields.string("description")
            epoch = try fields.int("epoch")
            admins = try fields.strings("admins")
            members = try fields.strings("members")
            relays = try fields.strings("relays")
            state = try fields.string("state")
            selfUpdateState = try fields.string("self_update_state")
            requiredProposals = try fields.strings("required_proposals")
        }
    }

    public struct RatchetTree: Sendable, Equatable {
        public struct Leaf: Sendable, Equatable {
            public let index: Int
            public let encryptionKey: String
            public let signatureKey: String
            /// The BasicCredential identity (the member's Nostr pubkey, hex).
            public let identity: String
        }

        public let treeHash: String
        /// TLS-serialized ratchet tree, hex.
        public let serializedTree: String
        public let leaves: [Leaf]
    }

    // MARK: - Internals

    /// A response object with accessors that throw instead of trapping.
    struct Fields: @unchecked Sendable {
        let op: String
        let raw: [String: Any]

        func string(_ key: String) throws -> String {
            guard let value = raw[key] as? String else { throw missing(key) }
            return value
        }

        func int(_ key: String) throws -> Int {
            guard let value = raw[key] as? Int else { throw missing(key) }
            return value
        }

        func strings(_ key: String) throws -> [String] {
            guard let value = raw[key] as? [String] else { throw missing(key) }
            return value
        }

        func object(_ key: String) throws -> Fields {
            guard let value = raw[key] as? [String: Any] else { throw missing(key) }
            return Fields(op: op, raw: value)
        }

        func objects(_ key: String) throws -> [Fields] {
            guard let value = raw[key] as? [[String: Any]] else { throw missing(key) }
            return value.map { Fields(op: op, raw: $0) }
        }

        func optionalString(_ key: String) -> String? { raw[key] as? String }
        func optionalBool(_ key: String) -> Bool? { raw[key] as? Bool }

        private func missing(_ key: String) -> PythonPeer.PeerError { .missingField(op: op, field: key) }
    }

    /// Carries a JSON-shaped value (`[String: Any]`, a peer) to the peer's queue and back:
    /// sound because the sender gives it up — nothing else touches it while the queue has it.
    private struct Box<T>: @unchecked Sendable {
        let value: T
        init(_ value: T) { self.value = value }
    }

    private func call(_ op: String, _ request: [String: Any] = [:], timeout: TimeInterval = 30) async throws -> Fields {
        let peer = self.peer
        let request = Box(request)
        let response = try await Self.run(on: queue) { Box(try peer.request(op, request.value, timeout: timeout)) }
        return Fields(op: op, raw: response.value.object)
    }

    private static func run<T: Sendable>(on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
