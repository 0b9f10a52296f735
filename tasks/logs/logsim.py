"""A seeded generator of realistic web, application, auth and system logs with planted incidents.

Every log set is produced from a list of events whose facts are known (the answers are computed
from the events, never by parsing the text), so a question about a log has one exact answer:

* ``access.log``: nginx "combined" lines plus request time and id
  (``203.0.113.7 - - [12/Mar/2024:14:02:11 +0000] "GET /api/orders/1832 HTTP/1.1" 200 912 "-" "curl/8.5.0" rt=0.043 rid=4f1c9a2e``);
* ``app.log``: key=value lines of the services behind it
  (``2024-03-12T14:02:11.512Z level=ERROR service=checkout component=db-pool rid=4f1c9a2e msg="..."``);
* ``auth.log``: sshd lines in syslog format (failed and accepted logins);
* ``syslog``: kernel OOM-killer and systemd lines.

An incident has a root-cause component that fails first, then the services that depend on it, then
5xx responses at the edge. ``python tasks/logs/build.py`` writes the suite's logs from fixed seeds.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections import Counter
from dataclasses import dataclass, field

ENDPOINTS = [  # (method, path template, service, median latency ms, weight)
    ("GET", "/", "web", 12, 10), ("GET", "/static/app.{id}.js", "web", 3, 8), ("GET", "/api/products", "catalog", 35, 12),
    ("GET", "/api/products/{id}", "catalog", 22, 14), ("GET", "/api/cart", "cart", 18, 8), ("POST", "/api/cart/items", "cart", 41, 6),
    ("POST", "/api/checkout", "checkout", 180, 3), ("GET", "/api/orders/{id}", "orders", 28, 6), ("POST", "/api/login", "auth", 95, 3),
    ("GET", "/api/search", "search", 60, 7), ("GET", "/healthz", "web", 1, 4),
]
AGENTS = ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/122.0", "Mozilla/5.0 (Macintosh) Safari/605.1.15",
          "Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Firefox/123.0", "curl/8.5.0",
          "okhttp/4.12.0", "python-requests/2.31.0", "kube-probe/1.29"]
INCIDENTS = {  # root-cause component -> (the services it breaks, its first message, the services' message, status)
    "db-pool": (("checkout", "orders"), "connection pool exhausted ({n}/{n} in use), waiting for a connection",
                "timeout acquiring database connection after 5000 ms", 504),
    "payment-gw": (("checkout",), "upstream payments.example.net responded 503 Service Unavailable",
                   "payment authorization failed: gateway unavailable", 502),
    "redis-cache": (("cart", "catalog"), "READONLY You can't write against a read only replica",
                    "cache write failed, falling back is disabled", 500),
    "search-index": (("search",), "shard [products][2] is not allocated: index red",
                     "search backend returned no shards", 503),
    "tls-proxy": (("auth",), "certificate for auth.internal has expired (notAfter=2024-03-12T00:00:00Z)",
                  "TLS handshake with auth.internal failed: certificate has expired", 502),
}
NOISE = [("INFO", "cache", "cache warm-up complete ({n} keys)"), ("INFO", "scheduler", "job cleanup-sessions finished in {n} ms"),
         ("WARN", "http", "slow request: {n} ms"), ("INFO", "metrics", "flushed {n} series"),
         ("WARN", "db", "connection recycled after {n} s idle"), ("INFO", "http", "config reloaded")]


def normalize_path(path: str) -> str:
    """The endpoint of a request path: the query dropped, numeric and hashed segments replaced by {id}."""
    path = path.split("?", 1)[0]
    return re.sub(r"(?<=[/.])(?:\d+|[0-9a-f]{8,})(?=[/.]|$)", "{id}", path)


@dataclass
class Request:
    ts: dt.datetime
    ip: str
    method: str
    path: str
    status: int
    size: int
    rt_ms: int
    rid: str
    agent: str
    service: str

    @property
    def endpoint(self) -> str:
        return f"{self.method} {normalize_path(self.path)}"

    def line(self) -> str:
        stamp = self.ts.strftime("%d/%b/%Y:%H:%M:%S +0000")
        return (f'{self.ip} - - [{stamp}] "{self.method} {self.path} HTTP/1.1" {self.status} {self.size} "-" '
                f'"{self.agent}" rt={self.rt_ms / 1000:.3f} rid={self.rid}')


@dataclass
class LogSet:
    files: dict[str, str]
    facts: dict = field(default_factory=dict)


def _ip(rng: random.Random) -> str:
    return rng.choice(["203.0.113", "198.51.100", "192.0.2", "100.64.12", "172.16.40"]) + f".{rng.randint(2, 254)}"


def web(seed: int, *, incident: str | None = None, minutes: int = 25, rate: float = 0.5, deploy: bool = False,
        rate_limit_ip: bool = False) -> LogSet:
    """access.log + app.log for *minutes* of traffic, an incident of component *incident* in the middle."""
    rng = random.Random(seed)
    start = dt.datetime(2024, 3, rng.randint(4, 28), rng.randint(8, 19), rng.choice([0, 15, 30, 45]), tzinfo=dt.timezone.utc)
    end = start + dt.timedelta(minutes=minutes)
    clients = [_ip(rng) for _ in range(rng.randint(35, 60))]
    weights = [e[4] for e in ENDPOINTS]
    inc_start = start + dt.timedelta(seconds=rng.randint(minutes * 60 // 3, minutes * 60 // 2))
    inc_end = inc_start + dt.timedelta(seconds=rng.randint(150, 420))
    broken = INCIDENTS[incident][0] if incident else ()
    deploy_at = start + dt.timedelta(seconds=rng.randint(minutes * 60 // 4, minutes * 60 // 3)) if deploy else None
    regressed = rng.choice(["/api/orders/{id}", "/api/search", "/api/products/{id}"]) if deploy else None
    limiter = _ip(rng) if rate_limit_ip else None
    degraded = rng.choice([e[1] for e in ENDPOINTS if e[1] not in ("/healthz", "/")])  # a cold cache, a slow query
    slowdown = rng.uniform(3.0, 7.0)
    requests, app = [], []
    t = start
    while True:
        t += dt.timedelta(seconds=rng.expovariate(rate))
        if t >= end:
            break
        method, template, service, median, _ = rng.choices(ENDPOINTS, weights)[0]
        path = template.replace("{id}", str(rng.randint(100, 99999)) if "js" not in template else f"{rng.getrandbits(32):08x}")
        if template == "/api/search":
            path += f"?q={rng.choice(['shoes', 'red+dress', 'usb-c', 'lamp', 'desk'])}&page={rng.randint(1, 4)}"
        status, rt = 200, max(1, int(rng.lognormvariate(0, 0.5) * median * (slowdown if template == degraded else 1)))
        if method == "POST":
            status = 201 if template != "/api/login" else 200
        if template.endswith("{id}") and rng.random() < 0.04:
            status = 404
        if template == "/api/login" and rng.random() < 0.15:
            status = 401
        ip = rng.choice(clients)
        rid = f"{rng.getrandbits(32):08x}"
        failing = incident and inc_start <= t < inc_end and service in broken and rng.random() < 0.85
        if failing:
            status, rt = INCIDENTS[incident][3], rng.randint(4800, 5200) if INCIDENTS[incident][3] == 504 else rng.randint(20, 300)
            app.append((t - dt.timedelta(milliseconds=rt // 2), "ERROR", service, incident, rid, INCIDENTS[incident][2]))
        elif deploy_at and t >= deploy_at and template == regressed and rng.random() < 0.6:
            status, rt = 500, rng.randint(5, 40)
            app.append((t - dt.timedelta(milliseconds=2), "ERROR", service, "http", rid,
                        "unhandled exception: KeyError: 'currency'"))
        requests.append(Request(t, ip, method, path, status, rng.randint(200, 40000) if status < 400 else rng.randint(150, 600),
                                rt, rid, rng.choice(AGENTS), service))
    if limiter:
        burst_at = start + dt.timedelta(seconds=rng.randint(60, minutes * 60 - 200))
        for i in range(rng.randint(40, 70)):
            t = burst_at + dt.timedelta(milliseconds=150 * i + rng.randint(0, 100))
            status = 429 if i >= 20 else 200
            requests.append(Request(t, limiter, "GET", "/api/products", status, 180 if status == 429 else rng.randint(2000, 9000),
                                    2 if status == 429 else rng.randint(20, 60), f"{rng.getrandbits(32):08x}",
                                    "python-requests/2.31.0", "catalog"))
        requests.sort(key=lambda r: r.ts)
    if incident:
        n = rng.choice([20, 32, 50])
        first = inc_start - dt.timedelta(seconds=rng.randint(20, 50))
        app.append((first, "WARN", "infra", incident, "-", INCIDENTS[incident][1].format(n=n)))
        for k in range(rng.randint(3, 6)):
            app.append((first + dt.timedelta(seconds=15 * (k + 1)), "ERROR", "infra", incident, "-",
                        INCIDENTS[incident][1].format(n=n)))
        app.append((inc_end + dt.timedelta(seconds=rng.randint(5, 30)), "INFO", "infra", incident, "-", "recovered"))
    if deploy_at:
        app.append((deploy_at, "INFO", "deployer", "release", "-", f"deployed version=2.{rng.randint(3, 9)}.{rng.randint(0, 9)}"))
    for _ in range(int(minutes * 4)):
        level, component, msg = rng.choice(NOISE)
        app.append((start + dt.timedelta(seconds=rng.uniform(0, minutes * 60)), level, rng.choice(["web", "cart", "catalog", "orders"]),
                    component, "-", msg.format(n=rng.randint(3, 900))))
    app.sort(key=lambda e: e[0])
    files = {"access.log": "".join(r.line() + "\n" for r in requests),
             "app.log": "".join(f'{ts.strftime("%Y-%m-%dT%H:%M:%S.")}{ts.microsecond // 1000:03d}Z level={lvl} '
                                f'service={svc} component={comp} rid={rid} msg="{msg}"\n' for ts, lvl, svc, comp, rid, msg in app)}
    facts = web_facts(requests, app, start, incident, deploy_at, limiter)
    return LogSet(files, facts)


def _top(counts: Counter) -> str:
    """The most frequent key; ties go to the alphabetically first."""
    return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def _stamp(ts: dt.datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def web_facts(requests, app, start, incident, deploy_at, limiter) -> dict:
    classes = Counter(f"{r.status // 100}xx" for r in requests)
    errors = [r for r in requests if r.status >= 500]

    def p95(values):
        ordered = sorted(values)
        return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]
    ok_latency: dict[str, list[int]] = {}
    for r in requests:
        if r.status < 500:
            ok_latency.setdefault(r.endpoint, []).append(r.rt_ms)
    eligible = {e: v for e, v in ok_latency.items() if len(v) >= 20}
    slowest = min(eligible, key=lambda e: (-p95(eligible[e]), e))
    facts = {
        "total_requests": len(requests),
        "status_classes": {k: classes[k] for k in sorted(classes)},
        "server_errors": len(errors),
        "error_rate": round(len(errors) / len(requests), 4),
        "distinct_clients": len({r.ip for r in requests}),
        "top_client": _top(Counter(r.ip for r in requests)),
        "slowest_endpoint": slowest,
        "slowest_endpoint_p95_ms": p95(ok_latency[slowest]),
        "p95_ms": {e: p95(v) for e, v in sorted(eligible.items())},
    }
    if errors:
        counts = Counter(r.endpoint for r in errors)
        facts.update(first_error_rid=errors[0].rid, first_error_time=_stamp(errors[0].ts),
                     last_error_time=_stamp(errors[-1].ts),
                     top_error_endpoint=_top(counts),
                     errors_by_endpoint=dict(sorted(counts.items())),
                     top_error_clients=[ip for ip, _ in sorted(Counter(r.ip for r in errors).items(),
                                                               key=lambda kv: (-kv[1], kv[0]))[:3]])
    if incident:
        first = next(e for e in app if e[1] in ("WARN", "ERROR") and e[3] == incident)  # the planted first line
        facts.update(root_cause=incident, incident_start=_stamp(first[0]),
                     affected_services=sorted({e[2] for e in app if e[1] == "ERROR" and e[3] == incident and e[2] != "infra"}))
    if deploy_at:
        after = [r for r in errors if r.ts >= deploy_at]
        facts.update(deploy_time=_stamp(deploy_at), first_error_after_deploy=after[0].rid if after else None,
                     regressed_endpoint=_top(Counter(r.endpoint for r in after)) if after else None)
    if limiter:
        limited = [r for r in requests if r.status == 429]
        facts.update(rate_limited_client=limiter, rate_limited_requests=len(limited))
    signatures = Counter(re.sub(r"\d+", "N", e[5]) for e in app if e[1] == "ERROR")
    facts["error_signatures"] = [[s, n] for s, n in sorted(signatures.items(), key=lambda kv: (-kv[1], kv[0]))[:3]]
    return facts


USERS = ["root", "admin", "ubuntu", "test", "oracle", "postgres", "git", "deploy", "user", "ftp"]


def auth(seed: int, *, attackers: int = 2, compromise: bool = True, hours: int = 6) -> LogSet:
    """sshd lines: legitimate key logins, password guessing from *attackers* addresses, maybe one success."""
    rng = random.Random(seed)
    start = dt.datetime(2024, rng.randint(1, 11), rng.randint(1, 28), rng.randint(0, 12), 0, tzinfo=dt.timezone.utc)
    host = rng.choice(["bastion-01", "web-02", "db-01"])
    lines = []
    pid = rng.randint(2000, 9000)

    def emit(t, text):
        nonlocal pid
        pid += rng.randint(1, 40)
        lines.append((t, f"{t.strftime('%b %e %H:%M:%S')} {host} sshd[{pid}]: {text}"))

    staff = {"alice": _ip(rng), "bob": _ip(rng), "carol": _ip(rng)}
    for _ in range(rng.randint(15, 30)):
        t = start + dt.timedelta(seconds=rng.uniform(0, hours * 3600))
        user = rng.choice(sorted(staff))
        emit(t, f"Accepted publickey for {user} from {staff[user]} port {rng.randint(30000, 65000)} ssh2: "
                f"ED25519 SHA256:{rng.getrandbits(64):016x}")
        emit(t + dt.timedelta(seconds=rng.randint(60, 3000)), f"Disconnected from user {user} {staff[user]} port "
                                                              f"{rng.randint(30000, 65000)}")
    failures: Counter = Counter()
    ips = [_ip(rng) for _ in range(attackers + 3)]
    winner = None
    for k, ip in enumerate(ips):
        count = rng.randint(40, 160) if k < attackers else rng.randint(1, 4)  # the last few are typos, not attacks
        t = start + dt.timedelta(seconds=rng.uniform(0, hours * 3600 * 0.6))
        for _ in range(count):
            t += dt.timedelta(seconds=rng.uniform(0.5, 9))
            user = rng.choice(USERS) if k < attackers else rng.choice(sorted(staff))
            if user in ("root", "admin", "ubuntu", "deploy") or user in staff:
                emit(t, f"Failed password for {user} from {ip} port {rng.randint(30000, 65000)} ssh2")
            else:
                emit(t, f"Failed password for invalid user {user} from {ip} port {rng.randint(30000, 65000)} ssh2")
            failures[ip] += 1
        if k == 0 and compromise:
            winner = rng.choice(["deploy", "ubuntu"])
            emit(t + dt.timedelta(seconds=3), f"Accepted password for {winner} from {ip} port {rng.randint(30000, 65000)} ssh2")
    lines.sort(key=lambda x: x[0])
    attackers_sorted = [ip for ip, n in sorted(failures.items(), key=lambda kv: (-kv[1], kv[0])) if n >= 10]
    facts = {"failed_logins": sum(failures.values()), "attackers": attackers_sorted,
             "top_attacker": attackers_sorted[0], "top_attacker_failures": failures[attackers_sorted[0]],
             "compromised_user": winner, "compromise_source": ips[0] if winner else None,
             "invalid_users": len({m.group(1) for _, line in lines
                                   for m in [re.search(r"invalid user (\S+)", line)] if m})}
    return LogSet({"auth.log": "".join(line + "\n" for _, line in lines)}, facts)


def system(seed: int, *, hours: int = 4) -> LogSet:
    """syslog of one host: cron, systemd and kernel noise, one OOM kill and the restart of its service."""
    rng = random.Random(seed)
    start = dt.datetime(2024, rng.randint(1, 11), rng.randint(1, 28), rng.randint(0, 18), 0, tzinfo=dt.timezone.utc)
    host = rng.choice(["app-03", "worker-11", "api-02"])
    lines = []
    for _ in range(hours * 40):
        t = start + dt.timedelta(seconds=rng.uniform(0, hours * 3600))
        kind = rng.random()
        if kind < 0.4:
            lines.append((t, f"CRON[{rng.randint(1000, 60000)}]: (root) CMD (/usr/lib/sysstat/debian-sa1 1 1)"))
        elif kind < 0.7:
            lines.append((t, f"systemd[1]: Started session-{rng.randint(100, 999)}.scope - Session of User deploy."))
        else:
            lines.append((t, f"kernel: [{rng.uniform(1000, 99999):.6f}] TCP: request_sock_TCP: Possible SYN flooding on port 443. "
                             "Sending cookies."))
    victim = rng.choice([("java", "orders-api.service"), ("python3", "celery-worker.service"), ("node", "frontend-ssr.service")])
    vpid = rng.randint(2000, 40000)
    t = start + dt.timedelta(seconds=rng.uniform(hours * 900, hours * 2700))
    mem = rng.randint(3_000_000, 7_000_000)
    lines.append((t, f"kernel: [{rng.uniform(1000, 99999):.6f}] {victim[0]} invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0"))
    lines.append((t + dt.timedelta(milliseconds=20), f"kernel: [{rng.uniform(1000, 99999):.6f}] Out of memory: Killed process {vpid} ({victim[0]}) "
                  f"total-vm:{mem + 900000}kB, anon-rss:{mem}kB, file-rss:0kB, shmem-rss:0kB, UID:1001 pgtables:{rng.randint(9000, 20000)}kB oom_score_adj:0"))
    lines.append((t + dt.timedelta(seconds=1), f"systemd[1]: {victim[1]}: A process of this unit has been killed by the OOM killer."))
    lines.append((t + dt.timedelta(seconds=1), f"systemd[1]: {victim[1]}: Main process exited, code=killed, status=9/KILL"))
    lines.append((t + dt.timedelta(seconds=11), f"systemd[1]: {victim[1]}: Scheduled restart job, restart counter is at 1."))
    lines.append((t + dt.timedelta(seconds=11), f"systemd[1]: Started {victim[1]}."))
    lines.sort(key=lambda x: x[0])
    text = "".join(f"{ts.strftime('%b %e %H:%M:%S')} {host} {line}\n" for ts, line in lines)
    facts = {"oom_process": victim[0], "oom_pid": vpid, "oom_service": victim[1], "oom_time": t.strftime("%b %e %H:%M:%S"),
             "oom_anon_rss_kb": mem, "host": host}
    return LogSet({"syslog": text}, facts)
