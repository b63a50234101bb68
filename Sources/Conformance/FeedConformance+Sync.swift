import Crypto
import Feed
import MLS
import Mesh
import Nostr

/// sync.json and the sync rejects: frames, presence, links, the relay carrier, received chunks.
extension FeedConformance {
    // MARK: sync.json (frames, presence, links)

    static func frameType(_ entry: JSONValue) throws -> SyncFrameType {
        guard let raw = entry["type"]?.integerValue, let byte = UInt8(exactly: raw), let type = SyncFrameType(rawValue: byte) else {
            throw CaseFailure("type")
        }
        return type
    }

    static func u32(_ entry: JSONValue, _ key: String) throws -> UInt32 {
        guard let value = entry[key]?.integerValue, let number = UInt32(exactly: value) else { throw CaseFailure(key) }
        return number
    }

    static func frame(_ entry: JSONValue) throws {
        let type = try frameType(entry)
        let frames: [SyncFrame] = try (entry["frames"]?.arrayValue ?? []).map { f in
            switch type {
            case .request: return .request(feedID: try hex(f, "feed_id"), haveSequence: try u32(f, "have_seq"))
            case .range: return .range(feedID: try hex(f, "feed_id"), from: try u32(f, "from"), to: try u32(f, "to"))
            case .offer: return .offer(feedID: try hex(f, "feed_id"), haveSequence: try u32(f, "have_seq"),
                                       messageCount: try u32(f, "message_count"))
            case .chunk: return .chunk(messageID: try hex(f, "message_id"), envelope: Array(try string(f, "envelope").utf8))
            case .ack:
                guard let status = f["status"]?.integerValue else { throw CaseFailure("status") }
                return .ack(messageID: try hex(f, "message_id"), refused: status == 1)
            }
        }
        let payload = try SyncFrame.encode(frames, as: type)
        try check("payload", payload, try hex(entry["expect"], "payload"))
        try check("decoded", try SyncFrame.decode(payload, as: type), frames)
    }

