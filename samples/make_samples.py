"""Render the sample videos and their truth SRTs: ``python samples/make_samples.py [name ...]`` from the repo root.

Each ``<name>.srt`` holds the frame-exact truth of ``<name>.<container>``, as ``bench/accuracy.py`` expects.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # support/: test helpers, kept out of the package

from support.synth import SynthCue as Q  # noqa: E402
from support.synth import SynthSpec, render_video, write_srt  # noqa: E402

HERE = Path(__file__).parent

SAMPLES: dict[str, SynthSpec] = {
    # Scene cuts every 3 s land inside the 2nd and 5th cues; the 2nd and 3rd cues touch with no gap.
    "zh": SynthSpec(
        duration=12.0,
        seed=11,
        cues=(
            Q(0.6, 2.2, "今天天气很好，我们出去走走吧"),
            Q(2.6, 4.3, "你看那边的山上有很多人"),
            Q(4.3, 5.5, "他们在做什么呢？"),
            Q(6.2, 8.4, "我也不知道，过去看看就明白了"),
            Q(8.8, 10.6, "走吧，天黑之前一定要回家"),
            Q(11.0, 11.9, "好的"),
        ),
    ),
    "en": SynthSpec(
        duration=10.0,
        seed=12,
        cues=(
            Q(0.4, 2.1, "I don't think that's a good idea."),
            Q(2.5, 4.0, "Wait, what did you just say?"),
            Q(4.4, 6.3, "It's 7:30 already, and we're late!"),
            Q(6.8, 8.2, "Okay, okay. Let's go, then."),
            Q(8.5, 9.8, 'She said: "Never again."', colour="yellow"),
        ),
    ),
    "bilingual": SynthSpec(
        duration=10.0,
        seed=13,
        cues=(
            Q(0.5, 2.4, "你好，很高兴认识你\nNice to meet you."),
            Q(2.8, 4.6, "你从哪里来？\nWhere are you from?"),
            Q(4.6, 6.9, "我来自北京，你呢？\nI'm from Beijing. And you?"),
            Q(7.4, 9.6, "欢迎你来这里\nWelcome, make yourself at home."),
        ),
    ),
    # A 0.36 s and a 0.3 s cue, and a last cue still on screen at the last frame.
    "short_cue": SynthSpec(
        duration=8.0,
        seed=14,
        cues=(
            Q(0.5, 2.0, "第一句比较长一点"),
            Q(2.4, 2.76, "快"),
            Q(3.2, 3.5, "Hi!"),
            Q(4.0, 6.0, "然后是正常的一句"),
            Q(6.5, 8.0, "最后一句一直到结尾"),
        ),
    ),
    # The same line twice around a 0.3 s blank, then a line followed at once by a longer version of itself.
    "repeat_gap": SynthSpec(
        duration=10.0,
        seed=15,
        cues=(
            Q(0.5, 2.5, "我知道了"),
            Q(2.8, 4.5, "我知道了"),
            Q(5.0, 6.5, "你听我说"),
            Q(6.5, 8.5, "你听我说完"),
            Q(9.0, 9.8, "好"),
        ),
    ),
    # Intervals of 1/30, 1/24 and 1/15 s with dropped frames, stored in MPEG-TS from 1.4 s.
    "vfr_offset": SynthSpec(
        duration=8.0,
        seed=16,
        vfr=True,
        container="ts",
        start_offset=1.4,
        cues=(
            Q(0.5, 2.0, "可变帧率的视频"),
            Q(2.5, 4.4, "Variable frame rate video"),
            Q(4.8, 6.6, "时间戳必须准确"),
            Q(7.0, 7.9, "结束"),
        ),
    ),
    "demo": SynthSpec(
        duration=10.0,
        seed=17,
        cues=(
            Q(0.4, 2.4, "vidocr 从视频里提取硬字幕"),
            Q(2.8, 4.8, "Frame-accurate timing, even for VFR video."),
            Q(5.2, 7.2, "中文、English，混合也可以"),
            Q(7.6, 9.6, "一行中文\nAnd an English line below"),
        ),
    ),
}


def main(names: list[str]) -> int:
    for name in names or list(SAMPLES):
        spec = SAMPLES[name]
        video = HERE / f"{name}.{spec.container}"
        started = time.perf_counter()
        truth = render_video(spec, video)
        write_srt(truth, HERE / f"{name}.srt")
        took = time.perf_counter() - started
        print(f"{video.name:16} {video.stat().st_size / 1024:6.0f} KiB  {len(truth)} cues  {took:5.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
