"""The load test's protocol code (bench/concurrency.py) against a real `streamlit run`.

No timing is asserted: these check that a session speaks Streamlit's websocket protocol, that the
errors a reader would see are counted, and that the tool stays on this machine.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import shutil
import subprocess
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from bench import concurrency as bench

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def app_url():
    with bench.start_server(ROOT / "app.py", cwd=ROOT) as server:
        yield server.url


def _run(coroutine):
    """Run ``coroutine`` on a thread of its own: in a worker that also ran the browser tests,
    Playwright's sync API keeps an event loop running on the main thread, where asyncio.run fails."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def _run_once(url: str, page_name: str, query_string: str) -> bench.RunOutcome:
    session = await bench.StreamlitSession.connect(url)
    try:
        return await session.run(page_name, query_string)
    finally:
        await session.close()


def test_one_session_runs_two_pages_to_script_finished_without_errors(app_url):
    """A simulator page opened from a preset link, one control moved, then the glossary: no errors."""
    plans = bench.page_plans()
    simulator = next(p for p in plans if p.presets)
    glossary = next(p for p in plans if len(p.queries) > 1)
    rng = random.Random(0)

    async def tab() -> tuple[bench.RunOutcome, bench.Move, bench.RunOutcome, bench.RunOutcome]:
        session = await bench.StreamlitSession.connect(app_url)
        try:
            opened = await session.run(simulator.page_name, simulator.first_query(rng))
            move = simulator.move(rng, opened.bound_keys)
            moved = await session.run(simulator.page_name, move.query_string, history_navigation=True)
            term = await session.run(glossary.page_name, glossary.queries[1])
            return opened, move, moved, term
        finally:
            await session.close()

    opened, move, moved, term = _run(tab())
    assert [opened.errors, moved.errors, term.errors] == [[], [], []]
    assert move.key is not None, "a simulator page has a control to move"
    assert not bench.contradicted(move, moved.query_string)
    from content.schema import params_for

    control = params_for(simulator.url_path)[move.key]
    returned = dict(parse_qsl(moved.query_string or ""))
    if control.parse(move.value) != control.default:  # the address leaves defaults out
        assert returned.get(move.key) == move.value, (move, moved.query_string)


def test_a_page_name_the_app_does_not_have_is_an_error(app_url):
    outcome = _run(_run_once(app_url, "no-such-page", ""))
    assert any(e.startswith("page not found") for e in outcome.errors)


def test_an_exception_in_the_page_script_is_an_error(tmp_path):
    script = tmp_path / "failing_page.py"
    script.write_text(
        'import streamlit as st\nst.write("drawn first")\nraise RuntimeError("this page fails on purpose")\n'
    )
    with bench.start_server(script) as server:
        outcome = _run(_run_once(server.url, "", ""))
    assert outcome.errors == ["exception: RuntimeError: this page fails on purpose"]


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com:8501",
        "http://10.0.0.7:8501",
        "http://192.168.1.20",
        "http://0.0.0.0:8501",
        "https://127.0.0.1:8501",
        "ws://127.0.0.1:8501",
    ],
)
def test_urls_off_loopback_are_refused(url):
    with pytest.raises(ValueError, match="refusing"):
        bench.require_loopback(url)


def test_the_command_line_refuses_a_remote_url_without_connecting(capsys):
    assert bench.main(["--url", "http://example.com:8501", "--sessions", "1", "--duration", "1"]) == 2
    assert "not a loopback address" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("http://127.0.0.1:8501/", "http://127.0.0.1:8501"),
        ("http://localhost:8500", "http://localhost:8500"),
        ("http://[::1]:8501/app/", "http://[::1]:8501/app"),
    ],
)
def test_loopback_urls_are_accepted(url, base):
    assert bench.require_loopback(url) == base


def test_preset_values_are_written_as_the_app_reads_them():
    """ui.controls.multi_choice joins ids with commas; Streamlit's bound toggles read true/false."""
    assert bench.encode_param(["h100-sxm", "h200-sxm"]) == "h100-sxm,h200-sxm"
    assert bench.encode_param(True) == "true"
    assert bench.encode_param(8192) == "8192"


def test_a_move_is_a_preset_with_exactly_one_parameter_changed():
    plan = next(p for p in bench.page_plans() if p.presets)
    rng = random.Random(1)
    for _ in range(20):
        move = plan.move(rng)
        sent = dict(parse_qsl(move.query_string))
        params = dict(plan.presets)[sent.pop("preset")]
        changed = {k for k in params if sent[k] != params[k]}
        assert changed == ({move.key} if move.key else set())


def test_sessions_are_dealt_to_the_simulators_first():
    plans = bench.page_plans()
    order = bench.spread_order(plans)
    with_presets = [p for p in order if p.presets]
    assert order[: len(with_presets)] == with_presets
    assert sorted(p.url_path for p in order) == sorted(p.url_path for p in plans)
    assert [p.url_path for p in bench.spread_order(plans, ["glossary"])] == ["glossary"]
    with pytest.raises(ValueError, match="no page"):
        bench.spread_order(plans, ["no-such-page"])


def test_the_nginx_config_parses(tmp_path):
    """deploy/nginx.conf is valid for the nginx that .ci/run installs (Debian's)."""
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:
        pytest.fail("nginx not found: .ci/run installs it (apt-get install nginx)")
    (tmp_path / "logs").mkdir()
    result = subprocess.run(
        [nginx, "-t", "-q", "-e", "stderr", "-p", str(tmp_path), "-c", str(ROOT / "deploy" / "nginx.conf")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
