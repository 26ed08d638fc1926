#!/usr/bin/env python3
"""relay_halfrecord.py - a stand-in daemon for relay.sh: TLS with the test
certificates (the client's required), and to the first request on a
connection a reply whose first TLS record arrives in two halves, STALL
seconds apart.  A relay carrying that reply holds half a record that OpenSSL
cannot decrypt yet: it must wait for the rest in poll, not spin.

    relay_halfrecord.py CERTDIR STALL   prints its port, serves until killed

Trust: test code; the peer is the relay under test.
"""
import socket
import ssl
import sys
import threading
import time

certs, stall = sys.argv[1], float(sys.argv[2])
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(f"{certs}/server.pem", f"{certs}/server.key")
ctx.load_verify_locations(f"{certs}/ca.pem")
ctx.verify_mode = ssl.CERT_REQUIRED


def serve(sock):
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(inc, out, server_side=True)

    def pump():  # what TLS wrote goes out
        data = out.read()
        if data:
            sock.sendall(data)

    def feed():  # the peer's next bytes in; False once it closed
        data = sock.recv(65536)
        if not data:
            return False
        inc.write(data)
        return True

    try:
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                pump()
                if not feed():
                    return
        pump()  # the handshake's end and the session tickets
        while True:  # up to the first bytes of a request
            try:
                if tls.read(65536):
                    break
            except ssl.SSLWantReadError:
                pump()
                if not feed():
                    return
        body = b"x" * 8000
        tls.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        record = out.read()
        half = len(record) // 2
        sock.sendall(record[:half])
        time.sleep(stall)
        sock.sendall(record[half:])
        while sock.recv(65536):  # until the relay closes it
            pass
    except OSError:
        pass
    finally:
        sock.close()


lsock = socket.socket()
lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
lsock.bind(("127.0.0.1", 0))
lsock.listen(16)
print(lsock.getsockname()[1], flush=True)
while True:
    conn, _ = lsock.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
