import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 client for servers on 127.0.0.1 (chromedriver, the node's page): one
/// request per connection (`Connection: close`), the answer read to the end. FoundationNetworking's
/// URLSession fails here with libcurl's "Failed writing header" on every request, so the tests
/// speak HTTP over a socket themselves. Blocking calls run on a dispatch queue, off the
/// cooperative pool.
public enum LoopbackHTTP {
    public struct Answer: Sendable {
        public let status: Int
        /// Lower-cased names; a repeated header keeps its last value.
        public let headers: [String: String]
        public let body: Data
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public enum Failure: Error, CustomStringConvertible {
        case connect(String)
        case malformed(String)
        public var description: String {
            switch self {
            case .connect(let text): return "HTTP connect: \(text)"
            case .malformed(let text): return "HTTP answer: \(text)"
            }
        }
    }

    private static let queue = DispatchQueue(label: "burrow.test.http", attributes: .concurrent)

    /// `url` is `http://127.0.0.1:PORT/path?query`.
    public static func request(_ method: String, _ url: String, headers: [String: String] = [:], body: Data? = nil,
                               timeoutSeconds: Int = 60) async throws -> Answer {
        guard let parsed = URLComponents(string: url), parsed.scheme == "http", let host = parsed.host, let port = parsed.port else {
            throw Failure.connect("not an http://HOST:PORT URL: \(url)")
        }
        let target = (parsed.percentEncodedPath.isEmpty ? "/" : parsed.percentEncodedPath)
            + (parsed.percentEncodedQuery.map { "?" + $0 } ?? "")
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let request = Data(head.utf8) + (body ?? Data())
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try exchange(host: host, port: port, request: request, timeoutSeconds: timeoutSeconds) })
            }
        }
    }

    private static func exchange(host: String, port: Int, request: Data, timeoutSeconds: Int) throws -> Answer {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure.connect("socket: \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else {
            throw Failure.connect("\(host) is not an IPv4 address")
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure.connect("\(host):\(port): errno \(errno)") }
        try request.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let n = send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                guard n > 0 else { throw Failure.connect("send: errno \(errno)") }
                sent += n
            }
        }
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        // Read until the answer is whole: some servers (chromedriver) keep the connection open
        // whatever `Connection: close` asked.
        while !isComplete(answer) {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 { break }
            guard n > 0 else { throw Failure.connect("recv: errno \(errno)") }
            answer.append(contentsOf: buffer[0..<n])
        }
        return try parse(answer)
    }

    /// Whether `answer` holds a whole response: headers, then Content-Length bytes or the last chunk.
    static func isComplete(_ answer: Data) -> Bool {
        guard let end = answer.range(of: Data("\r\n\r\n".utf8)) else { return false }
        let head = String(decoding: answer[..<end.lowerBound], as: UTF8.self).lowercased()
        let bodyCount = answer.count - end.upperBound
        for line in head.components(separatedBy: "\r\n") {
            if line.hasPrefix("content-length:"), let length = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) {
                return bodyCount >= length
            }
            if line.hasPrefix("transfer-encoding:"), line.contains("chunked") {
                return answer.suffix(5) == Data("0\r\n\r\n".utf8)
            }
        }
        // No length: a status without a body (1xx, 204, 304), else read to the close.
        return head.hasPrefix("http/1.1 204") || head.hasPrefix("http/1.1 304") || head.hasPrefix("http/1.1 1")
    }

    static func parse(_ answer: Data) throws -> Answer {
        guard let end = answer.range(of: Data("\r\n\r\n".utf8)) else { throw Failure.malformed("no end of headers") }
        let lines = String(decoding: answer[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure.malformed(lines.first ?? "") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Data(answer[end.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            var decoded = Data()
            var rest = body[...]
            while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
                let sizeText = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int(sizeText, radix: 16) else { throw Failure.malformed("chunk size \(sizeText)") }
                if size == 0 { break }
                let start = lineEnd.upperBound
                guard rest.distance(from: start, to: rest.endIndex) >= size else { throw Failure.malformed("short chunk") }
                let stop = rest.index(start, offsetBy: size)
                decoded.append(rest[start..<stop])
                let next = rest.index(stop, offsetBy: 2, limitedBy: rest.endIndex) ?? rest.endIndex
                rest = rest[next...]
            }
            body = decoded
        }
        return Answer(status: status, headers: headers, body: body)
    }
}
