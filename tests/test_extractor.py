"""The Extractor that the CLI, the index builder and the watch daemon share: one engine for every video."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import vidocr.extractor
from vidocr import ConfigError, ExtractOptions, Extractor, InputError, extract
from vidocr.engines import BackgroundEngine


class CountingEngine(BackgroundEngine):
    built: list[CountingEngine] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.closes = 0
        CountingEngine.built.append(self)

    def close(self) -> None:
        self.closes += 1
        super().close()


def test_one_engine_for_every_video_built_at_the_first_file_and_freed_by_close(
    samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    CountingEngine.built = []
    monkeypatch.setattr(vidocr.extractor, "BackgroundEngine", CountingEngine)
    options = ExtractOptions(zones="bottom", end=4.5)
    with Extractor(options) as extractor:
        with pytest.raises(InputError):
            extractor(tmp_path / "missing.mp4")
        assert CountingEngine.built == []  # nothing to read yet: no model loaded
        texts = []
        for name in ("demo.mp4", "en.mp4"):
            cues, info = extractor(samples / name)
            texts.append([c.text for c in cues])
            assert info.path.endswith(name)
        assert len(CountingEngine.built) == 1 and CountingEngine.built[0].closes == 0
    assert CountingEngine.built[0].closes == 1
    monkeypatch.undo()
    alone = [[c.text for c in extract(samples / name, options)[0]] for name in ("demo.mp4", "en.mp4")]
    assert texts == alone and texts[0] and "Wait, what did you just say?" in texts[1]
    monkeypatch.setattr(vidocr.extractor, "BackgroundEngine", CountingEngine)
    list(extractor(samples / "en.mp4")[0])  # usable again after close: a new engine (the daemon drops a broken one)
    assert len(CountingEngine.built) == 2
    extractor.close()


def test_the_zone_finders_ocr_is_built_once_for_every_video_and_freed_by_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two zones (top and bottom): the finder reads the second one with OCR before keeping it.
    from support.synth import SynthCue, SynthSpec, render_video

    import vidocr.engines.rapid

    cues = (SynthCue(0.3, 2.7, "Translator's note up here", position="top"), SynthCue(0.5, 2.5, "下面是对话第一句"),
            SynthCue(3.2, 5.7, "注释文字在上面", position="top"), SynthCue(3.4, 5.5, "And the second line"))
    path = tmp_path / "two.mp4"
    render_video(SynthSpec(width=960, height=540, duration=6.0, cues=cues), path)
    real, built = vidocr.engines.rapid.build_ocr, []

    def counting(options: Any = None) -> Any:
        built.append("zones" if options is None else "engine")
        return real(options)

    monkeypatch.setattr(vidocr.engines.rapid, "build_ocr", counting)
    with Extractor(ExtractOptions(engine_options=vidocr.engines.EngineOptions(workers=1))) as extractor:
        for _ in range(2):
            got, info = extractor(path)
            assert len(list(got)) == 4
            assert info.stats.zones is not None and sorted(z.name for z in info.stats.zones) == ["bottom", "top"]
        reader = extractor._zone_reader
        assert reader._ocr is not None
    assert sorted(built) == ["engine", "zones"]  # not one zone reader per video
    assert reader._ocr is None  # freed with the engine


def test_engine_settings_are_checked_by_the_library_too() -> None:
    from vidocr.engines import EngineOptions, create_engine

    with pytest.raises(ConfigError, match=r"^engine 'rapidocr' has no setting 'retires'; valid keys: ppocr$"):
        create_engine("rapidocr", EngineOptions(extra={"retires": 2}))
    with pytest.raises(ConfigError, match="valid keys: api_key, backoff, base_url, base_urls, batch_size"):
        BackgroundEngine("openai", EngineOptions(extra={"base_urls": "http://127.0.0.1:9", "retires": 2}))


def test_import_vidocr_is_light_and_every_public_name_resolves() -> None:
    import subprocess
    import sys

    script = (
        "import sys, vidocr\n"
        "heavy = sorted(m for m in ('av', 'cv2', 'onnxruntime', 'numpy') if m in sys.modules)\n"
        "missing = [n for n in vidocr.__all__ if getattr(vidocr, n, None) is None]\n"
        "print(heavy, missing, vidocr.Extractor.__module__, vidocr.extract.__module__)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.stdout.split("\n")[0] == "[] [] vidocr.extractor vidocr.pipeline", proc.stdout + proc.stderr
