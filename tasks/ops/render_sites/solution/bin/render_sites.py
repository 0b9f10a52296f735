"""Render $ROOT/etc/nginx/sites-available/<name>.conf for every site of sites.json from the template,
and make sites-enabled hold exactly the links of the enabled sites."""
import json
import os
import string
import sys

root = sys.argv[1]
nginx = os.path.join(root, "etc", "nginx")
with open(os.path.join(nginx, "sites.json")) as f:
    sites = json.load(f)
with open(os.path.join(nginx, "templates", "site.conf.tmpl")) as f:
    template = string.Template(f.read())
enabled = os.path.join(nginx, "sites-enabled")
wanted = set()
for site in sites:
    text = template.substitute(name=site["name"], server_name=" ".join(site["domains"]), port=site["port"],
                               root=f"/srv/www/{site['name']}")
    path = os.path.join(nginx, "sites-available", f"{site['name']}.conf")
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)
    if site.get("enabled", True):
        wanted.add(f"{site['name']}.conf")
for name in os.listdir(enabled):
    if os.path.islink(os.path.join(enabled, name)) and name not in wanted:
        os.remove(os.path.join(enabled, name))
for name in sorted(wanted):
    link = os.path.join(enabled, name)
    if not os.path.islink(link):
        os.symlink(f"../sites-available/{name}", link)
