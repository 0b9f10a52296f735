"""Build the ops suite: seeded fake roots, their expected end states, the task documents.

    python tasks/ops/build.py                # rewrite every task (deterministic; runs the references as nobody)
    python tasks/ops/build.py --check        # exit 1 when an inlined check program is stale
    python tasks/ops/build.py --inline-only  # rewrite only the inlined check programs

Each task has a fixture generator (a fake root: files, modes, times, from a seed) and a reference
script (its ``solution/bin/...``, hand-written). The visible fixture ships as ``fixture.tar`` (tar keeps modes and times, git does
not); two hidden fixtures from other seeds are scored. A fixture's expected state is what the
reference leaves, run here as the unprivileged user ``nobody`` in a scratch folder; the build checks
that the reference is idempotent and changes something, and that the unchanged stub changes nothing.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "_harness"))
sys.path.insert(0, os.path.join(HERE, "_check"))
import buildlib  # noqa: E402
import fstate  # noqa: E402

NAMES = ["amara", "bruno", "chen", "dagny", "emeka", "farah", "goran", "hana", "ivo", "jun", "kasia", "lior", "mateo",
         "nadia", "oskar", "priya", "quinn", "rafa", "sven", "tomas"]
EPOCH = 1710000000  # 2024-03-09


def F(text, mode="0644", **extra):
    return {"type": "file", "mode": mode, "text": text, **extra}


def D(mode="0755"):
    return {"type": "dir", "mode": mode}


def _lines(rng, n, what):
    return "".join(f"2024-03-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z {what} "
                   f"event={rng.randint(1000, 9999)}\n" for _ in range(n))


# --------------------------------------------------------------------------- fixtures (seed -> tree, env)

def fx_rotate(rng):
    tree = {"var": D(), "var/log": D(), "var/log/app": D()}
    for name in rng.sample(["api", "worker", "billing", "mailer", "search"], 3):
        mode = rng.choice(["0640", "0644"])
        tree[f"var/log/app/{name}.log"] = F(_lines(rng, rng.randint(2, 6), name), mode)
        for n in range(1, rng.randint(2, 5)):
            key = f"var/log/app/{name}.log.{n}" + (".gz" if n > 1 else "")
            tree[key] = {"type": "gzip" if n > 1 else "file", "mode": mode, "text": _lines(rng, 2, f"{name}-{n}")}
    tree["var/log/app/idle.log"] = F("", "0644")
    tree["var/log/app/idle.log.1"] = F(_lines(rng, 1, "idle"), "0644")
    return tree, {"KEEP": str(rng.choice([3, 4]))}


def fx_compress(rng):
    tree = {"var": D(), "var/log": D()}
    for svc in rng.sample(["nginx", "postgresql", "redis", "app"], 3):
        tree[f"var/log/{svc}"] = D()
        mode = rng.choice(["0640", "0644"])
        tree[f"var/log/{svc}/{svc}.log"] = F(_lines(rng, 2, svc), mode)
        for n in range(1, rng.randint(3, 6)):
            gz = n > 2 and rng.random() < 0.5
            tree[f"var/log/{svc}/{svc}.log.{n}" + (".gz" if gz else "")] = {
                "type": "gzip" if gz else "file", "mode": mode, "text": _lines(rng, 2, f"{svc}.{n}")}
    tree["var/log/README"] = F("rotated logs live here\n")
    return tree, {}


def _etc_users(rng, users):
    passwd = ["root:x:0:0:root:/root:/bin/bash", "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin"]
    shadow = ["root:*:19700:0:99999:7:::", "daemon:*:19700:0:99999:7:::"]
    group = ["root:x:0:", "sudo:x:27:", "docker:x:998:", "developers:x:1500:", "ops:x:1501:"]
    memberships = {g: [] for g in ("sudo", "docker", "developers", "ops")}
    tree = {"etc": D(), "home": D()}
    for i, name in enumerate(users):
        uid = 1001 + i
        passwd.append(f"{name}:x:{uid}:{uid}:{name.title()}:/home/{name}:/bin/bash")
        shadow.append(f"{name}:$6$salt{rng.getrandbits(32):x}$hash:19700:0:99999:7:::")
        group.append(f"{name}:x:{uid}:")
        for g in rng.sample(sorted(memberships), rng.randint(1, 2)):
            memberships[g].append(name)
        tree[f"home/{name}"] = D("0750")
        tree[f"home/{name}/.profile"] = F(f"export EDITOR=vim  # {name}\n")
    group = [line + ",".join(memberships.get(line.split(":")[0], [])) for line in group]
    tree.update({"etc/passwd": F("\n".join(passwd) + "\n"), "etc/shadow": F("\n".join(shadow) + "\n", "0640"),
                 "etc/group": F("\n".join(group) + "\n")})
    return tree


def fx_provision(rng):
    existing = rng.sample(NAMES[:10], 3)
    tree = _etc_users(rng, existing)
    new = rng.sample([n for n in NAMES if n not in existing], 3) + [existing[0]]
    rows = ["name,uid,comment,shell,groups,key"]
    for i, name in enumerate(new):
        groups = ";".join(rng.sample(["developers", "docker", "ops"], rng.randint(0, 2)))
        rows.append(f"{name},{2001 + i},{name.title()} {rng.choice(['Smith', 'Okafor', 'Ng'])},/bin/bash,{groups},"
                    f"ssh-ed25519 AAAAC3Nza{rng.getrandbits(64):x} {name}@laptop")
    tree["etc/provision"] = D()
    tree["etc/provision/users.csv"] = F("\n".join(rows) + "\n")
    return tree, {}


def fx_offboard(rng):
    users = rng.sample(NAMES, 5)
    tree = _etc_users(rng, users)
    tree["etc/offboard.txt"] = F("# leavers this week\n" + "\n".join(rng.sample(users, 2)) + "\nnobody-here\n")
    return tree, {}


def fx_permissions(rng):
    tree = {"etc": D(), "etc/ssl": D(), "etc/ssl/private": D("0755"), "srv": D(), "srv/app": D(), "srv/app/bin": D(),
            "srv/app/config": D()}
    for name in rng.sample(["api", "web", "mail", "vpn"], 2):
        tree[f"etc/ssl/private/{name}.key"] = F(f"-----BEGIN PRIVATE KEY-----\n{rng.getrandbits(128):x}\n", "0644")
        tree[f"etc/ssl/{name}.crt"] = F(f"-----BEGIN CERTIFICATE-----\n{rng.getrandbits(128):x}\n", "0600")
    for name in rng.sample(["start", "migrate", "healthcheck", "backup"], 2):
        tree[f"srv/app/bin/{name}"] = F(f"#!/bin/sh\necho {name}\n", "0644")
    tree["srv/app/config/app.yaml"] = F("db: postgres://app@db/app\n", "0666")
    tree["srv/app/config/secrets.env"] = F(f"TOKEN={rng.getrandbits(64):x}\n", "0644")
    tree["etc/perms.conf"] = F("# mode glob (relative to the root); later lines win\n0700 etc/ssl/private\n"
                               "0600 etc/ssl/private/*.key\n0644 etc/ssl/*.crt\n0755 srv/app/bin/*\n"
                               "0640 srv/app/config/*\n0600 srv/app/config/secrets.env\n0755 srv/app/missing/*\n")
    return tree, {}


SITE_TEMPLATE = ("# ${name}: rendered from templates/site.conf.tmpl, do not edit\nserver {\n    listen 80;\n"
                 "    server_name ${server_name};\n    root ${root};\n    location /api/ {\n"
                 "        proxy_pass http://127.0.0.1:${port};\n    }\n}\n")


def fx_sites(rng):
    tree = {"etc": D(), "etc/nginx": D(), "etc/nginx/templates": D(), "etc/nginx/sites-available": D(),
            "etc/nginx/sites-enabled": D(), "etc/nginx/templates/site.conf.tmpl": F(SITE_TEMPLATE)}
    names = rng.sample(["shop", "blog", "docs", "status", "admin", "api"], 4)
    sites = [{"name": n, "domains": [f"{n}.example.com"] + ([f"www.{n}.example.com"] if rng.random() < 0.5 else []),
              "port": rng.randint(8000, 8999), "enabled": i != 2} for i, n in enumerate(names)]
    tree["etc/nginx/sites.json"] = F(json.dumps(sites, indent=1) + "\n")
    stale = names[2]  # disabled now, still enabled from before
    tree[f"etc/nginx/sites-available/{stale}.conf"] = F(f"# old config of {stale}\n")
    tree[f"etc/nginx/sites-enabled/{stale}.conf"] = {"type": "link", "target": f"../sites-available/{stale}.conf"}
    tree["etc/nginx/sites-enabled/default"] = F("# the distribution's default site, not ours\n")
    return tree, {}


def fx_env_files(rng):
    services = rng.sample(["api", "worker", "scheduler", "billing", "mailer"], 3)
    ini = ["[DEFAULT]", f"log_level = {rng.choice(['info', 'warning'])}", f"region = {rng.choice(['eu-west-1', 'us-east-2'])}", ""]
    tree = {"etc": D()}
    for s in services:
        ini += [f"[{s}]", f"port = {rng.randint(7000, 7999)}", f"workers = {rng.randint(1, 16)}"]
        if rng.random() < 0.6:
            ini.append("log_level = debug")
        ini.append("")
    tree["etc/services.ini"] = F("\n".join(ini))
    tree[f"etc/{services[0]}"] = D()
    tree[f"etc/{services[0]}/{services[0]}.env"] = F("PORT=1\n", "0644")  # stale, and too readable
    return tree, {}


def _day(base, offset):
    return (base - dt.timedelta(days=offset)).isoformat()


def fx_backup(rng):
    today = dt.date(2024, rng.randint(2, 11), rng.randint(1, 28))
    tree = {"srv": D(), "srv/data": D(), "var": D(), "var/backups": D()}
    for name in rng.sample(["users.csv", "orders.csv", "config.json", "notes.txt"], 3):
        tree[f"srv/data/{name}"] = F(f"{name} {rng.getrandbits(40):x}\n")
    for off in sorted(rng.sample(range(1, 15), rng.randint(7, 10))):
        tree[f"var/backups/data-{_day(today, off)}.tar.gz"] = {"type": "tar", "mode": "0600",
                                                              "members": {"old.txt": f"backup {off}\n"}}
    tree["var/backups/README.txt"] = F("nightly data backups\n")
    return tree, {"TODAY": today.isoformat()}


def fx_gfs(rng):
    today = dt.date(2024, rng.randint(6, 12), rng.randint(1, 28))
    tree = {"var": D(), "var/backups": D(), "var/backups/keep-me.txt": F("not a backup\n")}
    for off in range(0, 200):
        if off < 20 or rng.random() < 0.25:
            tree[f"var/backups/db-{_day(today, off)}.sql.gz"] = {"type": "gzip", "mode": "0600", "text": f"-- dump {off}\n"}
    return tree, {}


UNIT = "[Unit]\nDescription={desc}\nAfter=network.target\n\n[Service]\n{body}\n[Install]\nWantedBy=multi-user.target\n"


def fx_units(rng):
    tree = {"etc": D(), "etc/systemd": D(), "etc/systemd/system": D(), "opt": D(), "usr": D(), "usr/local": D(),
            "usr/local/bin": D()}
    for i, unit in enumerate(rng.sample(["api", "worker", "ingest", "notifier"], 3)):
        binary = f"{unit}-server"
        where = rng.choice(["opt", "usr/local"])
        real = f"/opt/{unit}/bin/{binary}" if where == "opt" else f"/usr/local/bin/{binary}"
        tree[real.lstrip("/")] = F(f"#!/bin/sh\nexec sleep infinity # {unit}\n", "0755")
        if where == "opt":
            tree[f"opt/{unit}"], tree[f"opt/{unit}/bin"] = D(), D()
        broken = i != 1
        path = f"/usr/bin/{binary}" if broken else real
        body = [f"User={unit}", f"ExecStart={path} --port {rng.randint(7000, 7999)}"]
        if rng.random() < 0.5:
            body += ["Environment=MODE=dev", "Environment=MODE=prod"]
        if i == 2:
            body.append("Restart=always")
        tree[f"etc/systemd/system/{unit}.service"] = F(UNIT.format(desc=f"{unit} service", body="\n".join(body)))
    return tree, {}


def fx_upstreams(rng):
    services = rng.sample(["shop", "search", "auth", "media", "pay"], 3)
    ports = {s: rng.randint(8000, 8999) for s in services}
    tree = {"etc": D(), "etc/nginx": D(), "etc/nginx/conf.d": D(),
            "etc/ports.txt": F("# service port\n" + "".join(f"{s} {p}\n" for s, p in ports.items()))}
    for i, s in enumerate(services):
        port = ports[s] if i == 0 else ports[s] + rng.randint(1, 50)
        tree[f"etc/nginx/conf.d/{s}.conf"] = F(f"upstream_check on;\nlocation /{s}/ {{\n    proxy_pass http://127.0.0.1:{port};\n"
                                               f"    proxy_read_timeout 30s;\n}}\n")
    tree["etc/nginx/conf.d/legacy.conf"] = F("location /old/ {\n    proxy_pass http://127.0.0.1:9999;\n}\n")
    return tree, {}


def fx_cron(rng):
    tree = {"etc": D(), "etc/jobs": D(), "etc/cron.d": D()}
    jobs = rng.sample(["backup", "cleanup", "report", "reindex", "certs"], 3)
    for j in jobs:
        tree[f"etc/jobs/{j}.job"] = F(f"{rng.randint(0, 59)} {rng.randint(0, 23)} * * * root\n/usr/local/bin/{j} --quiet\n")
    gone = "old-sync"
    tree[f"etc/cron.d/{gone}"] = F("# managed by cron_install\n0 1 * * * root /usr/local/bin/old-sync\n")
    tree["etc/cron.d/e2scrub_all"] = F("30 3 * * 0 root test -e /run/systemd/system || /sbin/e2scrub_all\n")
    tree[f"etc/cron.d/{jobs[0]}"] = F("# managed by cron_install\n0 0 * * * root /bin/false\n")
    return tree, {}


def fx_hosts(rng):
    hosts = [{"ip": f"10.0.{rng.randint(0, 9)}.{rng.randint(2, 250)}", "name": f"{n}.internal",
              "aliases": [n] if rng.random() < 0.6 else []} for n in rng.sample(["db1", "db2", "cache", "queue", "search", "vault"], 4)]
    lines = ["127.0.0.1 localhost", "::1 localhost ip6-localhost"]
    if rng.random() < 0.7:
        lines += ["# BEGIN managed hosts", "10.9.9.9 stale.internal", "# END managed hosts"]
    lines.append("192.168.1.10 printer.office")
    return {"etc": D(), "etc/hosts": F("\n".join(lines) + "\n"), "etc/inventory.json": F(json.dumps(hosts, indent=1) + "\n")}, {}


def fx_cleanup(rng):
    now = EPOCH + rng.randint(0, 90) * 86400
    tree = {"var": D(), "var/tmp": D(), "etc": D(), "etc/tmp-keep.txt": F("uploads-in-progress\n")}
    for folder in ["", "sessions/", "build/cache/", "uploads-in-progress/"]:
        if folder:
            parts = folder.rstrip("/").split("/")
            for k in range(1, len(parts) + 1):
                tree["var/tmp/" + "/".join(parts[:k])] = D()
        for k in range(rng.randint(2, 4)):
            age = rng.choice([1, 3, 6, 8, 20, 40])
            tree[f"var/tmp/{folder}f{k}-{age}d.tmp"] = F(f"{age} days old\n", mtime=now - age * 86400 - 60)
    return tree, {"NOW": str(now)}


SSHD = """# sshd_config of {host}
Include /etc/ssh/sshd_config.d/*.conf
Port {port}
#PermitRootLogin prohibit-password
{root_line}
PubkeyAuthentication yes
{password_line}
ChallengeResponseAuthentication no
UsePAM yes
{x11}
PrintMotd no
Subsystem sftp /usr/lib/openssh/sftp-server
"""


def fx_ssh(rng):
    text = SSHD.format(host=rng.choice(["bastion", "web-01", "db-02"]), port=rng.choice([22, 2222]),
                       root_line=rng.choice(["PermitRootLogin yes", "", "permitrootlogin without-password"]),
                       password_line=rng.choice(["PasswordAuthentication yes", "#PasswordAuthentication yes"]),
                       x11=rng.choice(["X11Forwarding yes", "X11Forwarding no", ""]))
    return {"etc": D(), "etc/ssh": D(), "etc/ssh/sshd_config": F(text, "0600")}, {}


TASKS = {  # name: (script, reference, fixture, difficulty, what it must do)
    "rotate_logs": ("bin/rotate_logs.sh", "rotate_logs.sh", fx_rotate, "medium",
                    "Rotate the application logs in `ROOT/var/log/app`: every non-empty `NAME.log` becomes `NAME.log.1` "
                    "(same mode) and is emptied in place (keeping its mode); an existing `NAME.log.1` becomes "
                    "`NAME.log.2.gz` (gzip, same mode) and `NAME.log.N.gz` becomes `NAME.log.N+1.gz`; only `$KEEP` "
                    "rotations are kept (`NAME.log.1` .. `NAME.log.$KEEP.gz`, default 4), older ones are deleted. "
                    "Empty logs are left alone, so a second run changes nothing."),
    "compress_rotated": ("bin/compress_rotated.sh", "compress_rotated.sh", fx_compress, "easy",
                         "Compress rotated logs below `ROOT/var/log`: every file named `NAME.log.N` with N >= 2 becomes "
                         "`NAME.log.N.gz` (gzip, same mode, the plain file removed). `NAME.log.1` stays plain (tools "
                         "still read it); already compressed files and everything else are left alone."),
    "provision_users": ("bin/provision_users.py", "provision_users.py", fx_provision, "hard",
                        "Provision the accounts of `ROOT/etc/provision/users.csv` (columns name, uid, comment, shell, "
                        "groups separated by `;`, key) in the fake `ROOT/etc`: a missing user gets a "
                        "`name:x:UID:UID:COMMENT:/home/name:SHELL` line appended to `passwd` and a `name:x:UID:` line "
                        "appended to `group`; each listed user is appended to the member list of each of its groups "
                        "(comma-separated, not twice); every listed user gets `ROOT/home/name` (0750) with `.ssh` (0700) "
                        "and `.ssh/authorized_keys` (0600) holding exactly its key and a newline. Existing lines stay "
                        "as they are; `passwd` and `group` keep mode 0644."),
    "offboard_users": ("bin/offboard_users.py", "offboard_users.py", fx_offboard, "medium",
                       "Offboard the users named in `ROOT/etc/offboard.txt` (one a line; `#` lines are comments; names "
                       "that do not exist are ignored): remove their lines from `passwd`, `shadow` and their own group "
                       "from `group`, remove them from every group's member list, and move `ROOT/home/NAME` to "
                       "`ROOT/home/.archive/NAME` (`.archive` with mode 0700). Files keep their modes; nothing else "
                       "changes."),
    "enforce_permissions": ("bin/enforce_permissions.sh", "enforce_permissions.sh", fx_permissions, "easy",
                            "Apply the permission policy `ROOT/etc/perms.conf`: each `MODE GLOB` line (globs relative to "
                            "ROOT, `#` lines are comments, later lines win) sets MODE on every existing path the glob "
                            "matches; globs that match nothing are fine; links are never followed."),
    "render_sites": ("bin/render_sites.py", "render_sites.py", fx_sites, "medium",
                     "Render the nginx sites of `ROOT/etc/nginx/sites.json` (name, domains, port, enabled): write "
                     "`sites-available/NAME.conf` (mode 0644) from `templates/site.conf.tmpl`, whose `${name}`, "
                     "`${server_name}` (the domains joined by spaces), `${port}` and `${root}` (`/srv/www/NAME`) are "
                     "substituted; `sites-enabled` must hold exactly one relative link "
                     "`NAME.conf -> ../sites-available/NAME.conf` per enabled site, and no link for a disabled one. "
                     "Files in sites-enabled that are not links are not ours: leave them."),
    "render_env_files": ("bin/render_env_files.py", "render_env_files.py", fx_env_files, "medium",
                         "Write one environment file per service of `ROOT/etc/services.ini`: `ROOT/etc/SERVICE/SERVICE.env`, "
                         "mode 0640, lines `KEY=VALUE` with the key upper-cased, sorted by key, for every option of the "
                         "service's section including the `[DEFAULT]` ones the section does not override. Create the "
                         "folders as needed (mode 0755)."),
    "backup_retention": ("bin/backup_retention.sh", "backup_retention.sh", fx_backup, "medium",
                         "Back up `ROOT/srv/data` into `ROOT/var/backups/data-$TODAY.tar.gz` (a gzipped tar of the "
                         "folder's files, mode 0600; `$TODAY` is given as YYYY-MM-DD) unless today's backup exists, "
                         "then keep only the 7 newest `data-YYYY-MM-DD.tar.gz` (by date) and delete older ones. "
                         "Other files are left alone."),
    "prune_backups_gfs": ("bin/prune_backups_gfs.py", "prune_backups_gfs.py", fx_gfs, "hard",
                          "Prune the database dumps `ROOT/var/backups/db-YYYY-MM-DD.sql.gz` with a grandfather-father-son "
                          "policy: keep the 7 newest, the newest dump of each of the 4 most recent ISO weeks that have "
                          "one, and the newest of each of the 6 most recent months that have one; delete every other "
                          "dump. Other files are left alone."),
    "fix_systemd_units": ("bin/fix_systemd_units.py", "fix_systemd_units.py", fx_units, "hard",
                          "Our services do not start. Repair every `ROOT/etc/systemd/system/UNIT.service`: when the "
                          "`ExecStart=` binary does not exist (inside ROOT), point it at the binary of the same name in "
                          "`/opt/UNIT/bin/` or else `/usr/local/bin/` (whichever exists inside ROOT), keeping its "
                          "arguments; a key repeated within a section keeps only its last value (in that value's place "
                          "of first appearance order: write each section's keys in the order they first appear); "
                          "`[Service]` gets `Restart=on-failure` when it has no `Restart=`. Write each section as its "
                          "header, its `KEY=VALUE` lines and one blank line, the file ending in a single newline."),
    "fix_nginx_upstreams": ("bin/fix_nginx_upstreams.py", "fix_nginx_upstreams.py", fx_upstreams, "easy",
                            "After a port migration the proxies return 502. In every `ROOT/etc/nginx/conf.d/SERVICE.conf` "
                            "whose SERVICE is listed in `ROOT/etc/ports.txt` (`SERVICE PORT` lines), make every "
                            "`proxy_pass http://127.0.0.1:PORT` use the service's port; change nothing else (files of "
                            "unlisted services included)."),
    "cron_install": ("bin/cron_install.sh", "cron_install.sh", fx_cron, "medium",
                     "Install the jobs of `ROOT/etc/jobs/NAME.job` (line 1: schedule and user, line 2: command) as "
                     "`ROOT/etc/cron.d/NAME` (mode 0644): the line `# managed by cron_install`, then "
                     "`SCHEDULE USER COMMAND` on one line. Remove files of cron.d whose first line is that marker "
                     "and whose job no longer exists; leave every other file alone."),
    "hosts_sync": ("bin/hosts_sync.py", "hosts_sync.py", fx_hosts, "easy",
                   "Keep the managed block of `ROOT/etc/hosts` in step with `ROOT/etc/inventory.json` (ip, name, "
                   "aliases): between the lines `# BEGIN managed hosts` and `# END managed hosts` there must be one "
                   "line `IP NAME ALIAS...` per host, sorted by name; append the block (with its markers) at the end "
                   "when the file has none; every line outside it stays."),
    "cleanup_tmp": ("bin/cleanup_tmp.py", "cleanup_tmp.py", fx_cleanup, "medium",
                    "Clean `ROOT/var/tmp`: delete every regular file not modified for 7 days, that is whose mtime is "
                    "before `$NOW - 7*86400` (`$NOW` is given, epoch seconds), except below the folders (relative "
                    "to var/tmp) listed in `ROOT/etc/tmp-keep.txt`; then remove folders left empty (never var/tmp "
                    "itself)."),
    "ssh_hardening": ("bin/ssh_hardening.sh", "ssh_hardening.sh", fx_ssh, "medium",
                      "Harden `ROOT/etc/ssh/sshd_config`: it must set `PermitRootLogin no`, `PasswordAuthentication "
                      "no`, `X11Forwarding no` and `MaxAuthTries 3`. For each, the first line that sets that keyword "
                      "(case-insensitively, commented out with `#` or not, with a value) is replaced by the exact "
                      "line, later ones removed; a keyword set nowhere is appended at the end. Every other line stays; "
                      "the file keeps mode 0600."),
}
SEEDS = (1, 2, 3)  # the visible fixture, then the hidden ones


def run_reference(script: str, source: str, tree: dict, env: dict) -> dict:
    """The state *source* leaves on *tree*, run as nobody in a scratch folder (never as root here)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        root, prog = os.path.join(tmp, "root"), os.path.join(tmp, "prog")
        fstate.write_tree(root, tree)
        buildlib.write(prog, source, 0o755)
        subprocess.run(["chown", "-R", "nobody:nogroup", tmp], check=True)
        runner = ["bash"] if script.endswith(".sh") else [sys.executable]
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *runner, prog, root]
        states = []
        for _ in range(2):
            subprocess.run(cmd, check=True, cwd=tmp, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": tmp,
                                                          "ROOT": root, **env}, capture_output=True, timeout=60)
            states.append(fstate.read_tree(root))
        if states[0] != states[1]:
            raise SystemExit(f"{script}: the reference is not idempotent")
        return states[0]


def fixture_tar(tree: dict) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        fstate.write_tree(os.path.join(tmp, "root"), tree)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for rel in sorted(tree):
                info = tar.gettarinfo(os.path.join(tmp, "root", rel), arcname=rel)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                if "mtime" not in tree[rel]:
                    info.mtime = EPOCH
                with open(os.path.join(tmp, "root", rel), "rb") if info.isfile() else io.BytesIO() as f:
                    tar.addfile(info, f if info.isfile() else None)
        return buf.getvalue()


def build(name: str) -> str:
    script, reference, fixture, difficulty, what = TASKS[name]
    folder = os.path.join(HERE, name)
    for sub in ("workspace", "hidden"):
        shutil.rmtree(os.path.join(folder, sub), ignore_errors=True)
    source = buildlib.read(os.path.join(folder, "solution", script))
    fixtures = []
    for seed in SEEDS:
        tree, env = fixture(random.Random(f"{name}-{seed}"))
        expected = run_reference(script, source, tree, env)
        if fstate.strip_times(expected) == fstate.strip_times(tree):
            raise SystemExit(f"{name}: the reference changes nothing on fixture {seed}")
        fixtures.append({"tree": tree, "env": env, "expected": expected})
    shell = script.endswith(".sh")
    stub = "#!/bin/bash\n# usage: bash " + script + " ROOT\nset -euo pipefail\nroot=\"$1\"\n" if shell else \
        f'"""usage: python {script} ROOT"""\nimport sys\n\nroot = sys.argv[1]\n'
    buildlib.write(os.path.join(folder, "workspace", script), stub)
    buildlib.write(os.path.join(folder, "workspace", "fixture.tar"), fixture_tar(fixtures[0]["tree"]))
    command = ["bash" if shell else "python", script, "{root}"]
    cfg = {"command": command, "timeout_s": 30, "fixtures": fixtures[1:]}
    buildlib.write(os.path.join(folder, "hidden", ".check", "ops.json"), buildlib.dump(cfg))
    env_note = "".join(f" `${k}` is set in its environment (the sample's: `{v}`)." for k, v in fixtures[0]["env"].items())
    description = (f"Write `{script}`, run as `{' '.join(command).replace('{root}', 'ROOT')}` where ROOT is a fake root "
                   f"folder (all paths below are inside it; ROOT is also in `$ROOT`).{env_note} {what}\n\n"
                   "`fixture.tar` holds a sample root: `mkdir -p /tmp/root && tar -xpf fixture.tar -C /tmp/root`. "
                   "The script is judged on other roots of the same shape (other names, numbers and dates), by the "
                   "files, modes, contents and links it leaves (compressed files by what they hold); changing anything "
                   "it should not scores 0 for that root. It runs twice, and the second run must succeed and change "
                   "nothing. " + ("Bash with coreutils, findutils, gzip, tar, sed and awk." if shell else
                                  "Python 3.11, standard library only."))
    doc = {
        "task_id": f"ops.{name}", "version": 0, "description": description,
        "environment_config": {"runtime": "shell" if shell else "python3.11", "dependencies": buildlib.PYTHON_DEPS},
        "workspace": {"root": "/app", "directory": "workspace"},
        "hidden_files": {"directory": "hidden", "files": buildlib.check_files(HERE, ["check_state.py", "fstate.py"])},
        "protected_paths": [".check/**", "fixture.tar"],
        "execution_steps": [{"action": "overwrite_file", "path": f"/app/{script}", "content": "<model_generated_code>"},
                            buildlib.reward_step("check_state.py")],
        "reward_logic": {"type": "composite", "rules": [{"metric": "report_score", "weight": 1.0, "aggregation": "last"}]},
        "limits": {"wall_time_s": 90, "memory_mb": 512},
        "max_rounds": 30,
        "reference_solution": {"directory": "solution"},
        "tags": ["ops", "shell" if shell else "python", "idempotence", "hidden-inputs"],
        "difficulty": difficulty, "expected_duration_s": 1.0,
        "metadata": {"generator": "tasks/ops/build.py", "seeds": list(SEEDS), "hidden_fixtures": len(fixtures) - 1},
    }
    buildlib.write(os.path.join(folder, "task.json"), buildlib.dump(doc))
    return f"{name}: {len(fixtures) - 1} hidden fixtures"


def main(argv):
    done = buildlib.maintenance(HERE, argv)
    if done is not None:
        return done
    for name in [a for a in argv if not a.startswith("-")] or TASKS:
        print(build(name), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
