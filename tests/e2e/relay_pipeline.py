# relay_pipeline.py SOCKET BODY: a process of the person's uid sends two
# requests through the relay at once and leaves after the first reply
# (review s36): the second reply must not reach the next client.
import socket
import sys

s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
line = b""
while not line.endswith(b"\n"):
    line += s.recv(1)
body = sys.argv[2].encode()
s.sendall(b"GET /v0/profiles HTTP/1.1\r\nHost: x\r\n\r\n"
          b"POST /v0/run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
got = b""
while b"\r\n\r\n" not in got:
    got += s.recv(65536)
head, rest = got.split(b"\r\n\r\n", 1)
cl = int([h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")][0].split(b":")[1])
while len(rest) < cl:
    rest += s.recv(65536)
print("first reply whole")
s.close()
