"""Speed of a Korean 720p video read with Tesseract (``--lang ko``) beside its decode floor and the same video in
Chinese/English read by PP-OCR, in one run (ratios: the machine is shared).

    python bench/lang_speed.py                 # 60 s, 720p, 25 fps, libass subtitles, best of 3
    python bench/lang_speed.py --seconds 120 --rounds 5 --workers 2
    python bench/lang_speed.py --profile       # where the OCR time goes (per stage, per kind of read)

Two videos are drawn by libass (FFmpeg's ``ass`` filter, tests/support/libass.py) over the same generated pictures
(four scenes: pan, zoom, shake, still) with the same cue times (film-like dialogue: a cue every ~3 s lasting
1.2-2.6 s): Korean lines (NanumGothic) and bench/speed.py's Chinese and English lines (WenQuanYi Zen Hei), 43 px
text with a black outline. Measured in one process, cases interleaved, best of ``--rounds``: the decode floor (PyAV,
every frame decoded, nothing converted, the fastest threading; bench/speed.py's), the pipeline without OCR (an engine
that reads nothing: decoding, zone finding, masks, change detection), and ``vidocr.extract`` with one
engine built before (warm, as a batch or the daemon reads) and cold (``extract`` building its engine, as one
``vidocr extract FILE`` does): ``--lang ko``, ``auto`` on the Korean video, and the Chinese/English video (auto,
PP-OCR). Printed: real-time factor (video seconds per wall second), over the floor, and as a share of the
Chinese/English video's; CPU seconds; the CER of the Korean cues against what libass drew.

``--profile`` counts, for the ``--lang ko`` run: reads the engine got (full reads, re-reads, re-reads confirmed
from the boxes without detection), PP-OCR detector calls, Tesseract line reads (and how many a re-read asked for),
seconds inside the detector, binarisation (glyph_image) and Tesseract's recognise (summed over OCR threads).
Needs Debian's ffmpeg (libass), fonts-nanum, fonts-wqy-zenhei, tesseract-ocr-kor and vidocr[tesseract].
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # support/: test helpers, kept out of the package
sys.path.insert(0, str(ROOT / "bench"))

from multilingual import SCRIPTS, score  # noqa: E402
from speed import LINES as ZH_EN  # noqa: E402
from speed import NoRead, decode_floor  # noqa: E402
from support import libass  # noqa: E402
from support.libass import GENERATED, Clip, Event, Scene, Style  # noqa: E402

import vidocr  # noqa: E402
from vidocr.engines import EngineOptions, create_engine  # noqa: E402

FPS = 25


def dialogue_frames(seconds: float) -> list[tuple[int, int]]:
    """(first, last) frames of film-like dialogue cues: one every ~3 s lasting 1.2-2.6 s (bench/speed.py's)."""
    out, t, i = [], 0.6, 0
    while t + 1.2 < seconds:
        length = 1.2 + (i * 0.7) % 1.4
        out.append((round(t * FPS), round(min(t + length, seconds - 0.1) * FPS)))
        t += length + 0.4 + (i % 3) * 0.3
        i += 1
    return out


def clip(name: str, font: str, lines: list[str], seconds: float) -> Clip:
    frames = round(seconds * FPS)
    events = [Event(a, b, lines[i % len(lines)]) for i, (a, b) in enumerate(dialogue_frames(seconds))]
    quarter = frames // 4
    scenes = [Scene(k * quarter, f"{GENERATED}{31 + k}", motion)
              for k, motion in enumerate(("pan", "zoom", "shake", "still"))]
    return Clip(name=name, half="bench", seed=7, width=1280, height=720, fps=Fraction(FPS), frames=frames,
                style=Style(font, 0.06, outline=4.0), events=events, scenes=scenes, crf=23)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Profile:
    """Counters and seconds of the OCR work of a run, by wrapping the engine's steps (thread-safe)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = defaultdict(int)
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self._lock = threading.Lock()

    def add(self, key: str, seconds: float, cpu: float, count: int = 1) -> None:
        with self._lock:
            self.counts[key] += count
            self.seconds[key] += seconds
            self.cpu[key] += cpu

    @contextmanager
    def wrapped(self) -> Iterator[None]:
        from vidocr.engines import ppocr, rapid, tesseract

        patches: list[tuple[Any, str, Any]] = []

        def wrap(owner: Any, attr: str, key: str, count: Callable[..., int] | None = None) -> None:
            original = getattr(owner, attr)
            patches.append((owner, attr, original))

            def timed(*args: Any, **kwargs: Any) -> Any:
                t0, c0 = time.perf_counter(), time.thread_time()  # each step runs on one thread
                try:
                    return original(*args, **kwargs)
                finally:
                    self.add(key, time.perf_counter() - t0, time.thread_time() - c0,
                             count(*args, **kwargs) if count else 1)

            setattr(owner, attr, timed)

        wrap(ppocr.PpOcr, "detect", "detector calls")
        wrap(ppocr.PpOcr, "recognize", "PP-OCR recognise calls")
        wrap(tesseract, "glyph_image", "binarise (glyph_image)")
        wrap(tesseract.TesseractReader, "read_glyphs", "Tesseract recognise")
        wrap(rapid.RapidOcrEngine, "recognize", "engine full reads", lambda _s, images, *a, **k: len(images))
        wrap(rapid.RapidOcrEngine, "reread", "engine re-reads", lambda _s, images, *a, **k: len(images))
        wrap(rapid, "read_band_tesseract", "band read: detect + Tesseract")
        wrap(rapid, "reread_band", "re-read from boxes (no detection)")
        try:
            yield
        finally:
            for owner, attr, original in reversed(patches):
                setattr(owner, attr, original)


def run(path: Path, lang: tuple[str, ...], engine: Any | None) -> tuple[float, float, list[vidocr.Cue], Any]:
    t0, c0 = time.perf_counter(), _cpu()
    cues, info = vidocr.extract(path, vidocr.ExtractOptions(lang=lang), engine=engine)
    out = list(cues)
    return time.perf_counter() - t0, _cpu() - c0, out, info


def cer(cues: list[vidocr.Cue], truth: list[libass.TruthCue]) -> float:
    errors, chars, _ = score(cues, truth)
    return errors / max(1, chars)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=0, help="OCR threads (0: one per core)")
    ap.add_argument("--profile", action="store_true", help="also where the --lang ko run's OCR time goes")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold runs (engine built by extract)")
    ap.add_argument("--keep", type=Path, help="render into (and reuse) this folder")
    args = ap.parse_args()
    if not libass.have_ffmpeg_ass():
        print("needs ffmpeg with libass (Debian's ffmpeg)")
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        videos = {}
        for key, font, lines in (("ko", "NanumGothic", SCRIPTS["ko"][1]), ("zh/en", "WenQuanYi Zen Hei", ZH_EN)):
            c = clip(f"speed_{key.replace('/', '_')}_{int(args.seconds)}s", font, lines, args.seconds)
            video = folder / f"{c.name}.mp4"
            if args.keep and video.exists():
                truth = libass.truth(c, [Fraction(f, FPS) for f in range(c.frames + 1)])
            else:
                truth = libass.render(c, folder).cues
            videos[key] = (video, truth)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        print(f"{args.seconds:.0f} s 720p {FPS} fps libass videos, {len(videos['ko'][1])} cues; {cores} cores, "
              f"load average {os.getloadavg()[0]:.1f} at start")
        cases = [("ko --lang ko", "ko", ("ko",)), ("ko auto", "ko", ()), ("zh/en (PP-OCR)", "zh/en", ())]
        engines = {name: create_engine("rapidocr", EngineOptions(workers=args.workers, lang=lang))
                   for name, _, lang in cases}
        floors: dict[str, list[float]] = defaultdict(list)
        analysis: dict[str, list[tuple[float, float]]] = defaultdict(list)
        walls: dict[str, list[tuple[float, float]]] = defaultdict(list)
        colds: dict[str, list[float]] = defaultdict(list)
        quality: dict[str, str] = {}
        try:
            for r in range(args.rounds):
                for key, (video, _) in videos.items():
                    floors[key].append(decode_floor(video)[0])
                    analysis[key].append(run(video, (), NoRead())[:2])
                for name, key, lang in cases:
                    video, truth = videos[key]
                    wall, cpu, cues, info = run(video, lang, engines[name])
                    walls[name].append((wall, cpu))
                    quality[name] = (f"{len(cues)} cues, CER {cer(cues, truth):.1%}, reads "
                                     f"{info.stats.ocr_calls} ({info.stats.ocr_confirmed} confirmed from boxes)")
                    if not args.no_cold:
                        colds[name].append(run(video, lang, None)[0])
                    cold = "" if args.no_cold else f", cold {args.seconds / colds[name][-1]:5.1f}x"
                    print(f"round {r + 1} {name:15}: warm {args.seconds / wall:5.1f}x real time "
                          f"(CPU {cpu:5.1f} s){cold}; {quality[name]}", flush=True)
            base = min(w for w, _ in walls["zh/en (PP-OCR)"])
            base_cpu = min(c for _, c in walls["zh/en (PP-OCR)"])
            print(f"\nbest of {args.rounds} (load average {os.getloadavg()[0]:.1f} at the end):")
            for key in videos:
                floor = min(floors[key])
                bare, bare_cpu = min(w for w, _ in analysis[key]), min(c for _, c in analysis[key])
                print(f"  {key:5} decode floor: {floor:5.2f} s ({args.seconds / floor:5.1f}x); pipeline without OCR "
                      f"(an engine that reads nothing): {bare:5.2f} s ({args.seconds / bare:5.1f}x, "
                      f"{bare / floor:4.2f}x the floor), CPU {bare_cpu:5.1f} s")
            for name, key, _ in cases:
                wall, cpu = min(w for w, _ in walls[name]), min(c for _, c in walls[name])
                floor = min(floors[key])
                cold = f", cold {args.seconds / min(colds[name]):5.1f}x" if colds[name] else ""
                bare_cpu = min(c for _, c in analysis[key])
                print(f"  {name:15}: warm {args.seconds / wall:5.1f}x real time{cold}, {wall / floor:4.2f}x the "
                      f"floor, {base / wall:4.2f}x zh/en's speed; CPU {cpu:5.1f} s ({cpu / base_cpu:4.2f}x zh/en's, "
                      f"{cpu - bare_cpu:4.1f} s more than without OCR); {quality[name]}")
            if args.profile:
                profile = Profile()
                with profile.wrapped():
                    wall, cpu, _, info = run(videos["ko"][0], ("ko",), engines["ko --lang ko"])
                print(f"\nprofile of one --lang ko run ({args.seconds / wall:.1f}x real time, CPU {cpu:.1f} s, "
                      f"stage times {info.stats.times.as_dict()}):")
                for key in sorted(profile.counts, key=lambda k: -profile.cpu[k]):
                    n, s, c = profile.counts[key], profile.seconds[key], profile.cpu[key]
                    print(f"  {key:36} {n:4} calls  wall {s:6.2f} s  CPU {c:6.2f} s  ({1000 * c / max(1, n):5.1f} ms "
                          "CPU each)")
        finally:
            for engine in engines.values():
                engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
