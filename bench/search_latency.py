"""Search latency over the whole glossary: p50/p95/p99 per query, in milliseconds.

Run: python -m bench.search_latency [--repeat N]
Goal (issue 2): p95 <= 5 ms per query. Queries are the test ranking set, the seed
concepts, every term title, and deliberately misspelled variants of titles.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

import yaml

from glossary import load_terms
from glossary.search import SearchIndex

ROOT = Path(__file__).resolve().parent.parent


def queries() -> list[str]:
    data = ROOT / "tests" / "data"
    ranking = [q for q, _ in yaml.safe_load((data / "search_ranking.yaml").read_text())]
    seeds = [
        c for pairs in yaml.safe_load((data / "seed_concepts.yaml").read_text()).values() for c, _ in pairs
    ]
    titles = [t.title for t in load_terms()]
    rng = random.Random(0)

    def typo(text: str) -> str:
        if len(text) < 4:
            return text
        i = rng.randrange(1, len(text) - 1)
        return text[:i] + text[i + 1 :]

    return ranking + seeds + titles + [typo(t) for t in titles] + ["how does memory bandwidth limit decode"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    start = time.perf_counter()
    terms = load_terms()
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    index = SearchIndex(terms)
    build_s = time.perf_counter() - start

    all_queries = queries()
    for q in all_queries[:20]:  # warm-up
        index.search(q, 10)
    timings_ms = []
    for _ in range(args.repeat):
        for q in all_queries:
            t0 = time.perf_counter()
            index.search(q, 10)
            timings_ms.append((time.perf_counter() - t0) * 1e3)
    timings_ms.sort()

    def pct(p: float) -> float:
        return timings_ms[min(len(timings_ms) - 1, int(p / 100 * len(timings_ms)))]

    print(f"terms: {len(terms)}   load+validate: {load_s * 1e3:.0f} ms   index build: {build_s * 1e3:.0f} ms")
    print(f"queries: {len(all_queries)} distinct x {args.repeat} = {len(timings_ms)} timed")
    print(
        f"latency ms: p50 {pct(50):.2f}   p95 {pct(95):.2f}   p99 {pct(99):.2f}   "
        f"max {timings_ms[-1]:.2f}   mean {statistics.fmean(timings_ms):.2f}"
    )
    print("goal p95 <= 5 ms:", "met" if pct(95) <= 5 else "NOT met")


if __name__ == "__main__":
    main()
