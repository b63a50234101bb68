import Foundation
import MLS
import Marmot
import Nostr
import Pigeon
import SeededRandom

/// Seed inputs made by the code itself (real groups, KeyPackages, events and payloads under the
/// targets' fixed keys), per target. They complement the checked-in corpora under
/// `Tests/Fixtures/fuzz/` (which also hold inputs taken from the vendored vectors): the smoke
/// tests run them and check they reach the code they are for, and `make fuzz` writes them next
/// to the corpus (`BURROW_FUZZ_SEED_DIR`) so a run always starts from seeds that match the
/// current fixtures.
public enum FuzzSeeds {
    public typealias Seed = (name: String, bytes: [UInt8])

    public static func generated(for target: String) throws -> [Seed] {
        switch target {
        case MLSMessageTarget.name: return try mlsMessage()
        case GroupDataTarget.name: return try groupData()
        case EventJSONTarget.name: return try eventJSON()
        case NIP44Target.name: return try nip44()
        case MarmotEventTarget.name: return try marmotEvent()
        case GroupEventTarget.name: return try groupEvent()
        case PigeonFrameTarget.name: return try pigeonFrame()
        case PigeonCardTarget.name: return try pigeonCard()
        case MeshPacketTarget.name: return try meshPacket()
        case MeshFragmentTarget.name: return try meshFragment()
        case BackupFileTarget.name: return try BackupFileTarget.seeds()
        case FeedEnvelopeTarget.name: return try FeedEnvelopeTarget.seeds()
        case FeedSyncFrameTarget.name: return try FeedSyncFrameTarget.seeds()
        default: return []
        }
    }

    /// Writes `generated(for:)` into `directory` as `gen-<name>` files.
    public static func write(for target: String, to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for seed in try generated(for: target) {
            try Data(seed.bytes).write(to: directory.appendingPathComponent("gen-\(seed.name)"))
        }
    }

    static func fixture() throws -> GroupEventFixture {
        guard let fixture = GroupEventFixture.shared else { throw FixtureError("the group fixture could not be made") }
        return fixture
    }

    // MARK: Per target

    static func pigeonFixture() throws -> PigeonFixture {
        guard let fixture = PigeonFixture.shared else { throw FixtureError("the Pigeon fixture could not be made") }
        return fixture
    }

    /// Frames the fixture's Bob has not seen (mode 0) and the same frames as rumor content (mode 1).
    static func pigeonFrame() throws -> [Seed] {
        let frames = try pigeonFixture().frames
        return frames.map { ($0.name, [0] + $0.bytes) }
            + frames.map { ("\($0.name)-base64", [1] + Array(Data($0.bytes).base64EncodedString().utf8)) }
    }

    static func pigeonCard() throws -> [Seed] {
        let fixture = try pigeonFixture()
        return [("alice", [0] + fixture.aliceCard.bytes), ("bob", [0] + fixture.bobCard.bytes),
                ("alice-text", [1] + Array(fixture.aliceCard.text.utf8)), ("bob-qr", [1] + Array(fixture.bobCard.qrText.utf8))]
    }

    static func mlsMessage() throws -> [Seed] {
        var seeds: [Seed] = [("welcome-to-fixture", try WelcomeFixture.welcomeMessage())]
        if let bundle = WelcomeFixture.bundle {
            seeds.append(("key-package", bundle.keyPackage.tlsSerialized))
            seeds.append(("key-package-message", MLSMessage(body: .keyPackage(bundle.keyPackage)).tlsSerialized))
        }
        let group = try fixture().receiver.mls
        let info = try group.groupInfo(includeRatchetTree: true)
        seeds.append(("group-info", info.tlsSerialized))
        seeds.append(("group-info-message", MLSMessage(body: .groupInfo(info)).tlsSerialized))
        seeds.append(("ratchet-tree", group.ratchetTree.tlsSerialized))
        for template in try fixture().messageTemplates { seeds.append(("message-\(template.name)", template.bytes)) }
        return seeds
    }

