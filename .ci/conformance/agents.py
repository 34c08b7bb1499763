#!/usr/bin/env python3
"""Serves the agent profiles spck-conformance names, over TLS, as their hosts would.

spck sends `UCP-Agent: profile="https://spck.dev/agent"` on every request, and the
negotiation checks name one profile URL per failure (spck-merchant-tls.json). With
negotiation on, the bridge really fetches them: inside the conformance namespace
`spck.dev` resolves to loopback (a private /etc/hosts), and this server answers on 443
with a certificate from the run's own CA, which the bridge trusts through SSL_CERT_FILE.

usage: agents.py RELEASE CERT KEY
"""
import http.server
import json
import ssl
import sys

RELEASE, CERT, KEY = sys.argv[1:4]

PROFILES = {
    # The agent every check calls as: it names no capability, so the bridge serves it all.
    "/agent": {"ucp": {"version": RELEASE}},
    # NEG-001: a version the bridge does not serve.
    "/agents/unsupported": {"ucp": {"version": "2020-01-01"}},
    # NEG-002: only catalog search, so a checkout call shares no capability.
    "/agents/incompatible": {"ucp": {"version": RELEASE, "capabilities": {
        "dev.ucp.shopping.catalog.search": [{"version": RELEASE}]}}},
}
MALFORMED = "/agents/malformed"     # NEG-004: not JSON
# Any other path (spck names /agents/missing) is 404: NEG-003, profile_unreachable.


class Profiles(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path in PROFILES:
            status, body = 200, json.dumps(PROFILES[path]).encode()
        elif path == MALFORMED:
            status, body = 200, b"{ this is not json"
        else:
            status, body = 404, b'{"error": "no such profile"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 443), Profiles)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
