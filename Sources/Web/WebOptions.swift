import Foundation
import Node

/// What `burrow run --web` serves, and where.
public struct WebOptions: Sendable, Equatable {
    public var host: String
    public var port: Int
    /// A tile URL template (`https://tile.openstreetmap.org/{z}/{x}/{y}.png`), or nil for none:
    /// the pins on a plain background with a scale.
    public var tiles: String?
    /// Where Debian's libjs-leaflet puts Leaflet.
    public var leafletDirectory: String

    public static let defaultHost = "127.0.0.1"
    public static let defaultPort = 8040
    public static let defaultTiles = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    public static let debianLeaflet = "/usr/share/javascript/leaflet"

    /// `ADDRESS` is `HOST:PORT`, `HOST`, `:PORT` or `PORT` (IPv6 in brackets); a non-loopback host
    /// needs `allowRemote`. `tiles` is a URL template with `{z}`, `{x}` and `{y}`, or `off`.
    public init(address: String?, allowRemote: Bool, tiles: String?, leafletDirectory: String = WebOptions.debianLeaflet) throws(WebError) {
        var host = Self.defaultHost
        var port = Self.defaultPort
        if let address, !address.isEmpty {
            var text = Substring(address)
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]") else { throw .invalidAddress(address) }
                host = String(text[text.index(after: text.startIndex)..<close])
                text = text[text.index(after: close)...]
                if !text.isEmpty {
                    guard text.hasPrefix(":"), let p = Int(text.dropFirst()) else { throw .invalidAddress(address) }
                    port = p
                }
            } else if let colon = text.lastIndex(of: ":") {
                if colon != text.startIndex { host = String(text[..<colon]) }
                guard let p = Int(text[text.index(after: colon)...]) else { throw .invalidAddress(address) }
                port = p
            } else if let p = Int(text) {
                port = p
            } else {
                host = String(text)
            }
        }
        guard (0...65535).contains(port), !host.isEmpty, host.utf8.count <= 253,
              host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":" }) else {
            throw .invalidAddress(address ?? "")
        }
        guard allowRemote || Self.isLoopback(host) else { throw .remoteNotAllowed(host) }
        self.host = host
        self.port = port
        self.leafletDirectory = leafletDirectory
        switch tiles {
        case nil: self.tiles = Self.defaultTiles
        case "off"?, ""?: self.tiles = nil
        case let template?:
            guard Self.origin(ofTemplate: template) != nil, template.contains("{z}"), template.contains("{x}"), template.contains("{y}"),
                  !template.contains(where: { $0 == "\"" || $0 == "'" || $0 == " " || $0 == ";" || $0 == "<" || $0 == ">" }) else {
                throw .invalidTiles(template)
            }
            self.tiles = template
        }
    }

    public var isLoopback: Bool { Self.isLoopback(host) }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// `scheme://host[:port]` of a tile template, for the Content-Security-Policy; nil unless http(s).
    static func origin(ofTemplate template: String) -> String? {
        let probe = template.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")
        guard let url = URL(string: probe), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
              let host = url.host, !host.isEmpty else { return nil }
        return "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
    }

    /// The tile server's origin, when there are tiles.
    public var tileOrigin: String? { tiles.flatMap(Self.origin(ofTemplate:)) }
}

/// Why the page could not be served.
public enum WebError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidAddress(String)
    /// A non-loopback address without `--web-allow-remote`.
    case remoteNotAllowed(String)
    case invalidTiles(String)
    /// Something else listens there (`web_port_in_use`).
    case portInUse(String)
    /// Leaflet is not installed where Debian's libjs-leaflet puts it.
    case leafletMissing(String)
    case listenFailed(String)

    public var description: String {
        switch self {
        case .invalidAddress(let text): return "\(text) is not an address to serve the page on (HOST:PORT, e.g. 127.0.0.1:8040)"
        case .remoteNotAllowed(let host):
            return "\(host) is reachable from other machines: the page shows where your family is, so serving it there needs --web-allow-remote"
        case .invalidTiles(let text): return "\(text) is not a tile URL template (http(s)://…/{z}/{x}/{y}.png) or off"
        case .portInUse(let address): return "something already listens on \(address): pick another port with --web HOST:PORT"
        case .leafletMissing(let path): return "Leaflet is not installed at \(path) (Debian package libjs-leaflet: make setup installs it)"
        case .listenFailed(let reason): return "the page could not be served: \(reason)"
        }
    }
}

extension WebError: BurrowFailureConvertible {
    public var failure: BurrowFailure {
        switch self {
        case .portInUse: return BurrowFailure(.web_port_in_use, description)
        case .leafletMissing, .listenFailed: return BurrowFailure(.web_unavailable, description)
        case .invalidAddress, .remoteNotAllowed, .invalidTiles: return BurrowFailure(.invalid_input, description)
        }
    }
}
