"""PyTorch's CUDA caching allocator's size rules (c10/cuda/CUDACachingAllocator.cpp: round_size,
get_allocation_size, should_split), the same from PyTorch 2.5 to 2.9 and with the allocator's
defaults (no expandable segments). Both engines' weights lines count its blocks: SGLang's free
memory after ``empty_cache`` (sglang.caching_allocator_reserved) and vLLM's
``memory_allocated`` (vllm.caching_allocator_allocated)."""

from __future__ import annotations

MIN_BLOCK = 512  # every request rounds up to 512 bytes
SMALL_SIZE = 1 << 20  # at most 1 MiB: the small pool
SMALL_BUFFER = 2 << 20  # the small pool's segments
LARGE_BUFFER = 20 << 20  # a request below MIN_LARGE_ALLOC gets a 20 MiB segment
MIN_LARGE_ALLOC = 10 << 20  # from 10 MiB a request gets its own segment ...
ROUND_LARGE = 2 << 20  # ... rounded up to 2 MiB


def round_size(size: int) -> int:
    """``round_size``: a request rounded up to a multiple of 512 bytes (at least 512)."""
    return max(MIN_BLOCK, -(-size // MIN_BLOCK) * MIN_BLOCK)


def is_small(rounded: int) -> bool:
    """A rounded request of at most 1 MiB is served from the small pool."""
    return rounded <= SMALL_SIZE


def allocation_size(rounded: int) -> int:
    """``get_allocation_size``: the segment ``cudaMalloc``'d for a rounded request that found no
    free block: 2 MiB (small pool), 20 MiB (below 10 MiB), else the request rounded up to 2 MiB."""
    if is_small(rounded):
        return SMALL_BUFFER
    if rounded < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return -(-rounded // ROUND_LARGE) * ROUND_LARGE


def should_split(rounded: int, remaining: int) -> bool:
    """``should_split``: a block's rest splits off when at least 512 bytes remain in the small
    pool, or more than 1 MiB in the large one."""
    return remaining >= MIN_BLOCK if is_small(rounded) else remaining > SMALL_SIZE
