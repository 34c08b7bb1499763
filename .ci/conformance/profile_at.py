#!/usr/bin/env python3
"""Serves one UCP release's profile as the root profile of a bridge, and relays the rest.

spck-conformance grades a server at the version of its root `/.well-known/ucp` and has MCP
checks only for 2026-04-08; the bridge's root profile is 2026-08-25 with a 2026-04-08 leaf.
This front answers `/.well-known/ucp` with the leaf so the 2026-04-08 checks run against the
real bridge (every other request, MCP included, is relayed unchanged).

It serves TLS with CERT and KEY when given, and trusts the bridge's certificate through
SSL_CERT_FILE, as any client of the run does.

With PROFILE_REST_FIRST=1 in the environment, the root profile lists each service's REST
binding first: the official UCP conformance suite takes `services["dev.ucp.shopping"][0]` as
its REST endpoint, an order the spec does not give (.ci/ucp-suite.sh).

usage: profile_at.py LISTEN_PORT BRIDGE_BASE RELEASE [CERT KEY]
"""
import http.server
import json
import os
import ssl
import sys
import urllib.error
import urllib.request

PORT, BRIDGE, RELEASE = int(sys.argv[1]), sys.argv[2].rstrip("/"), sys.argv[3]
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-authorization", "proxy-authenticate", "host", "content-length"}


def rest_first(payload):
    profile = json.loads(payload)
    for bindings in profile.get("ucp", {}).get("services", {}).values():
        bindings.sort(key=lambda binding: binding.get("transport") != "rest")
    return json.dumps(profile).encode()


class Relay(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def relay(self):
        path = self.path
        if path.split("?", 1)[0] == "/.well-known/ucp":
            path = f"/.well-known/ucp/{RELEASE}"
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        request = urllib.request.Request(BRIDGE + path, data=body, method=self.command)
        for name, value in self.headers.items():
            if name.lower() not in HOP_BY_HOP:
                request.add_header(name, value)
        try:
            response = urllib.request.urlopen(request, timeout=30)
        except urllib.error.HTTPError as error:
            response = error
        payload = response.read()
        if path != self.path and os.environ.get("PROFILE_REST_FIRST") == "1":
            payload = rest_first(payload)
        self.send_response(response.status)
        for name, value in response.headers.items():
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_HEAD = do_OPTIONS = relay

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Relay)
if len(sys.argv) > 5:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[4], sys.argv[5])
    server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