    static func groupData() throws -> [Seed] {
        let groupID = (0..<32).map { UInt8($0) }
        let admins = [[UInt8](repeating: 0xAA, count: 32), [UInt8](repeating: 0x01, count: 32)]
        let relays = try ["wss://relay.example.com", "wss://b.example:4443/path/", "ws://127.0.0.1:7777", "wss://[::1]/",
                          "wss://relay.example.org/nostr?x=1#frag"].map(RelayURL.init)
        var v2 = NostrGroupData(nostrGroupID: groupID, name: "Family", description: "the family group", admins: admins,
                                relays: relays)
        var seeds: [Seed] = [("v2", try v2.extensionData())]
        v2.imageHash = [UInt8](repeating: 0x0F, count: 32)
        v2.imageKey = Secret([UInt8](repeating: 0x1F, count: 32))
        v2.imageNonce = Secret([UInt8](repeating: 0x2F, count: 12))
        v2.imageUploadKey = Secret([UInt8](repeating: 0x3F, count: 32))
        seeds.append(("v2-image", try v2.extensionData()))
        var v1 = v2
        v1.version = 1
        v1.imageUploadKey = nil
        seeds.append(("v1", try v1.extensionData()))
        let v3 = NostrGroupData(nostrGroupID: groupID, name: "Ephemeral", admins: admins, relays: relays,
                                disappearingMessageSecs: 86_400)
        seeds.append(("v3", try v3.extensionData()))
        var v4 = v3
        v4.version = 4
        v4.unknownFields = [0x03, 0x01, 0x02, 0x03]
        seeds.append(("v4-unknown-fields", try v4.extensionData()))
        for (i, relay) in relays.enumerated() { seeds.append(("relay-\(i)", Array(relay.string.utf8))) }
        return seeds
    }

