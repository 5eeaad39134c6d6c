#!/usr/bin/env python3
"""A tiny local API for the examples: weather for the `weather` skill, and a mail proxy for the `mailbox`
bundle (python3 standard library only).

    python3 scripts/demo-api-server.py [--port 8787]

Serves on 127.0.0.1 only:
  GET /v1/weather?city=NAME  -> 200 {"city", "current": {"temperature_c", "conditions", "wind_kph"},
                                     "forecast": [{"day", "high_c", "low_c", "conditions"} x 3]}
                                404 {"error"} for an empty city
  GET /v1/health             -> 200 {"ok": true}
  GET /gmail/echo            -> the `mailbox` bundle's OAuth proxy: 200 {"headers": [[name, value], ...]}, the
                                request's own headers, when it carries "Authorization: Bearer TOKEN" with
                                the --oauth-token (default demo-oauth-token); 401 {"error"} otherwise
The numbers are made up but deterministic: the same city always gets the same weather. With --port 0
the kernel picks a port. The first line on stdout is "listening on http://127.0.0.1:PORT", printed once
the socket accepts connections, so a script can wait for it.
"""

import argparse
import hashlib
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CONDITIONS = ["sunny", "partly cloudy", "cloudy", "light rain", "showers", "windy", "foggy", "snow"]
DAYS = ["tomorrow", "in 2 days", "in 3 days"]


def weather(city):
    seed = hashlib.sha256(city.strip().lower().encode("utf-8")).digest()
    temperature = seed[0] % 35 - 5
    forecast = []
    for i, day in enumerate(DAYS):
        high = temperature + seed[1 + i] % 7 - 2
        forecast.append({"day": day, "high_c": high, "low_c": high - 4 - seed[4 + i] % 6,
                         "conditions": CONDITIONS[seed[7 + i] % len(CONDITIONS)]})
    return {"city": city.strip(),
            "current": {"temperature_c": temperature, "conditions": CONDITIONS[seed[10] % len(CONDITIONS)],
                        "wind_kph": seed[11] % 40},
            "forecast": forecast}


class Handler(BaseHTTPRequestHandler):
    server_version = "demo-weather/1.0"

    def send_json(self, status, value):
        body = json.dumps(value).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/gmail/echo":
            if self.headers.get("Authorization") != "Bearer " + self.server.oauth_token:
                return self.send_json(401, {"error": "missing or wrong bearer token"})
            return self.send_json(200, {"headers": [[n, v] for n, v in self.headers.items()]})
        if url.path == "/v1/health":
            return self.send_json(200, {"ok": True})
        if url.path == "/v1/weather":
            city = parse_qs(url.query).get("city", [""])[0]
            if not city.strip():
                return self.send_json(404, {"error": "no such city: give ?city=NAME"})
            return self.send_json(200, weather(city))
        return self.send_json(404, {"error": "unknown path " + url.path})

    def log_message(self, fmt, *args):
        sys.stderr.write("demo-api: " + (fmt % args) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument("--oauth-token", default="demo-oauth-token",
                        help="the bearer token /gmail/echo accepts (the operator's credentials file holds it)")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.oauth_token = args.oauth_token
    print("listening on http://127.0.0.1:%d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