    static func frameReject(_ entry: JSONValue) throws {
        do {
            _ = try SyncFrame.decode(try hex(entry, "frames"), as: try frameType(entry))
            throw CaseFailure("accepted; expected \(expectedError(entry) ?? "?")")
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    static func presence(_ entry: JSONValue) throws {
        let expect = entry["expect"]
        guard let createdAt = entry["created_at"]?.integerValue, createdAt >= 0, let caps = entry["caps"]?.integerValue,
              let capsValue = UInt16(exactly: caps) else { throw CaseFailure("created_at or caps") }
        let presenceKey = FeedKeys.presenceKey(identitySeed: try hex(entry, "identity_seed"), createdAt: UInt64(createdAt))
        try check("presence key", presenceKey, try hex(expect, "presence_key"))
        let tag = FeedPresence.tag(presenceKey: presenceKey, meshKey: try hex(entry, "mesh_key"))
        try check("tag", tag, try hex(expect, "tag"))
        let neighbours = try (entry["neighbours"]?.arrayValue ?? []).map { item -> MeshID in
            guard let text = item.stringValue, let bytes = try? Hex.decode(text), let id = MeshID(bytes: bytes) else { throw CaseFailure("neighbour") }
            return id
        }
        let announce = Announce(capabilities: Capabilities(rawValue: capsValue), neighbours: neighbours, presenceTag: tag)
        let payload = try announce.encoded()
        try check("announce payload", payload, try hex(expect, "announce_payload"))
        try check("announce decoded", try Announce.decode(payload), announce)
    }

    static func linkPair(pairKey: [UInt8], own: [UInt8], peer: [UInt8], lastReceived: UInt64? = nil) -> FeedLink {
        FeedLink(pairKey: pairKey, ownMeshKey: own, peerMeshKey: peer, ownMeshID: MeshID(meshKey: own).bytes,
                 peerMeshID: MeshID(meshKey: peer).bytes, lastReceived: lastReceived)
    }

    static func link(_ entry: JSONValue) throws {
        let expect = entry["expect"]
        let pairKey = try hex(entry, "pair_key")
        let a = try hex(entry, "mesh_key_a"), b = try hex(entry, "mesh_key_b")
        try check("mesh id a", MeshID(meshKey: a).bytes, try hex(expect, "mesh_id_a"))
        try check("mesh id b", MeshID(meshKey: b).bytes, try hex(expect, "mesh_id_b"))
        var links = ["a": linkPair(pairKey: pairKey, own: a, peer: b), "b": linkPair(pairKey: pairKey, own: b, peer: a)]
        try check("key a", links["a"]?.sendKey, try hex(expect, "key_a"))
        try check("key b", links["b"]?.sendKey, try hex(expect, "key_b"))
        for (index, item) in (expect?["sealed"]?.arrayValue ?? []).enumerated() {
            let sender = try string(item, "sender"), receiver = sender == "a" ? "b" : "a"
            guard var from = links[sender], var to = links[receiver], let counter = item["counter"]?.integerValue else { throw CaseFailure("sealed") }
            guard let raw = item["type"]?.integerValue, let byte = UInt8(exactly: raw), let type = SyncFrameType(rawValue: byte) else {
                throw CaseFailure("type")
            }
            try check("sealed \(index) counter", Int64(from.nextCounter), counter)
            let frames = try hex(item, "frames")
            let payload = try from.seal(frames, type: type)
            try check("sealed \(index) payload", payload, try hex(item, "payload"))
            try check("sealed \(index) opened", try to.open(payload, type: type), frames)
            links[sender] = from
            links[receiver] = to
        }
    }

    static func linkReject(_ entry: JSONValue) throws {
        guard let last = entry["last_counter"]?.integerValue, last >= 0 else { throw CaseFailure("last_counter") }
        var receiver = linkPair(pairKey: try hex(entry, "pair_key"), own: try hex(entry, "mesh_key_receiver"),
                                peer: try hex(entry, "mesh_key_sender"), lastReceived: UInt64(last))
        do {
            _ = try receiver.open(try hex(entry, "payload"), type: try frameType(entry))
            throw CaseFailure("accepted; expected \(expectedError(entry) ?? "?")")
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    // MARK: The relay carrier and chunks

    /// `follows` (identity keys, hex) as feed id → identity key.
    static func follows(_ entry: JSONValue) throws -> [[UInt8]: [UInt8]] {
        var out: [[UInt8]: [UInt8]] = [:]
        for item in entry["follows"]?.arrayValue ?? [] {
            guard let text = item.stringValue, let key = try? Hex.decode(text, length: 32) else { throw CaseFailure("follows") }
            out[FeedKeys.feedID(identityKey: key)] = key
        }
        return out
    }

    static func nostrEvent(_ entry: JSONValue) throws {
        let follows = try follows(entry)
        let keys = Keys(secretKey: try SecretKey(bytes: hex(entry, "nostr_secret")))
        guard let createdAt = entry["created_at"]?.integerValue, let identityKey = follows.values.first else { throw CaseFailure("created_at") }
        let envelope = try UnverifiedEnvelope.decode(try bytes(entry, "envelope")).verify(identityKey: identityKey)
        let event = try FeedRelayCarrier.event(for: envelope, keys: keys, createdAt: createdAt, auxRand: try hex(entry, "aux"))
        guard let expected = entry["expect"]?["event"] else { throw CaseFailure("expect.event") }
        try check("id", event.id.hex, try string(expected, "id"))
        try check("pubkey", event.pubkey.hex, try string(expected, "pubkey"))
        try check("kind", Int64(event.kind), expected["kind"]?.integerValue ?? -1)
        try check("tags", event.tags, (expected["tags"]?.arrayValue ?? []).map { ($0.arrayValue ?? []).compactMap(\.stringValue) })
        try check("content", event.content, try string(expected, "content"))
        try check("sig", Hex.encode(event.sig), try string(expected, "sig"))
        let opened = try FeedRelayCarrier.open(event.jsonBytes, follows: follows)
        try check("message id", Base64URL.encode(opened.messageID), try string(entry["expect"], "message_id"))
    }

    static func eventReject(_ entry: JSONValue) throws {
        guard let event = entry["event"] else { throw CaseFailure("event") }
        do {
            _ = try FeedRelayCarrier.open(event.jsonBytes, follows: try follows(entry))
            throw CaseFailure("accepted; expected \(expectedError(entry) ?? "?")")
        } catch let error as FeedError {
            try check("error", error.rawValue, expectedError(entry) ?? "none")
        }
    }

    static func chunkReject(_ entry: JSONValue) throws {
        let follows = try follows(entry)
        let requested = Set(try (entry["requested"]?.arrayValue ?? []).map { try b64($0.stringValue ?? "") })
        var chains = follows.mapValues { FeedChain(identityKey: $0) }
        let messageID = try hex(entry, "message_id")
        let received = FeedChunkReceiver.receive(messageID: messageID, envelope: try bytes(entry, "envelope"), requested: requested,
                                                 chains: &chains)
        let expect = entry["expect"]
        switch received.result {
        case .success(let status): try check("status", status.rawValue, expect?["status"]?.stringValue ?? "error")
        case .failure(let error): try check("error", error.rawValue, expect?["error"]?.stringValue ?? "none")
        }
        try check("ack", SyncFrame.ack(messageID: messageID, refused: received.refused).bytes, try hex(expect, "ack"))
    }
}
