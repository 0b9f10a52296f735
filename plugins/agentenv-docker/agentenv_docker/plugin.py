"""Registers the ``docker`` backend and the ``agentenv images`` / ``agentenv sandbox`` commands."""

from __future__ import annotations

import json

from agentenv import hookimpl


@hookimpl
def agentenv_add_sandbox_backends(registry) -> None:
    from .backend import DockerBackend

    registry.add_backend(DockerBackend)


def _images_configure(p) -> None:
    sub = p.add_subparsers(dest="images_command", required=True, metavar="{bootstrap,list,prune}")
    b = sub.add_parser("bootstrap", help="create the base image of a runtime offline (debootstrap + docker import)")
    b.add_argument("runtime", metavar="RUNTIME", help="python3, python3.11, shell or bash (or any, with --rootfs)")
    b.add_argument("--rootfs", metavar="DIR", help="import this root filesystem instead of running debootstrap")
    b.add_argument("--mirror", default="http://deb.debian.org/debian", help="Debian mirror for debootstrap")
    b.add_argument("--suite", default="bookworm", help="Debian release for debootstrap (default: bookworm)")
    b.add_argument("--force", action="store_true", help="rebuild even if the base image exists")
    ls = sub.add_parser("list", help="list agentenv's images (base images and dependency layers)")
    ls.add_argument("--json", action="store_true")
    pr = sub.add_parser("prune", help="remove dependency layers no container uses")
    pr.add_argument("--all", action="store_true", help="remove the base images too")


def _images_run(args) -> int:
    from . import images

    client = images.connect()
    if args.images_command == "bootstrap":
        if not args.force:
            try:
                image = client.images.get(images.base_tag(args.runtime))
                print(f"{images.base_tag(args.runtime)} exists ({image.id[:19]}); --force rebuilds it")
                return 0
            except Exception:
                pass
        images.bootstrap(client, args.runtime, rootfs=args.rootfs, mirror=args.mirror, suite=args.suite)
        return 0
    if args.images_command == "list":
        rows = images.list_images(client)
        if args.json:
            print(json.dumps(rows, indent=1))
            return 0
        print(f"{'TAG':<34} {'KIND':<5} {'SIZE MB':>8}  DEPENDENCIES")
        for r in rows:
            print(f"{', '.join(r['tags']) or r['id'][:19]:<34} {r['kind']:<5} {r['size_mb']:>8}  "
                  f"{' '.join(r['dependencies']) or '-'}")
        print(f"{len(rows)} image(s)")
        return 0
    removed = images.prune(client, include_base=args.all)
    for tag in removed:
        print(f"removed {tag}")
    print(f"{len(removed)} image(s) removed")
    return 0


def _sandbox_configure(p) -> None:
    sub = p.add_subparsers(dest="sandbox_command", required=True, metavar="{gc}")
    gc = sub.add_parser("gc", help="remove containers left by dead agentenv processes")
    gc.add_argument("--all", action="store_true",
                    help="remove every agentenv container of other processes, alive or not")


def _sandbox_run(args) -> int:
    from . import images
    from .backend import reap_orphans

    client = images.connect()
    removed = reap_orphans(client, everything=args.all)
    for name in removed:
        print(f"removed {name}")
    print(f"{len(removed)} container(s) removed")
    return 0


@hookimpl
def agentenv_add_cli_commands(registry) -> None:
    registry.add_command("images", "docker images of the task runtimes: bootstrap, list, prune",
                         _images_configure, _images_run)
    registry.add_command("sandbox", "docker sandboxes: gc removes those left by dead processes",
                         _sandbox_configure, _sandbox_run)
