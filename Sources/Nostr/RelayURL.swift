/// A ws/wss relay URL, parsed and printed the way rust-nostr 0.44's `RelayUrl` does: the one
/// relay address type of Burrow, for MDK's relay lists and for dialing alike.
///
/// MDK writes relay lists as `RelayUrl::to_string()` and orders them by the parsed URL, so
/// rust-nostr's rules are followed exactly: it parses with the WHATWG URL standard (the `url`
/// crate) and prints the result without the trailing slash unless the input had one. So
/// `WSS://Relay.Example.com:443` prints `wss://relay.example.com`, `wss://a.com?x` prints
/// `wss://a.com/?x`. Two URLs are equal (and ordered) by their full WHATWG serialization, as
/// `RelayUrl`'s `Eq`/`Ord` are: that is the order of an MDK relay set.
///
/// Implemented: scheme and host lowercasing, WHATWG IPv4 (hex, octal, short forms) and IPv6
/// host normalization, default-port removal, dot segments, percent-encoding of the path, query
/// and fragment sets. Deliberately stricter than WHATWG (rejected here, where `url` would
/// normalize): C0 controls and spaces anywhere, user info, and hosts that need IDNA or
/// percent-decoding (non-ASCII, `%`, `xn--` labels).
public struct RelayURL: Hashable, Comparable, Sendable, CustomStringConvertible {
    public enum Scheme: String, Sendable {
        case ws, wss
    }

    /// The form MDK writes and shows (`RelayUrl::as_str`).
    public let string: String
    /// The full WHATWG serialization: the identity and the sort key.
    public let serialization: String
    public let scheme: Scheme
    /// The normalized host; IPv6 literals keep their brackets.
    public let host: String
    /// The port to dial: the written one, else 443 for wss and 80 for ws.
    public let port: Int
    /// Path and query, at least "/": what the WebSocket upgrade requests.
    public let path: String

    public init(_ input: String) throws(NostrError) {
        var parser = RelayURLParser(input)
        let parts = try parser.parse()
        serialization = parts.serialization
        scheme = parts.scheme
        host = parts.host
        port = parts.port
        path = parts.pathAndQuery
        if input.hasSuffix("/") {
            string = serialization
        } else {
            var trimmed = Substring(serialization)
            while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
            string = String(trimmed)
        }
    }

    public var description: String { string }

    public var isTLS: Bool { scheme == .wss }

    /// Whether the host is this machine (`localhost`, 127.0.0.0/8, `[::1]`): reachable from
    /// nowhere else.
    public var isLoopback: Bool { host == "localhost" || host.hasPrefix("127.") || host == "[::1]" }

