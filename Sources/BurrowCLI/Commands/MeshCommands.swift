import ArgumentParser
import Foundation
import Mesh
import Node

/// The mesh options of `burrow run` and the nearby-invite commands (Docs/protocols/mesh.md section 12).
struct MeshOptions: ParsableArguments {
    @Option(name: .customLong("mesh"), help: "bluez[:hciN], udp:PORT,PEER[/MTU],… or off.")
    var mesh: String?
    @Option(name: .customLong("mesh-mtu"), help: "Cap every mesh link's MTU (20–509).")
    var mtu: Int?
    @Option(name: .customLong("mesh-impair"), help: "UDP radio impairment: loss=P,dup=P,delay=MIN-MAX,seed=N.")
    var impair: String?
    @Option(name: .customLong("mesh-name"), help: "A nickname in our announces (none by default).")
    var name: String?

    /// The setup, with `fallback` when `--mesh` is not given.
    func setup(default fallback: String) throws -> MeshSetup {
        try MeshSetup.parse(mesh: mesh ?? fallback, mtu: mtu, impair: impair, name: name)
    }
}

/// Starts the mesh for a node: its Pigeon identity's DM tags are ours.
enum MeshStarter {
    /// The mesh a nearby command uses: the running node's (forwarded into `run`), else one it
    /// starts itself (`--mesh`, default bluez) and stops when done.
    static func withMesh<T>(_ options: MeshOptions, node: BurrowNode, _ body: (MeshService) async throws -> T) async throws -> T {
        if ServingNode.current != nil {
            guard let mesh = node.meshBridge.mesh else {
                throw MeshNodeError.meshOff("`burrow run` has no mesh up: restart it with --mesh bluez or --mesh udp:…")
            }
            return try await body(mesh)
        }
        let setup = try options.setup(default: "bluez")
        guard !setup.isOff else { throw MeshNodeError.meshOff("this command needs the mesh: give --mesh bluez or --mesh udp:…") }
        let mesh = try await node.startMesh(setup)
        node.meshBridge.attachMesh(mesh)
        do {
            let result = try await body(mesh)
            node.meshBridge.attachMesh(nil)
            await mesh.stop()
            return result
        } catch {
            node.meshBridge.attachMesh(nil)
            await mesh.stop()
            throw error
        }
    }
}

/// `burrow mesh status`.
struct MeshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "mesh", abstract: "The BLE mesh of `burrow run`.",
                                                    subcommands: [Status.self])

    struct Status: BurrowCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Links, peers, store and counters (via the running node).")
        @OptionGroup var globals: GlobalOptions

        func execute() async throws -> CommandOutput {
            // Outside `run` the home opens here, with no mesh: `mesh_off`.
            let status = try await NodeOpener.with(globals) { try $0.meshBridge.meshStatus() }
            return CommandOutput(fields: [("mesh", MeshOutput.status(status))], human: MeshOutput.statusText(status))
        }
    }
}

/// JSON and text forms of the mesh's views.
enum MeshOutput {
    static func status(_ s: MeshStatusView) -> JSONOutput {
        var fields: [(String, JSONOutput)] = [("transport", .string(s.transport))]
        if let place = s.place { fields.append((place.0, place.0 == "port" ? .int(Int64(place.1) ?? 0) : .string(place.1))) }
        fields.append(("mesh_id", .string(s.meshID)))
        var links: [JSONOutput] = []
        for link in s.links {
            let peers = link.peers.isEmpty ? [nil] : link.peers.map { Optional($0) }
            for peer in peers {
                links.append(.object([
                    ("link", .int(Int64(link.link))), ("role", .string(link.role)), ("mtu", .int(Int64(link.mtu))),
                    ("peer_id", peer.map { .string($0.id.hex) } ?? .null),
                    ("nickname", peer?.nickname.map { .string($0) } ?? .null),
                    ("caps", .array(peer.map { capabilityNames($0.capabilities).map(JSONOutput.string) } ?? [])),
                    ("last_heard", peer.map { .int(Int64($0.lastHeard / 1000)) } ?? .null),
                ]))
            }
        }
        fields.append(("links", .array(links)))
        fields.append(("store", .object([("packets", .int(Int64(s.storedPackets))), ("bytes", .int(Int64(s.storedBytes)))])))
        let c = s.counters
        fields.append(("counters", .object([
            ("frames_in", .int(Int64(c.framesIn))), ("frames_out", .int(Int64(c.framesOut))), ("delivered", .int(Int64(c.delivered))),
            ("forwarded", .int(Int64(c.forwarded))), ("duplicates", .int(Int64(c.duplicates))),
            ("dropped", .object(c.dropped.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) })),
        ])))
        return .object(fields)
    }

    static func capabilityNames(_ caps: Capabilities) -> [String] {
        [(Capabilities.relay, "relay"), (.store, "store"), (.bridge, "bridge"), (.dm, "dm")].filter { caps.contains($0.0) }.map(\.1)
    }

    static func statusText(_ s: MeshStatusView) -> String {
        var lines = ["mesh \(s.meshID) on \(s.transport)" + (s.place.map { " \($0.0) \($0.1)" } ?? "")]
        for link in s.links {
            let peers = link.peers.map { $0.id.hex + ($0.nickname.map { " (\($0))" } ?? "") }.joined(separator: ", ")
            lines.append("  link \(link.link) \(link.role) mtu \(link.mtu): \(peers.isEmpty ? "no peer heard yet" : peers)")
        }
        let c = s.counters
        lines.append("  store \(s.storedPackets) packets, \(s.storedBytes) bytes; frames in \(c.framesIn), out \(c.framesOut); "
                     + "delivered \(c.delivered), forwarded \(c.forwarded), duplicates \(c.duplicates)")
        return lines.joined(separator: "\n")
    }
}
