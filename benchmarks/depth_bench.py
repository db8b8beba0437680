"""Cost against call depth: generated runners of growing depth (issue 8, "cost grows with
the code, never with the paths").

Each runner has an entry point and D levels of two-way call diamonds: level i
calls level i+1 through one of two methods chosen by a branch, both of which
call level i+2, ..., down to a method that builds the metadata.  The number of
paths doubles with each level (2**D); the code grows linearly.  Prints, per D,
the number of methods, paths and the analysis time (median of 3, in this
process, start-up excluded).

    python benchmarks/depth_bench.py [--depths 4 8 12 16 20]
"""

from __future__ import annotations

import argparse
import statistics
import time

from padlint.analysis import check_source
from padlint.profile import load_profile

HEAD = '''import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class Runner:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n)
        self.positions = torch.zeros(n)

    def execute_model(self, num_reqs, num_reqs_padded, flag):
        self.seq_lens[:num_reqs] = 1
        return self.level0(num_reqs, num_reqs_padded, flag)
'''


def runner(depth: int) -> str:
    out = [HEAD]
    for i in range(depth):
        nxt = f"self.level{i + 1}" if i + 1 < depth else "self.build"
        out.append(f'''
    def level{i}(self, num_reqs, num_reqs_padded, flag):
        if flag > {i}:
            return self.left{i}(num_reqs, num_reqs_padded, flag)
        return self.right{i}(num_reqs, num_reqs_padded, flag)

    def left{i}(self, num_reqs, num_reqs_padded, flag):
        self.positions[num_reqs:num_reqs_padded] = 0
        return {nxt}(num_reqs, num_reqs_padded, flag)

    def right{i}(self, num_reqs, num_reqs_padded, flag):
        self.positions[:num_reqs] = 1
        return {nxt}(num_reqs, num_reqs_padded, flag)
''')
    out.append('''
    def build(self, num_reqs, num_reqs_padded, flag):
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded],
                                       positions=self.positions[:num_reqs_padded])
''')
    return "".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depths", type=int, nargs="+", default=[4, 8, 12, 16, 20])
    args = ap.parse_args()
    profile = load_profile("vllm")
    print(f"{'depth':>5} {'methods':>8} {'paths':>10} {'seconds':>8} {'findings':>8}")
    for d in args.depths:
        src = runner(d)
        times = []
        for _ in range(3):
            t = time.perf_counter()
            findings = check_source(src, "runner.py", profile)
            times.append(time.perf_counter() - t)
        print(f"{d:>5} {3 * d + 3:>8} {2 ** d:>10} {statistics.median(times):>8.3f} {len(findings):>8}")


if __name__ == "__main__":
    main()
