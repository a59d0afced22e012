"""The page list: one registry that app.py, the home page map and the tests all read."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PageInfo:
    """A page in the navigation. ``path`` is relative to the repository root."""

    path: str
    title: str
    icon: str
    url_path: str
    section: str
    blurb: str
    default: bool = False
    views: tuple[str, ...] = ()  # simulator views a lesson step may embed (ui/views/<page>.py)

    @property
    def file(self) -> Path:
        return ROOT / self.path


PAGES: tuple[PageInfo, ...] = (
    PageInfo(
        path="app_pages/home.py",
        title="Home",
        icon=":material/home:",
        url_path="home",
        section="",
        blurb="What this guide is, who it is for, and where to start.",
        default=True,
    ),
    PageInfo(
        path="app_pages/lessons.py",
        title="Lessons",
        icon=":material/school:",
        url_path="lessons",
        section="Learn",
        blurb="A course in twelve lessons: predict, then let the simulator answer; every quiz number is "
        "computed by the models.",
    ),
    PageInfo(
        path="app_pages/live_class.py",
        title="Live class",
        icon=":material/how_to_vote:",
        url_path="class",
        section="Learn",
        blurb="Run a lesson's questions with a room: students vote from phones, revote, then the "
        "simulator's answer is revealed.",
    ),
    PageInfo(
        path="app_pages/glossary.py",
        title="Glossary",
        icon=":material/menu_book:",
        url_path="glossary",
        section="Learn",
        blurb="Every term from SM to KV cache: searchable, sourced, with computed numbers.",
    ),
    PageInfo(
        path="app_pages/will_it_fit.py",
        title="Will it fit?",
        icon=":material/calculate:",
        url_path="will-it-fit",
        section="Simulators",
        blurb="Memory per GPU and speed bounds for any Hugging Face model: inference, fine-tuning, QLoRA.",
        views=("memory", "decode-time", "cache-by-kind", "vllm-ledger"),
    ),
    PageInfo(
        path="app_pages/roofline.py",
        title="Roofline",
        icon=":material/show_chart:",
        url_path="roofline",
        section="Simulators",
        blurb="Compute- or memory-bound? Datasheet roofs, real operations as points, decode vs batch size.",
        views=("roofline", "decode-batch"),
    ),
    PageInfo(
        path="app_pages/quantization.py",
        title="Quantization",
        icon=":material/grain:",
        url_path="quantization",
        section="Simulators",
        blurb="Quantize a real tensor in every format: the grid, the error, SQNR per bit, outliers.",
        views=("one-format", "all-formats", "outliers", "matmul", "model-size"),
    ),
    PageInfo(
        path="app_pages/parallelism.py",
        title="Parallelism",
        icon=":material/grid_view:",
        url_path="parallelism",
        section="Simulators",
        blurb="Data, tensor and pipeline parallelism with ZeRO: memory per GPU, traffic, the bubble.",
        views=("grid", "memory", "communication", "pipeline"),
    ),
    PageInfo(
        path="app_pages/memory_hierarchy.py",
        title="Memory hierarchy",
        icon=":material/stacks:",
        url_path="memory-hierarchy",
        section="Simulators",
        blurb="Latency and bandwidth from registers to disk, Little's law, and the cost of offloading.",
        views=("ladder", "transfer", "littles", "placement"),
    ),
    PageInfo(
        path="app_pages/your_hardware.py",
        title="Your hardware",
        icon=":material/speed:",
        url_path="your-hardware",
        section="Measure",
        blurb="Measure bandwidth, matmul, launch overhead and all-reduce here, beside the predictions.",
        views=("sample", "browser"),
    ),
)

GLOSSARY = next(p for p in PAGES if p.url_path == "glossary")
HOME = next(p for p in PAGES if p.default)


def term_href(term_id: str) -> str:
    """Relative URL of a term on the glossary page (works under any base path)."""
    return f"{GLOSSARY.url_path}?term={term_id}"
