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