    /// Whether the host is on this machine or a private or link-local network: loopback,
    /// 10/8, 172.16/12, 192.168/16, 169.254/16, 0/8, fc00::/7, fe80::/10, `.local` and
    /// `.localhost` names. Such a relay named by someone else would make us dial into our own
    /// network on their behalf.
    public var isPrivateNetwork: Bool {
        if isLoopback || host.hasSuffix(".local") || host.hasSuffix(".localhost") { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        if octets.count == 4, host.split(separator: ".", omittingEmptySubsequences: false).count == 4 {
            switch (octets[0], octets[1]) {
            case (0, _), (10, _), (127, _), (169, 254), (192, 168): return true
            case (172, 16...31): return true
            default: return false
            }
        }
        guard host.first == "[" else { return false }
        let v6 = bareHost.lowercased()
        return v6 == "::" || v6.hasPrefix("fc") || v6.hasPrefix("fd") || v6.hasPrefix("fe8") || v6.hasPrefix("fe9")
            || v6.hasPrefix("fea") || v6.hasPrefix("feb") || v6.hasPrefix("::ffff:")
    }

    /// The host without IPv6 brackets, as a socket address or TLS server name wants it.
    public var bareHost: String {
        host.first == "[" ? String(host.dropFirst().dropLast()) : host
    }

    /// The text to dial: `string` without its fragment, which never reaches the server.
    public var dialString: String {
        guard let hash = string.firstIndex(of: "#") else { return string }
        return String(string[..<hash])
    }

    public static func == (lhs: RelayURL, rhs: RelayURL) -> Bool { lhs.serialization == rhs.serialization }
    public func hash(into hasher: inout Hasher) { hasher.combine(serialization) }
    /// Byte order of the serializations, like Rust's `String` ordering.
    public static func < (lhs: RelayURL, rhs: RelayURL) -> Bool {
        Array(lhs.serialization.utf8).lexicographicallyPrecedes(Array(rhs.serialization.utf8))
    }

    /// Sorted and deduplicated as an MDK `BTreeSet<RelayUrl>` built by inserting `urls` in order
    /// (the first of two equal URLs is the one kept).
    public static func sortedSet(_ urls: [RelayURL]) -> [RelayURL] {
        var seen = Set<RelayURL>()
        var unique: [RelayURL] = []
        for url in urls where seen.insert(url).inserted { unique.append(url) }
        return unique.sorted()
    }
}

/// What the parser found: the serialization and the parts a dialer needs.
private struct RelayURLParts {
    var serialization: String
    var scheme: RelayURL.Scheme
    var host: String
    var port: Int
    var pathAndQuery: String
}

/// The WHATWG parsing steps for special schemes ws and wss, over UTF-8 bytes.
private struct RelayURLParser {
    let input: [UInt8]
    let original: String
    var index = 0

    init(_ input: String) {
        self.original = input
        self.input = Array(input.utf8)
    }

    func fail(_ reason: String) -> NostrError { .invalidRelayURL(original, reason: reason) }

    mutating func parse() throws(NostrError) -> RelayURLParts {
        guard !input.contains(where: { $0 <= 0x20 }) else { throw fail("contains a space or control character") }
        // rust-nostr: "://" must appear only once.
        guard occurrences(of: Array("://".utf8)) <= 1 else { throw fail("multiple scheme separators") }

        let schemeText = try parseScheme()
        guard let scheme = RelayURL.Scheme(rawValue: schemeText) else { throw fail("scheme is not ws or wss") }
        // WHATWG skips any run of slashes and backslashes after a special scheme's colon.
        while index < input.count, input[index] == 0x2F || input[index] == 0x5C { index += 1 }

        let authorityEnd = input[index...].firstIndex(where: { [0x2F, 0x5C, 0x3F, 0x23].contains($0) }) ?? input.count
        let authority = Array(input[index..<authorityEnd])
        index = authorityEnd
        guard !authority.contains(0x40) else { throw fail("user info is not supported") }
        let (host, port) = try parseAuthority(authority)
        let defaultPort: UInt16 = scheme == .ws ? 80 : 443

        var out = schemeText + "://" + host
        if let port, port != defaultPort { out += ":" + String(port) }
        var pathAndQuery = try parsePath()
        if index < input.count, input[index] == 0x3F {
            index += 1
            let end = input[index...].firstIndex(of: 0x23) ?? input.count
            pathAndQuery += "?" + percentEncode(input[index..<end], set: Self.specialQuerySet)
            index = end
        }
        out += pathAndQuery
        if index < input.count, input[index] == 0x23 {
            index += 1
            out += "#" + percentEncode(input[index...], set: Self.fragmentSet)
            index = input.count
        }
        if pathAndQuery.isEmpty || pathAndQuery.first == "?" { pathAndQuery = "/" + pathAndQuery }
        return RelayURLParts(
            serialization: out, scheme: scheme, host: host, port: Int(port ?? defaultPort), pathAndQuery: pathAndQuery
        )
    }

    func occurrences(of needle: [UInt8]) -> Int {
        guard !needle.isEmpty, input.count >= needle.count else { return 0 }
        var count = 0
        for i in 0...(input.count - needle.count) where input[i..<(i + needle.count)].elementsEqual(needle) { count += 1 }
        return count
    }

