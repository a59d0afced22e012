"""Project set-up: the theme palette, the page registry and the requirement files agree."""

import tomllib
from pathlib import Path

from charts.palette import OKABE_ITO
from content.pages import PAGES

ROOT = Path(__file__).resolve().parent.parent


def test_theme_has_light_and_dark_with_the_okabe_ito_palette():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert list(config["theme"]["light"]["chartCategoricalColors"]) == list(OKABE_ITO)
    dark = config["theme"]["dark"]["chartCategoricalColors"]
    assert set(dark) - {"#FFFFFF"} == set(OKABE_ITO) - {"#000000"}


def test_every_registered_page_exists_and_has_no_main_guard():
    for info in PAGES:
        text = info.file.read_text()
        assert "__main__" not in text, info.path
        assert "import torch" not in text and "import pynvml" not in text, info.path
    assert sum(p.default for p in PAGES) == 1
    assert len({p.url_path for p in PAGES}) == len(PAGES)


def test_cloud_requirements_leave_out_torch_and_nvml():
    lines = [
        ln.split("#")[0].strip().casefold() for ln in (ROOT / "requirements.txt").read_text().splitlines()
    ]
    names = {ln.split("=")[0].split(">")[0].split("<")[0] for ln in lines if ln}
    assert names.isdisjoint({"torch", "nvidia-ml-py", "pynvml"})
    measure = (ROOT / "requirements-measure.txt").read_text()
    assert "torch==" in measure, "torch must be pinned: an unpinned torch pulls a multi-GB CUDA build"
