"""``vidocr jobs``: list the watch daemon's jobs (and, after ``watch --ray``, each Ray node's throughput), or queue
failed ones again."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from vidocr._cli.console import shown_path
from vidocr._cli.errors import exit_codes_epilog
from vidocr._cli.options import DB_DEFAULT_HELP, jobs_db_path
from vidocr.daemon.choice import EngineChoice
from vidocr.errors import ConfigError

NAME = "jobs"
#: ``jobs --config`` takes the daemon's config file and reads only where its index and queue are.
CONFIG_SECTION = "watch"
CONFIG_BORROWED = {("jobs",): {"db", "jobs_db"}}
STATES = ("pending", "running", "done", "failed")
#: Done videos per Ray node (``watch --ray``): hours of video, hours the node was busy, throughput, real time.
NODES_HEADER = "ray node             id        videos  video h   busy h  videos/h  speed"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    raw = argparse.RawDescriptionHelpFormatter
    j: argparse.ArgumentParser = sub.add_parser(
        "jobs", help="list the watch daemon's jobs, or queue failed ones again",
        epilog=exit_codes_epilog(), formatter_class=raw,
    )
    j.add_argument("--config", help="the daemon's YAML config (its db / jobs-db are used)")
    j.add_argument("--db", help=f"search index the daemon keeps (its queue is <db>.jobs; default: {DB_DEFAULT_HELP})")
    j.add_argument("--jobs-db", help="job queue file")
    j.add_argument("--state", choices=STATES, help="only jobs in this state")
    j.add_argument("--limit", type=int, help="show at most this many jobs")
    group = j.add_mutually_exclusive_group()
    group.add_argument("--retry", type=int, metavar="ID", help="queue this failed (or waiting) job again now")
    group.add_argument("--retry-failed", action="store_true", help="queue every failed job again now")
    j.add_argument("--json", action="store_true", help="print JSON")
    return j


def run(args: argparse.Namespace) -> int:
    from vidocr.cluster.nodes import node_throughput
    from vidocr.daemon.jobs import JobQueue

    queue = JobQueue(jobs_db_path(args), create=False)
    try:
        if args.retry is not None or args.retry_failed:
            count = queue.retry(args.retry) if args.retry is not None else queue.retry()
            if args.retry is not None and not count:
                raise ConfigError(f"no failed or waiting job with id {args.retry}")
            print(f"{count} job(s) queued again", file=sys.stderr)
            return 0
        jobs = queue.jobs(args.state, args.limit)
        counts = queue.counts()
        nodes = node_throughput(queue.conn)
    finally:
        queue.close()
    if args.json:
        doc = {"counts": counts, "jobs": [j.to_dict() for j in jobs], "nodes": [n.to_dict() for n in nodes]}
        print(json.dumps(doc, ensure_ascii=False, default=str))
        return 0
    for job in jobs:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(job.updated_at))
        extra = f"  {job.cues} cues" if job.state == "done" and job.cues is not None else ""
        if job.state == "pending" and job.next_at > time.time():
            extra = f"  retry after {time.strftime('%H:%M:%S', time.localtime(job.next_at))}"
        print(f"{job.id:>6}  {job.state:<8} {job.attempts:>2} tries  {when}  {shown_path(job.path)}{extra}"
              f"{_engine(job.engine)}")
        if job.error:
            print(f"        {job.error}")
    if nodes:
        print(NODES_HEADER)
        for n in nodes:
            print(f"{n.host[:20]:<20} {n.node[:8]:<8} {n.videos:>7} {n.video_s / 3600:>8.2f} {n.busy_s / 3600:>8.2f}"
                  f" {n.videos_per_hour:>9.1f} {n.realtime:>7.1f}x")
    print(", ".join(f"{n} {s}" for s, n in counts.items()), file=sys.stderr)
    return 0


def _engine(key: str) -> str:
    """A job's engine choice as the list shows it ("  [engine openai hunyuanocr-1.5]"); nothing for the daemon's
    own options, the key itself when it cannot be read."""
    if not key:
        return ""
    try:
        choice = EngineChoice.from_key(key)
    except ConfigError:
        return f"  [engine {key[:60]}]"
    return f"  [engine {choice.label()}]" if choice is not None else ""