    /// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":" — lowercased.
    mutating func parseScheme() throws(NostrError) -> String {
        guard let colon = input.firstIndex(of: 0x3A), colon > 0, isAlpha(input[0]) else { throw fail("no scheme") }
        var scheme: [UInt8] = []
        for c in input[0..<colon] {
            guard isAlpha(c) || isDigit(c) || c == 0x2B || c == 0x2D || c == 0x2E else { throw fail("invalid scheme") }
            scheme.append(lower(c))
        }
        index = colon + 1
        return String(decoding: scheme, as: UTF8.self)
    }

    func parseAuthority(_ authority: [UInt8]) throws(NostrError) -> (String, UInt16?) {
        var hostBytes = authority
        var port: UInt16?
        // The port separator is the last ':' outside an IPv6 literal.
        let searchStart = authority.lastIndex(of: 0x5D) ?? 0
        if let colon = authority[searchStart...].lastIndex(of: 0x3A), authority.first != 0x5B || colon > searchStart {
            hostBytes = Array(authority[..<colon])
            let digits = authority[(colon + 1)...]
            if !digits.isEmpty {
                guard digits.allSatisfy(isDigit) else { throw fail("port is not a number") }
                var value = 0
                for d in digits {
                    value = value * 10 + Int(d - 0x30)
                    guard value <= 65_535 else { throw fail("port out of range") }
                }
                port = UInt16(value)
            }
        }
        guard !hostBytes.isEmpty else { throw fail("empty host") }
        if hostBytes.first == 0x5B {
            guard hostBytes.last == 0x5D, hostBytes.count > 2 else { throw fail("unterminated IPv6 host") }
            let pieces = try parseIPv6(Array(hostBytes[1..<(hostBytes.count - 1)]))
            return ("[" + serializeIPv6(pieces) + "]", port)
        }
        guard hostBytes.allSatisfy({ $0 < 0x80 }) else { throw fail("non-ASCII host (IDNA is not supported)") }
        let forbidden: Set<UInt8> = Set("#%/:<>?@[\\]^|".utf8).union([0x7F])
        guard !hostBytes.contains(where: { forbidden.contains($0) }) else { throw fail("forbidden character in host") }
        let domain = hostBytes.map(lower)
        for label in domain.split(separator: 0x2E) where label.starts(with: Array("xn--".utf8)) {
            throw fail("punycode host label (IDNA is not supported)")
        }
        if endsInNumber(domain) {
            return (try serializeIPv4(parseIPv4(domain)), port)
        }
        return (String(decoding: domain, as: UTF8.self), port)
    }

    /// Path segments with "." and ".." (and their %2e forms) resolved, percent-encoded.
    mutating func parsePath() throws(NostrError) -> String {
        var segments: [String] = []
        // The leading separator, if any, is consumed by the path start state.
        if index < input.count, input[index] == 0x2F || input[index] == 0x5C { index += 1 }
        var buffer: [UInt8] = []
        while true {
            let atEnd = index >= input.count || input[index] == 0x3F || input[index] == 0x23
            let isSeparator = !atEnd && (input[index] == 0x2F || input[index] == 0x5C)
            if atEnd || isSeparator {
                let text = String(decoding: buffer, as: UTF8.self).lowercased()
                if ["..", ".%2e", "%2e.", "%2e%2e"].contains(text) {
                    if !segments.isEmpty { segments.removeLast() }
                    if !isSeparator { segments.append("") }
                } else if text == "." || text == "%2e" {
                    if !isSeparator { segments.append("") }
                } else {
                    segments.append(percentEncode(buffer[...], set: Self.pathSet))
                }
                buffer = []
                if atEnd { break }
                index += 1
            } else {
                buffer.append(input[index])
                index += 1
            }
        }
        return segments.map { "/" + $0 }.joined()
    }

    // MARK: Hosts

    /// WHATWG "ends in a number": the last label (ignoring one trailing empty label) is digits
    /// or parses as an IPv4 number.
    func endsInNumber(_ host: [UInt8]) -> Bool {
        var parts = host.split(separator: 0x2E, omittingEmptySubsequences: false).map(Array.init)
        if parts.last?.isEmpty == true {
            if parts.count == 1 { return false }
            parts.removeLast()
        }
        guard let last = parts.last, !last.isEmpty else { return false }
        if last.allSatisfy(isDigit) { return true }
        return ipv4Number(last) != nil
    }

