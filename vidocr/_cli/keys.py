"""``vidocr keys``: create, list and revoke the API keys of ``vidocr serve`` (stored hashed in the index)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from vidocr._cli.errors import exit_codes_epilog
from vidocr._cli.options import DB_DEFAULT_HELP, db_path

NAME = "keys"
CONFIG_SECTION = "serve"
CONFIG_BORROWED = {("keys",): {"db"}}


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "keys", help="create, list or revoke API keys for `vidocr serve`",
        description="API keys for `vidocr serve`, kept as SHA-256 hashes in the index: a key is shown once, when "
                    "it is created. Full keys may also queue jobs, edit cues and export; --read-only keys search "
                    "and read.",
        epilog=exit_codes_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", help="YAML file (its db is used)")
    p.add_argument("--db", help=f"search index holding the keys (default: {DB_DEFAULT_HELP})")
    p.add_argument("--json", action="store_true", help="print JSON")
    actions = p.add_subparsers(dest="keys_action", metavar="ACTION", required=True)
    c = actions.add_parser("create", help="make a key and print it (once)")
    c.add_argument("name", help="who or what uses it (shown in lists and request logs)")
    c.add_argument("--read-only", action="store_true", help="search and read only")
    actions.add_parser("list", help="list keys (never the keys themselves)")
    r = actions.add_parser("revoke", help="revoke a key at once")
    r.add_argument("key", metavar="ID|NAME|PREFIX", help="the key's id, name or prefix (see `keys list`)")
    return p


def run(args: argparse.Namespace) -> int:
    from vidocr.index.db import open_index
    from vidocr.serve.auth import create_key, list_keys, revoke_key

    conn = open_index(db_path(args), create=args.keys_action == "create")
    try:
        if args.keys_action == "create":
            row, key = create_key(conn, args.name, "read" if args.read_only else "full")
            if args.json:
                print(json.dumps({**row.to_dict(), "key": key}))
            else:
                print(key)
                print(f"key {row.id} ({row.name}, {row.scope}) created: it is shown only now; send it as "
                      "`Authorization: Bearer KEY`", file=sys.stderr)
        elif args.keys_action == "list":
            keys = list_keys(conn)
            if args.json:
                print(json.dumps([k.to_dict() for k in keys]))
            for k in keys if not args.json else []:
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(k.created_at))
                state = "revoked" if k.revoked_at else "active"
                print(f"{k.id:>4}  {k.prefix}…  {k.scope:<4}  {state:<7}  {when}  {k.name}")
        else:
            for k in revoke_key(conn, args.key):
                print(f"key {k.id} ({k.name}) revoked", file=sys.stderr)
    finally:
        conn.close()
    return 0
