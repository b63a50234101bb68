import Foundation
import Mesh
import MeshLinks

/// Which link layer `burrow run --mesh …` (and the nearby-invite commands) bring up, parsed
/// from the command line of Docs/protocols/mesh.md section 12: `off`, `bluez[:hciN]`, `udp:PORT,N1[/MTU],…`.
public struct MeshSetup: Sendable, Equatable {
    public enum Link: Sendable, Equatable {
        case off
        /// BlueZ over D-Bus on an adapter (`hci0` when not named).
        case bluez(adapter: String?)
        /// The loopback radio (11.2): our port and one link per listed peer port.
        case udp(port: Int, peers: [UDPPeer])
    }

    public var link: Link
    /// `--mesh-impair` (udp only).
    public var impairment: UDPImpairment?
    /// `--mesh-name`: the announce's nickname (none by default: nothing on air names the user).
    public var nickname: String?
    /// `--mesh-mtu`: a cap on every link's MTU (20–509).
    public var mtu: Int?

    public init(link: Link, impairment: UDPImpairment? = nil, nickname: String? = nil, mtu: Int? = nil) {
        self.link = link
        self.impairment = impairment
        self.nickname = nickname
        self.mtu = mtu
    }

    public var isOff: Bool { link == .off }

    /// Parses the options; `invalid_input` (`NodeError.invalidInput`) for anything malformed.
    public static func parse(mesh: String, mtu: Int? = nil, impair: String? = nil, name: String? = nil) throws -> MeshSetup {
        if let mtu, !(MeshProtocol.minMTU...MeshProtocol.maxFrame).contains(mtu) {
            throw NodeError.invalidInput("--mesh-mtu must be \(MeshProtocol.minMTU)–\(MeshProtocol.maxFrame)")
        }
        if let name {
            let bytes = Array(name.utf8)
            guard (1...32).contains(bytes.count) else { throw NodeError.invalidInput("--mesh-name must be 1–32 bytes of UTF-8") }
        }
        let link: Link
        let text = mesh.trimmingCharacters(in: .whitespaces)
        if text == "off" {
            link = .off
        } else if text == "bluez" {
            link = .bluez(adapter: nil)
        } else if text.hasPrefix("bluez:") {
            let adapter = String(text.dropFirst("bluez:".count))
            guard adapter.hasPrefix("hci"), let number = Int(adapter.dropFirst(3)), number >= 0 else {
                throw NodeError.invalidInput("--mesh bluez:hciN names an adapter such as hci0")
            }
            link = .bluez(adapter: adapter)
        } else if text.hasPrefix("udp:") {
            link = try parseUDP(String(text.dropFirst("udp:".count)), defaultMTU: mtu ?? 185)
        } else {
            throw NodeError.invalidInput("--mesh takes bluez[:hciN], udp:PORT,PEER[/MTU],… or off")
        }
        var impairment: UDPImpairment?
        if let impair {
            guard case .udp = link else { throw NodeError.invalidInput("--mesh-impair applies to the udp radio only") }
            do { impairment = try UDPImpairment(spec: impair) } catch {
                throw NodeError.invalidInput("--mesh-impair takes loss=P,dup=P,delay=MIN-MAX,seed=N")
            }
        }
        return MeshSetup(link: link, impairment: impairment, nickname: name, mtu: mtu)
    }

    private static func parseUDP(_ text: String, defaultMTU: Int) throws -> Link {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = parts.first, let port = Int(first), (1...65535).contains(port) else {
            throw NodeError.invalidInput("--mesh udp:PORT,PEER[/MTU],… needs our port (1–65535) first")
        }
        var peers: [UDPPeer] = []
        for part in parts.dropFirst() {
            let pieces = part.split(separator: "/", omittingEmptySubsequences: false)
            guard (1...2).contains(pieces.count), let peerPort = Int(pieces[0]), (1...65535).contains(peerPort), peerPort != port else {
                throw NodeError.invalidInput("--mesh udp: \"\(part)\" is not a peer port (1–65535, not our own)")
            }
            var mtu = defaultMTU
            if pieces.count == 2 {
                guard let given = Int(pieces[1]), (MeshProtocol.minMTU...MeshProtocol.maxFrame).contains(given) else {
                    throw NodeError.invalidInput("--mesh udp: the MTU in \"\(part)\" must be \(MeshProtocol.minMTU)–\(MeshProtocol.maxFrame)")
                }
                mtu = given
            }
            guard !peers.contains(where: { $0.port == peerPort }) else {
                throw NodeError.invalidInput("--mesh udp: port \(peerPort) is listed twice")
            }
            peers.append(UDPPeer(port: peerPort, mtu: mtu))
        }
        guard !peers.isEmpty else { throw NodeError.invalidInput("--mesh udp:PORT,PEER… lists at least one peer port") }
        return .udp(port: port, peers: peers)
    }
}