    /// WHATWG IPv4 number: 0x-prefixed hex, 0-prefixed octal, else decimal; nil on failure.
    /// Values beyond 2^32 saturate to UInt64.max so the range checks still reject them.
    func ipv4Number(_ part: [UInt8]) -> UInt64? {
        guard !part.isEmpty else { return nil }
        var digits = part[...]
        var radix: UInt64 = 10
        if digits.count >= 2, digits.first == 0x30, digits.dropFirst().first.map(lower) == 0x78 {
            digits = digits.dropFirst(2)
            radix = 16
        } else if digits.count >= 2, digits.first == 0x30 {
            digits = digits.dropFirst()
            radix = 8
        }
        if digits.isEmpty { return 0 }
        var value: UInt64 = 0
        for c in digits {
            let d: UInt64
            switch c {
            case 0x30...0x39: d = UInt64(c - 0x30)
            case 0x61...0x66: d = UInt64(c - 0x61 + 10)
            case 0x41...0x46: d = UInt64(c - 0x41 + 10)
            default: return nil
            }
            guard d < radix else { return nil }
            let (mul, o1) = value.multipliedReportingOverflow(by: radix)
            let (sum, o2) = mul.addingReportingOverflow(d)
            value = (o1 || o2) ? UInt64.max : sum
        }
        return value
    }

    func parseIPv4(_ host: [UInt8]) throws(NostrError) -> UInt32 {
        var parts = host.split(separator: 0x2E, omittingEmptySubsequences: false).map(Array.init)
        if parts.last?.isEmpty == true, parts.count > 1 { parts.removeLast() }
        guard parts.count <= 4 else { throw fail("IPv4 host has more than four parts") }
        var numbers: [UInt64] = []
        for part in parts {
            guard let n = ipv4Number(part) else { throw fail("invalid IPv4 part") }
            numbers.append(n)
        }
        guard numbers.dropLast().allSatisfy({ $0 <= 255 }) else { throw fail("IPv4 part above 255") }
        let limit = UInt64(1) << (8 * UInt64(5 - numbers.count))
        guard let last = numbers.last, last < limit else { throw fail("IPv4 address out of range") }
        var address = last
        for (i, n) in numbers.dropLast().enumerated() { address += n << (8 * UInt64(3 - i)) }
        return UInt32(address)
    }

    func serializeIPv4(_ address: UInt32) -> String {
        (0..<4).map { String((address >> (8 * UInt32(3 - $0))) & 0xff) }.joined(separator: ".")
    }

