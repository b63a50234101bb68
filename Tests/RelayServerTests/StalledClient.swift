import Foundation

/// A WebSocket client made of a bare TCP socket: it completes the handshake, sends one text
/// frame (a REQ), and then never reads again, as a hostile or broken client would. Its receive
/// buffer is small, so the relay's writes to it stall almost at once.
final class StalledClient {
    private let fd: Int32

    init(port: Int, request: String) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket() failed") }
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw TestFailure("connect() failed")
        }
        try write(Array("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n".utf8)
                  + Array("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8))
        // Read just the 101 response's headers.
        var response: [UInt8] = []
        var byte: UInt8 = 0
        while !response.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
            guard read(fd, &byte, 1) == 1, response.count < 4096 else { throw TestFailure("no WebSocket handshake") }
            response.append(byte)
        }
        guard String(decoding: response, as: UTF8.self).hasPrefix("HTTP/1.1 101") else { throw TestFailure("upgrade refused") }
        try write(Self.maskedTextFrame(Array(request.utf8)))
    }

    deinit { close(fd) }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestFailure("send() failed") }
            sent += n
        }
    }

    /// RFC 6455 §5.2: FIN + text, masked (clients must mask), length in 7 or 7+16 bits.
    static func maskedTextFrame(_ payload: [UInt8]) -> [UInt8] {
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }
}
