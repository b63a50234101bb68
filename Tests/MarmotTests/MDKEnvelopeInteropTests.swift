import Foundation
import MLS
import Marmot
import Nostr
import TestSupport
import XCTest

/// The sans-I/O Marmot pieces end to end against MDK 0.8.0 (mdk-python), with the MLS group
/// layer doing the MLS part: MDK admits our KeyPackage event into a group, its Welcome rumor
/// verifies and carries 0xF2EE bytes we decode and re-encode identically, its kind-445 chat
/// opens with our envelope code, and the chat and location events we seal are read by an MDK
/// member with our identity as the sender.
final class MDKEnvelopeInteropTests: XCTestCase {
    static let relays = ["wss://relay.example.com", "wss://b.example"]

    /// Stage 1: Alice (MDK) creates "Family" with our KeyPackage and Bob's (MDK), Bob joins, Alice
    /// sends a chat message. Stage 2: Bob processes the events we send.
    static let script = #"""
    import json, os, sys
    import mdk
    from nostr_sdk import EventBuilder, Keys, Kind, Tag

    inp = json.load(sys.stdin)
    key = bytes.fromhex(inp["db_key"])
    d = inp["dir"]
    out = {}
    if inp["stage"] == 1:
        alice_keys, bob_keys = Keys.generate(), Keys.generate()
        alice_pk, bob_pk = alice_keys.public_key().to_hex(), bob_keys.public_key().to_hex()
        alice = mdk.new_mdk_with_key(os.path.join(d, "alice.db"), key, None)
        bob = mdk.new_mdk_with_key(os.path.join(d, "bob.db"), key, None)
        r = bob.create_key_package_for_event(bob_pk, inp["relays"][:1])
        bob_kp = EventBuilder(Kind(30443), r.key_package).tags([Tag.parse(t) for t in r.tags]).finalize(bob_keys)
        ours = json.loads(inp["kp"])
        res = alice.create_group(alice_pk, [inp["kp"], bob_kp.as_json()], "Family", "Burrow interop",
                                 inp["relays"], [alice_pk, ours["pubkey"]])
        rumors = [json.loads(w) for w in res.welcome_rumors_json]
        def for_kp(event_id):
            return next(r for r in rumors if ["e", event_id] in r["tags"])
        welcome = bob.process_welcome(os.urandom(32).hex(), json.dumps(for_kp(bob_kp.id().to_hex())))
        bob.accept_welcome(welcome)
        out = {
            "welcome": json.dumps(for_kp(ours["id"])),
            "message": alice.create_message(res.group.mls_group_id, alice_pk, "hello from MDK", 9, None, None),
            "alice": alice_pk, "bob": bob_pk,
            "nostr_group_id": res.group.nostr_group_id, "mls_group_id": res.group.mls_group_id,
        }
    else:
        bob = mdk.new_mdk_with_key(os.path.join(d, "bob.db"), key, None)
        results = []
        for event in inp["events"]:
            r = bob.process_message(event)
            if r.is_application_message():
                rumor = json.loads(r.message.event_json)
                results.append({"sender": r.message.sender_pubkey, "kind": r.message.kind, "content": rumor["content"],
                                "rumor_id": rumor["id"], "event_id": r.message.event_id})
            else:
                results.append({"other": str(r)})
        out = {"results": results}
    print(json.dumps(out))
    """#

    func testMarmotEnvelopesAgainstMDK() throws {
        var rng = SystemRandomNumberGenerator()
        let now = Int64(Date().timeIntervalSince1970)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-marmot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let dbKey = Hex.encode(rng.randomBytes(32))
        func mdk(_ input: [String: Any]) throws -> [String: Any] {
            let raw = try VenvPython.run(Self.script, input: input.merging(["dir": directory.path, "db_key": dbKey]) { a, _ in a })
            return try XCTUnwrap(raw as? [String: Any])
        }

        // Our KeyPackage event, as MDK would publish it.
        let keys = Keys.generate(using: &rng)
        let bundle = try KeyPackageBundle.create(
            credential: .basic(identity: keys.publicKey.bytes), signer: try SignaturePrivateKey.generate(using: &rng),
            capabilities: Capabilities(extensions: KeyPackageEvent.extensions, proposals: KeyPackageEvent.proposals),
            lifetime: .standard(from: UInt64(now)), extensions: try Extensions([.lastResort]), using: &rng)
        let relays = try Self.relays.map { try RelayURL($0) }
        let kpEvent = try KeyPackageEventContent(keyPackage: bundle.keyPackage, relays: [relays[0]], using: &rng)
            .sign(keys: keys, createdAt: now, rng: &rng).event
        XCTAssertNoThrow(try KeyPackageEvent.verify(kpEvent, now: now))

        let stage1 = try mdk(["stage": 1, "kp": kpEvent.jsonString, "relays": Self.relays])
        let alice = try PublicKey(hex: try XCTUnwrap(stage1["alice"] as? String))
        let bob = try PublicKey(hex: try XCTUnwrap(stage1["bob"] as? String))

        // MDK's Welcome rumor for us: MDK's tags, naming our KeyPackage event.
        let welcome = try WelcomeRumor.verify(try Rumor(json: try XCTUnwrap(stage1["welcome"] as? String)))
        XCTAssertEqual(welcome.keyPackageEventID, kpEvent.id)
        XCTAssertEqual(welcome.inviter, alice)
        XCTAssertEqual(Set(welcome.relays), Set(relays))
        XCTAssertEqual(welcome.rumor.tags.map { $0[0] }, ["relays", "e", "client", "encoding"])
        XCTAssertNotNil(welcome.welcome.secrets(for: bundle.reference))

        // MDK's NostrGroupData, decoded and re-encoded byte for byte.
        let processed = try ProcessedWelcome(welcome: welcome.welcome, keyPackage: bundle)
        let raw = try XCTUnwrap(processed.groupContext.extensions.unknown(NostrGroupData.extensionType))
        let data = try XCTUnwrap(try NostrGroupData(extensions: processed.groupContext.extensions))
        XCTAssertEqual(data.version, 2)
        XCTAssertEqual(data.name, "Family")
        XCTAssertEqual(data.description, "Burrow interop")
        XCTAssertEqual(data.admins, [alice.bytes, keys.publicKey.bytes].sorted { $0.lexicographicallyPrecedes($1) })
        XCTAssertEqual(data.relays.map(\.string), ["wss://b.example", "wss://relay.example.com"])
        XCTAssertEqual(data.nostrGroupIDHex, stage1["nostr_group_id"] as? String)
        XCTAssertEqual(try data.extensionData(), raw)
        XCTAssertEqual(Hex.encode(processed.groupContext.groupID), stage1["mls_group_id"] as? String)

        // MDK's kind-445 chat: our envelope code opens it, the group layer decrypts it, the rumor
        // is Alice's.
        var group = try MLSGroup.join(processed)
        let secret = try group.exporter(label: GroupEvent.exporterLabel, context: GroupEvent.exporterContext,
                                        length: GroupEvent.exporterSecretLength)
        let incoming = try UnverifiedEvent(json: try XCTUnwrap(stage1["message"] as? String)).verified()
        XCTAssertEqual(incoming.tags.map { $0[0] }, ["h", "encoding"])
        XCTAssertNotEqual(incoming.pubkey, alice)  // a one-time signer
        let validated = try GroupEvent.validate(incoming, now: now)
        XCTAssertEqual(validated.nostrGroupID.bytes, data.nostrGroupID)
        let opened = try validated.decrypt(using: [Secret([UInt8](repeating: 9, count: 32)), secret])
        XCTAssertEqual(opened.secretIndex, 1)
        XCTAssertEqual(opened.message.wireFormat, .privateMessage)
        guard case .application(let application) = try group.process(opened.message, at: UInt64(now)) else {
            return XCTFail("not an application message")
        }
        let senderIdentity = try XCTUnwrap(application.sender.leafNode.credential.basicIdentity)
        let inner = try InnerEvent.verify(applicationData: application.data, senderIdentity: senderIdentity)
        XCTAssertEqual(inner.sender, alice)
        XCTAssertEqual(try inner.content(), .chat(.text("hello from MDK")))

        // What we send, read by Bob's MDK with us as the sender.
        let chat = try InnerEvent.chat("hello from Burrow", author: keys.publicKey, createdAt: now)
        let location = try InnerEvent.location(try LocationPayload(latitude: 52.52, longitude: 13.405, timestamp: now, battery: 80),
                                               author: keys.publicKey, createdAt: now)
        var outgoing: [Event] = []
        for rumor in [chat, location] {
            let message = try group.encryptApplicationMessage(rumor.jsonBytes, using: &rng)
            outgoing.append(try GroupEvent.seal(message: message, exporterSecret: secret, nostrGroupID: data.nostrGroupID,
                                                createdAt: now, rng: &rng))
        }
        let stage2 = try mdk(["stage": 2, "events": outgoing.map(\.jsonString)])
        let results = try XCTUnwrap(stage2["results"] as? [[String: Any]])
        XCTAssertEqual(results.count, 2)
        for (index, rumor) in [chat, location].enumerated() {
            XCTAssertEqual(results[index]["sender"] as? String, keys.publicKey.hex, "\(results[index])")
            XCTAssertEqual(results[index]["kind"] as? Int, rumor.kind)
            XCTAssertEqual(results[index]["content"] as? String, rumor.content)
            XCTAssertEqual(results[index]["rumor_id"] as? String, rumor.id.hex)
            XCTAssertEqual(results[index]["event_id"] as? String, outgoing[index].id.hex)
        }
        XCTAssertNotEqual(bob, keys.publicKey)
    }
}