    static func eventJSON() throws -> [Seed] {
        var rng = SplitMix64(seed: 0x4A53_4F4E)
        let keys = Keys(secretKey: try SecretKey(bytes: [UInt8](repeating: 0x77, count: 32)))
        let event = try Event.sign(kind: 1, content: "hello \"nostr\"\n\u{1F600} \\ \u{7}", tags: [["e", String(repeating: "ab", count: 32)],
                                   ["p", keys.publicKey.hex, "wss://relay.example.com"], ["t", "x"]],
                                   createdAt: FuzzClock.now, keys: keys, rng: &rng)
        let filter = Filter(ids: [event.id], authors: [keys.publicKey], kinds: [1, 445], since: 1, until: FuzzClock.now, limit: 10,
                            tags: ["h": ["00ff"], "e": [event.id.hex]])
        let rumor = try Rumor(pubkey: keys.publicKey, createdAt: FuzzClock.now, kind: 9, tags: [["client", "burrow"]], content: "rumor")
        var seeds: [Seed] = [("event", event.jsonBytes), ("filter", Array(filter.jsonString.utf8)), ("rumor", rumor.jsonBytes)]
        let relayMessages: [RelayMessage] = [
            .event(subscriptionID: "sub-1", event: event.unverified), .ok(eventID: event.id, accepted: false, message: "invalid: bad"),
            .ok(eventID: nil, accepted: true, message: ""), .eose(subscriptionID: "sub-1"), .closed(subscriptionID: "s", message: "auth-required: x"),
            .notice("note"), .auth(challenge: "challenge"),
        ]
        for message in relayMessages { seeds.append(("relay-\(message.type.lowercased())-\(seeds.count)", message.jsonBytes)) }
        seeds.append(("req", ClientMessage.req(subscriptionID: "q", filters: [filter, Filter(kinds: [0])]).jsonBytes))
        seeds.append(("close", ClientMessage.close(subscriptionID: "q").jsonBytes))
        seeds.append(("json-values", Array(#"[null,true,false,-0,1.5e-7,-9223372036854775808,"\u0000\ud83d\ude00",{"a":[{}]}]"#.utf8)))
        return seeds
    }

    static func nip44() throws -> [Seed] {
        guard let key = NIP44Target.conversationKey else { throw FixtureError("no conversation key") }
        var seeds: [Seed] = []
        let nonce = [UInt8](repeating: 0x5A, count: 32)
        for (i, text) in ["a", "hello, family", String(repeating: "x", count: 33), String(repeating: "é", count: 300)].enumerated() {
            let payload = try NIP44.encrypt(plaintext: text, conversationKey: key, nonce: nonce)
            seeds.append(("payload-\(i)", [0] + Array(payload.utf8)))
            if let data = Data(base64Encoded: payload) {
                let bytes = Array(data)
                seeds.append(("decoded-\(i)", [1] + bytes))
                seeds.append(("ciphertext-\(i)", [2] + Array(bytes[1..<(bytes.count - 32)])))
            }
            let utf8 = Array(text.utf8)
            var padded = [UInt8(utf8.count >> 8), UInt8(utf8.count & 0xFF)] + utf8
            padded += [UInt8](repeating: 0, count: 2 + NIP44Target.nipPaddedLength(utf8.count) - padded.count)
            seeds.append(("padded-\(i)", [3] + nonce + padded))
        }
        return seeds
    }

    static func marmotEvent() throws -> [Seed] {
        guard let keys = MarmotEventTarget.keys else { throw FixtureError("no keys") }
        var rng = SplitMix64(seed: 0x4D41_524D)
        let now = FuzzClock.now
        let relay = try RelayURL("wss://relay.example.com")
        let bundle = try MarmotProfile.keyPackage(for: keys.publicKey, now: now, using: &rng)
        let signed = try KeyPackageEventContent(keyPackage: bundle.keyPackage, relays: [relay], using: &rng)
            .sign(keys: keys, createdAt: now, rng: &rng)
        var seeds: [Seed] = [("key-package", signed.event.jsonBytes), ("legacy-key-package", signed.legacyEvent.jsonBytes)]
        seeds.append(("relay-list", try KeyPackageRelayList.sign(relays: [relay, try RelayURL("wss://b.example/")], keys: keys,
                                                                 createdAt: now, rng: &rng).jsonBytes))
        let request = JoinRequest(groupID: String(repeating: "45", count: 32), pubkey: keys.publicKey, keyPackage: signed.event, name: "Fuzz")
        seeds.append(("join-request", try JoinRequestRumor.build(request, createdAt: now).jsonBytes))
        let fixture = try fixture()
        if let chat = fixture.messageTemplates.first {
            let sealed = try GroupEvent.seal(messageBytes: chat.bytes, exporterSecret: MarmotEventTarget.exporterSecret,
                                             nostrGroupID: [UInt8](repeating: 0x45, count: 32), createdAt: now, rng: &rng)
            seeds.append(("group-event", sealed.jsonBytes))
        }
        let welcome = try MLSMessage(tlsSerialized: try WelcomeFixture.welcomeMessage())
        let eventID = try EventID(bytes: [UInt8](repeating: 0xEE, count: 32))
        seeds.append(("welcome-rumor", try WelcomeRumor.build(welcome: welcome, keyPackageEventID: eventID, relays: [relay],
                                                              committer: keys.publicKey, createdAt: now).jsonBytes))
        let location = try LocationPayload(latitude: -33.8688, longitude: 151.2093, altitude: 58, accuracy: 5, timestamp: now,
                                           battery: 42, interval: 600, stationary: true)
        seeds.append(("location", try InnerEvent.location(location, author: keys.publicKey, createdAt: now).jsonBytes))
        seeds.append(("chat", try InnerEvent.chat("hi", author: keys.publicKey, createdAt: now).jsonBytes))
        let whistle = #"{"type":"chat","text":"hi","ts":1795000000,"v":1}"#
        seeds.append(("whistle-chat", try InnerEvent.chat(whistle, author: keys.publicKey, createdAt: now).jsonBytes))
        seeds.append(("leave", try InnerEvent.leaveRequest(author: keys.publicKey, createdAt: now).jsonBytes))
        let target = eventID.hex
        seeds.append(("reaction", try Rumor(pubkey: keys.publicKey, createdAt: now, kind: MarmotKind.reaction,
                                            tags: [["e", target]], content: "+").jsonBytes))
        seeds.append(("deletion", try Rumor(pubkey: keys.publicKey, createdAt: now, kind: MarmotKind.deletion,
                                            tags: [["e", target]], content: "").jsonBytes))
        return seeds
    }

    static func groupEvent() throws -> [Seed] {
        let fixture = try fixture()
        var seeds: [Seed] = []
        for (i, template) in fixture.contentTemplates.enumerated() {
            seeds.append(("content-\(template.name)", [3, UInt8(i)]))
            // The same content in the raw modes.
            let sender = UInt8(template.sender) | (template.wireFormat == .publicMessage ? 2 : 0)
            switch template.body {
            case .application(let data):
                seeds.append(("application-\(template.name)", [0, sender] + data))
                seeds.append(("rumor-\(template.name)", [0, sender | 4] + data))
            case .proposal(let proposal):
                seeds.append(("proposal-\(template.name)", [1, sender] + proposal.tlsSerialized))
            case .commit(let commit):
                var w = TLSWriter()
                commit.encode(to: &w)
                w.writeOpaque(template.confirmationTag ?? [])
                seeds.append(("commit-\(template.name)", [2, sender] + w.bytes))
            }
        }
        for (i, template) in fixture.messageTemplates.enumerated() {
            seeds.append(("message-\(template.name)", [4, UInt8(i)]))
        }
        if let first = fixture.messageTemplates.first {
            seeds.append(("raw-message", [4, 0xFF] + first.bytes))
            seeds.append(("edited-message", [4, 0, 0x00, 0x00, 0x10, 0x01]))
        }
        return seeds
    }
}
