#!/usr/bin/env python3
"""A deliberately misbehaving WebSocket "relay" for Burrow's bad-input tests (stdlib only).

It completes a correct RFC 6455 handshake, then plays a script at every connection.
Prints `READY ws://127.0.0.1:PORT` when listening and `RECV <text>` for each text message a
client sends. Exits when stdin reaches end-of-file, on SIGTERM/SIGINT, or after --lifetime.

    hostile_ws.py --script FILE [--port N] [--lifetime SECONDS] [--tls-dir DIR]

With --tls-dir it speaks wss: it makes a throwaway self-signed certificate for `localhost`
in DIR (with the openssl command), prints `CERT <path>` before the ready line, and the
ready line names wss://localhost:PORT.

The script is a JSON list of steps, run in order on every connection:
  {"await": "REQ"}          wait for the client's next message whose type is REQ (or any
                            type); remembers its subscription id as %SUB% (an EVENT's event
                            id as %ID%)
  {"text": "..."}           send one text frame; %SUB% and %ID% are replaced
  {"fragments": ["a","b"]}  send one text message split over continuation frames
  {"text_hex": "c328"}      send a text frame with these raw bytes (e.g. invalid UTF-8)
  {"binary_hex": "00ff"}    send a binary frame
  {"oversized": N}          send a text frame header announcing N payload bytes, then
                            stream up to N bytes of JSON-looking filler while the peer reads
  {"sleep": S}              pause S seconds
  {"close": CODE}           send a close frame and end the connection
  {"drop": true}            end the TCP connection without a close frame
A step with "on_connections": [1, 3] runs only on those connections (counted from 1), so a
script can drop the first connection at some point and behave on the next.
After the last step the server keeps reading (answering pings) until the client leaves.
"""
import argparse
import base64
import hashlib
import json
import os
import signal
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_CLIENT_FRAME = 8 << 20


class Closed(Exception):
    pass


def recv_exact(sock, n):
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise Closed()
        out += chunk
    return bytes(out)


def handshake(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk or len(data) > 16384:
            raise Closed()
        data += chunk
    headers = {}
    for line in data.split(b"\r\n")[1:]:
        if b":" in line:
            k, v = line.split(b":", 1)
            headers[k.strip().lower()] = v.strip()
    key = headers.get(b"sec-websocket-key")
    if not key:
        raise Closed()
    accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
    sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")


def frame_header(opcode, length, fin=True):
    first = (0x80 if fin else 0) | opcode
    if length < 126:
        return struct.pack("!BB", first, length)
    if length < 1 << 16:
        return struct.pack("!BBH", first, 126, length)
    return struct.pack("!BBQ", first, 127, length)


def send_frame(sock, opcode, payload, fin=True):
    sock.sendall(frame_header(opcode, len(payload), fin) + payload)


def read_frame(sock):
    b0, b1 = recv_exact(sock, 2)
    opcode, masked, length = b0 & 0x0F, b1 & 0x80, b1 & 0x7F
    if length == 126:
        (length,) = struct.unpack("!H", recv_exact(sock, 2))
    elif length == 127:
        (length,) = struct.unpack("!Q", recv_exact(sock, 8))
    if length > MAX_CLIENT_FRAME:
        raise Closed()
    mask = recv_exact(sock, 4) if masked else b"\0\0\0\0"
    payload = bytearray(recv_exact(sock, length))
    for i in range(length):
        payload[i] ^= mask[i % 4]
    return opcode, bool(b0 & 0x80), bytes(payload)


def read_message(sock):
    """Next text/binary message; answers pings, raises Closed on a close frame."""
    parts = []
    while True:
        opcode, fin, payload = read_frame(sock)
        if opcode == 0x8:
            try:
                send_frame(sock, 0x8, payload[:2])
            except OSError:
                pass
            raise Closed()
        if opcode == 0x9:
            send_frame(sock, 0xA, payload)
            continue
        if opcode == 0xA:
            continue
        parts.append(payload)
        if fin:
            text = b"".join(parts).decode("utf-8", "replace")
            print("RECV " + text, flush=True)
            return text


def run_script(sock, steps, number):
    sub = ""
    event_id = ""
    for step in steps:
        if "on_connections" in step and number not in step["on_connections"]:
            continue
        if "await" in step:
            while True:
                text = read_message(sock)
                try:
                    msg = json.loads(text)
                except ValueError:
                    continue
                if isinstance(msg, list) and msg and (step["await"] in ("any", msg[0])):
                    if len(msg) > 1 and isinstance(msg[1], str):
                        sub = msg[1]
                    if len(msg) > 1 and isinstance(msg[1], dict):
                        event_id = str(msg[1].get("id", ""))
                    break
        elif "text" in step:
            send_frame(sock, 0x1, step["text"].replace("%SUB%", sub).replace("%ID%", event_id).encode())
        elif "fragments" in step:
            frags = [f.replace("%SUB%", sub).encode() for f in step["fragments"]]
            for i, f in enumerate(frags):
                send_frame(sock, 0x1 if i == 0 else 0x0, f, fin=(i == len(frags) - 1))
        elif "text_hex" in step:
            send_frame(sock, 0x1, bytes.fromhex(step["text_hex"]))
        elif "binary_hex" in step:
            send_frame(sock, 0x2, bytes.fromhex(step["binary_hex"]))
        elif "oversized" in step:
            n = int(step["oversized"])
            sock.sendall(frame_header(0x1, n))
            filler = b'["NOTICE","' + b"x" * 65536
            sent = 0
            try:
                while sent < n:
                    chunk = filler[: min(len(filler), n - sent)]
                    sock.sendall(chunk)
                    sent += len(chunk)
            except OSError:
                return
        elif "sleep" in step:
            time.sleep(float(step["sleep"]))
        elif "close" in step:
            send_frame(sock, 0x8, struct.pack("!H", int(step["close"])))
            return
        elif "drop" in step:
            return
    while True:
        read_message(sock)


def make_certificate(directory):
    os.makedirs(directory, exist_ok=True)
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key


def serve_connection(sock, steps, tls, number):
    try:
        sock.settimeout(120)
        if tls is not None:
            sock = tls.wrap_socket(sock, server_side=True)
        handshake(sock)
        run_script(sock, steps, number)
    except (Closed, OSError, ValueError, ssl.SSLError):
        pass
    finally:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--script", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--lifetime", type=float, default=600.0)
    p.add_argument("--tls-dir")
    args = p.parse_args()
    with open(args.script) as f:
        steps = json.load(f)

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(16)
    port = listener.getsockname()[1]

    tls = None
    scheme, host = "ws", "127.0.0.1"
    if args.tls_dir:
        cert, key = make_certificate(args.tls_dir)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert, key)
        scheme, host = "wss", "localhost"
        print(f"CERT {cert}", flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except (OSError, ValueError):
            pass
        stop.set()

    def accept_loop():
        number = 0
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            number += 1
            threading.Thread(target=serve_connection, args=(conn, steps, tls, number), daemon=True).start()

    threading.Thread(target=watch_stdin, daemon=True).start()
    threading.Thread(target=accept_loop, daemon=True).start()
    print(f"READY {scheme}://{host}:{port}", flush=True)
    stop.wait(args.lifetime)
    listener.close()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
