"""The stand-in for the endpoint picker (images/epp/README.md): llm-d's router
EPP, which a ModelReplica's routing composes next to its engines, is not built
here. This takes the EPP's command line, says what it was asked to pick for,
and listens on its gRPC and health ports so its Service has an endpoint; it
picks nothing (no gateway sends it traffic on the plane).

    python3 epp_standin.py --pool-name=NAME --pool-namespace=NS [--grpc-port=9002] [--grpc-health-port=9003] ...
"""

import signal
import socket
import sys
import threading

# The EPP's defaults for the ports the replica composes (grpc 9002, grpc-health 9003).
GRPC_PORT = 9002
HEALTH_PORT = 9003


def flags(argv):
    out = {}
    for word in argv:
        if word.startswith("--") and "=" in word:
            name, value = word[2:].split("=", 1)
            out[name] = value
    return out


def listen(port):
    server = socket.create_server(("0.0.0.0", port), reuse_port=True)

    def accept():
        while True:
            connection, _ = server.accept()
            connection.close()

    threading.Thread(target=accept, daemon=True).start()


def main(argv):
    given = flags(argv)
    ports = (int(given.get("grpc-port", GRPC_PORT)), int(given.get("grpc-health-port", HEALTH_PORT)))
    print(
        f"[epp-standin] pool {given.get('pool-namespace', '?')}/{given.get('pool-name', '?')}, "
        f"config {given.get('config-file', 'none')}; listening on :{ports[0]} and :{ports[1]}, picking nothing",
        file=sys.stderr,
        flush=True,
    )
    for port in ports:
        listen(port)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.pause()


if __name__ == "__main__":
    main(sys.argv[1:])