    /// The WHATWG IPv6 parser (eight 16-bit pieces, one `::`, an optional dotted IPv4 tail).
    func parseIPv6(_ s: [UInt8]) throws(NostrError) -> [UInt16] {
        var pieces = [UInt16](repeating: 0, count: 8)
        var pieceIndex = 0
        var compress: Int?
        var p = 0
        func at(_ i: Int) -> UInt8? { i < s.count ? s[i] : nil }
        if at(p) == 0x3A {
            guard at(p + 1) == 0x3A else { throw fail("IPv6 host starts with a single colon") }
            p += 2
            pieceIndex += 1
            compress = pieceIndex
        }
        while let c = at(p) {
            guard pieceIndex < 8 else { throw fail("IPv6 host has too many pieces") }
            if c == 0x3A {
                guard compress == nil else { throw fail("IPv6 host has two ::") }
                p += 1
                pieceIndex += 1
                compress = pieceIndex
                continue
            }
            var value: UInt16 = 0
            var length = 0
            while length < 4, let h = at(p), let d = hexValue(h) {
                value = value &* 16 &+ UInt16(d)
                p += 1
                length += 1
            }
            if at(p) == 0x2E {
                guard length > 0 else { throw fail("IPv6 IPv4 tail is empty") }
                p -= length
                guard pieceIndex <= 6 else { throw fail("IPv6 IPv4 tail does not fit") }
                var numbersSeen = 0
                while at(p) != nil {
                    var ipv4Piece: Int?
                    if numbersSeen > 0 {
                        guard at(p) == 0x2E, numbersSeen < 4 else { throw fail("invalid IPv6 IPv4 tail") }
                        p += 1
                    }
                    guard let first = at(p), isDigit(first) else { throw fail("invalid IPv6 IPv4 tail") }
                    while let d = at(p), isDigit(d) {
                        let n = Int(d - 0x30)
                        if let current = ipv4Piece {
                            guard current != 0 else { throw fail("IPv6 IPv4 tail has a leading zero") }
                            ipv4Piece = current * 10 + n
                        } else {
                            ipv4Piece = n
                        }
                        guard let v = ipv4Piece, v <= 255 else { throw fail("IPv6 IPv4 tail part above 255") }
                        p += 1
                    }
                    pieces[pieceIndex] = pieces[pieceIndex] &* 0x100 &+ UInt16(ipv4Piece ?? 0)
                    numbersSeen += 1
                    if numbersSeen == 2 || numbersSeen == 4 { pieceIndex += 1 }
                }
                guard numbersSeen == 4 else { throw fail("IPv6 IPv4 tail has fewer than four parts") }
                break
            } else if at(p) == 0x3A {
                p += 1
                guard at(p) != nil else { throw fail("IPv6 host ends with a colon") }
            } else if at(p) != nil {
                throw fail("invalid character in IPv6 host")
            }
            pieces[pieceIndex] = value
            pieceIndex += 1
        }
        if let compress {
            var swaps = pieceIndex - compress
            pieceIndex = 7
            while pieceIndex != 0, swaps > 0 {
                pieces.swapAt(pieceIndex, compress + swaps - 1)
                pieceIndex -= 1
                swaps -= 1
            }
        } else {
            guard pieceIndex == 8 else { throw fail("IPv6 host has too few pieces") }
        }
        return pieces
    }

    /// Lowercase hex pieces, the first longest run (≥ 2) of zero pieces written as `::`.
    func serializeIPv6(_ pieces: [UInt16]) -> String {
        var bestStart = -1, bestLength = 1
        var i = 0
        while i < 8 {
            if pieces[i] == 0 {
                var j = i
                while j < 8, pieces[j] == 0 { j += 1 }
                if j - i > bestLength { bestStart = i; bestLength = j - i }
                i = j
            } else {
                i += 1
            }
        }
        var out = ""
        var ignore0 = false
        for (index, piece) in pieces.enumerated() {
            if ignore0, piece == 0 { continue }
            ignore0 = false
            if index == bestStart {
                out += index == 0 ? "::" : ":"
                ignore0 = true
                continue
            }
            out += String(piece, radix: 16)
            if index != 7 { out += ":" }
        }
        return out
    }

    // MARK: Percent-encoding (the `url` crate's sets)

    /// C0 controls, space, `"`, `#`, `<`, `>`, `'` and everything above 0x7E.
    static let specialQuerySet: Set<UInt8> = Set(" \"#<>'".utf8)
    /// C0 controls, space, `"`, `<`, `>`, `` ` `` and everything above 0x7E.
    static let fragmentSet: Set<UInt8> = Set(" \"<>`".utf8)
    /// The fragment set plus `#`, `?`, `{`, `}`.
    static let pathSet: Set<UInt8> = fragmentSet.union("#?{}".utf8)

    func percentEncode(_ bytes: ArraySlice<UInt8>, set: Set<UInt8>) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in bytes {
            if b < 0x20 || b > 0x7E || set.contains(b) {
                out += [0x25, hex[Int(b >> 4)], hex[Int(b & 0x0F)]]
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Characters

    func isAlpha(_ c: UInt8) -> Bool { (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) }
    func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    func lower(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c + 0x20 : c }
    func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        case 0x41...0x46: return c - 0x41 + 10
        default: return nil
        }
    }
}
