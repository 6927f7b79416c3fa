"""Test and benchmark helpers, kept out of the wheel: synthetic videos with exact truth (:mod:`support.synth`),
subtitles burned in by libass with truth from what it drew (:mod:`support.libass`), accuracy metrics
(:mod:`support.metrics`) and tiny random-weight HunyuanOCR models (:mod:`support.hunyuan_random`).

The tests import them as ``support.*`` (pytest puts ``tests/`` on ``sys.path``); scripts under ``bench/`` and
``samples/`` insert ``tests/`` on ``sys.path`` first.
"""
