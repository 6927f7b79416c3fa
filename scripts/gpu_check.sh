#!/usr/bin/env bash
# GPU check of issue #3 on a lent device (torch + transformers there; no vLLM, no internet; ~5 min, < 8 min).
#
#   scripts/gpu_check.sh              # results in $OUT (the device tool's folder) or /tmp/vidocr-gpu-check
#   scripts/gpu_check.sh --prepare    # HERE, before: fill .whl/ with transformers 5.19 + deps (carry it along)
#   GPU_CHECK_SIZE=tiny GPU_CHECK_ARGS="--device cpu --dtype float32 --sizes 1,8 --seconds 0 --tokens 6 \
#       --crop 640x64 --max-model-len 1024 --eager" VLLM_CPU_KVCACHE_SPACE=1 scripts/gpu_check.sh   # CPU dry run
#
# Steps: report the machine; make HunYuanVL importable (transformers >= 5.13, from the carried .whl/ wheelhouse
# when the machine's is older); build a random-weight model with HunyuanOCR 1.0's real dimensions on the GPU;
# measure band crops/s through hunyuan-transformers at batch 1/8/32/128 (24-token answers, EOS ignored) with GPU
# memory; the same through hunyuan-vllm when vllm imports there (vidocr's vLLM plugin registered through a
# throwaway dist-info, as an installed vidocr would). Every step has a timeout; results: gpu_throughput.jsonl.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${PYTHON:-python3}

if [[ "${1:-}" == "--prepare" ]]; then
    # numpy / pillow / pyyaml are left out: the device has them with torch, and they are large.
    exec "$PY" -m pip download -q -d .whl transformers==5.19.0 --no-deps \
        huggingface_hub==2.4.0 tokenizers==0.23.3 safetensors==0.8.0 hf-xet==1.8.0 httpx2 httpcore2 h11 anyio \
        idna typer click rich shellingham pygments markdown-it-py mdurl annotated-doc filelock fsspec packaging \
        tqdm typing-extensions truststore pydantic pydantic-core annotated-types typing-inspection regex
fi

OUT=${OUT:-/tmp/vidocr-gpu-check}
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/vidocr-gpu.XXXX)
RESULTS="$OUT/gpu_throughput.jsonl"
: > "$RESULTS"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
START=$SECONDS
step() { echo "== [$((SECONDS - START))s] $*"; }

step "machine"
nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv 2>&1 | tee "$OUT/nvidia-smi.txt"
"$PY" - <<'EOF' 2>&1 | tee "$OUT/versions.txt"
import platform, torch
print("python", platform.python_version(), "torch", torch.__version__, "cuda", torch.version.cuda,
      "gpu", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)
try:
    import transformers; print("transformers", transformers.__version__)
except ImportError as e:
    print("transformers missing:", e)
try:
    import vllm; print("vllm", vllm.__version__)
except ImportError:
    print("vllm: not installed")
EOF

if ! "$PY" -c "import transformers.models.hunyuan_vl" 2>/dev/null; then
    step "transformers lacks HunYuanVL: installing the carried wheelhouse into a venv over the system packages"
    if ! ls .whl/transformers-*.whl >/dev/null 2>&1; then
        echo "no .whl/ wheelhouse: run 'scripts/gpu_check.sh --prepare' where PyPI is reachable and carry .whl" >&2
        exit 2
    fi
    "$PY" -m venv --system-site-packages "$WORK/venv"
    timeout 120 "$WORK/venv/bin/python" -m pip install -q --no-index --find-links .whl transformers==5.19.0 || exit 2
    PY="$WORK/venv/bin/python"
fi

SIZE=${GPU_CHECK_SIZE:-hunyuan-1.0}
read -r -a ARGS <<< "${GPU_CHECK_ARGS:-}"
MODEL=$WORK/$SIZE-random
step "build a random $SIZE model"
timeout 180 "$PY" -c "
import sys, torch
sys.path.insert(0, 'tests')  # support/: test helpers, kept out of the package
from support.hunyuan_random import build_model
gpu = torch.cuda.is_available()
build_model('$MODEL', '$SIZE', dtype='bfloat16' if gpu else 'float32', device='cuda' if gpu else 'cpu')" || exit 3

step "hunyuan-transformers: batch 1/8/32/128"
timeout 240 "$PY" bench/gpu_throughput.py --engine hf --model "$MODEL" --out "$RESULTS" "${ARGS[@]}" 2>&1 \
    | tee "$OUT/hf.log" \
    | grep -E '^\{|Error|error' || true

if "$PY" -c "import vllm" 2>/dev/null; then
    step "hunyuan-vllm: batch 1/8/32/128"
    SHIM=$WORK/shim/vidocr_vllm_plugin_shim-0.0.0.dist-info
    mkdir -p "$SHIM"
    printf 'Metadata-Version: 2.1\nName: vidocr-vllm-plugin-shim\nVersion: 0.0.0\n' > "$SHIM/METADATA"
    printf '[vllm.general_plugins]\nvidocr = vidocr.vllm_plugin:register\n' > "$SHIM/entry_points.txt"
    PYTHONPATH="$PYTHONPATH:$WORK/shim" VLLM_HOST_IP=127.0.0.1 timeout 300 "$PY" bench/gpu_throughput.py \
        --engine vllm --model "$MODEL" --out "$RESULTS" "${ARGS[@]}" 2>&1 | tee "$OUT/vllm.log" \
        | grep -E '^\{|Error|error' || true
    grep -q "applied hunyuan_vl_vision_split\|Loading plugin vidocr\|vidocr -> vidocr.vllm_plugin" "$OUT/vllm.log" \
        && echo "vidocr vLLM plugin seen in the log" || true
else
    step "vllm not importable here: vLLM part skipped"
fi

step "done"
grep '"summary"' "$RESULTS" || { echo "no measurements" >&2; exit 4; }
rm -rf "$WORK"
