"""``capver report``: the static HTML page of a learned run.

The unit tests read the HTML string; the browser test opens the page of a real
(short) ``capver learn`` run in headless Chromium through selenium and Debian's
chromedriver, and checks what a person would see: a non-blank screenshot, no console
error, nothing fetched, and every capability of h∧ in the rendered text.  Where
Chromium is missing the browser test skips on a developer's machine but fails in CI
(``CI`` set), which installs it (.ci/run), so it cannot skip unnoticed forever.
"""

from __future__ import annotations

import html
import json
import os
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from capver.cli import main
from capver.core.setting_args import SettingArgs
from capver.io import dsl, run_file
from capver.io.html_report import CurvePoint, JsonFile, ReportInputs, curve_points, render
from capver.io.run_file import RunBudget, RunManifest
from capver.model.capability_model import intent_success
from tests.helpers import optional_tools

MANIFEST = RunManifest("lao", SettingArgs(domain="blocks"), "mcqs-s", RunBudget(max_steps=60))

# A name with every character HTML treats specially that the DSL allows in a name.
NASTY = "<b>bold&co</b>"
TOY = f"""(define (capability-model toy)
  (:predicates (p) (q))
  (:capability {json.dumps(NASTY)}
    :intent (p)
    (:rule :when (not (p)) :effects (probabilistic 1/3 (p) 2/3 (and))))
  (:capability both
    :intent (and (p) (q))
    (:rule :when (not (p)) :effects (p)))
  (:capability idle
    :intent (q)))
"""


def _toy_page(**kw: object) -> str:
    model = dsl.parse(TOY).model
    return render(ReportInputs(manifest=MANIFEST, h_and=model, **kw))  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------
# The HTML string
# ------------------------------------------------------------------------------------


def test_names_from_the_model_are_escaped() -> None:
    page = _toy_page()
    assert html.escape(NASTY) in page
    assert NASTY not in page and "<b>bold" not in page


def test_success_probability_is_exact_and_state_dependent_ranges_are_shown() -> None:
    model = dsl.parse(TOY).model
    nasty, both = model[NASTY], model["both"]
    assert intent_success(nasty.capability, nasty.rules[0]).low == Fraction(1, 3)
    # Adding p achieves p∧q only where q already holds: 0 or 1 depending on the state.
    s = intent_success(both.capability, both.rules[0])
    assert (s.low, s.high) == (0, 1)
    page = _toy_page()
    assert "1/3 (33%)" in page
    assert "0 to 1 (0%–100%)" in page and "depends on the state" in page
    assert "never tried" in page  # idle has no rules


def test_missing_parts_say_not_present() -> None:
    page = render(ReportInputs(manifest=MANIFEST, links={"h_and.capm": None, "report.txt": "report.txt"}))
    for name in ("certificate.json", "verdicts.json", "h_and.capm", "curve.csv"):
        assert f"{name}: not present" in page
    assert '<a href="report.txt">report.txt</a>' in page


def test_certificate_and_verdicts_are_rendered_escaped_with_badges() -> None:
    cert = JsonFile("certificate.json", {"status": "verified", "checks": [{"capability": "c<1>", "result": "unsat"}]})
    verdicts = JsonFile("verify.json", [{"property": "<script>x</script>", "verdict": "violated"}])
    page = _toy_page(certificate=cert, verdicts=verdicts)
    assert '<span class="badge good">verified</span>' in page
    assert '<span class="badge bad">violated</span>' in page
    assert "&lt;script&gt;x&lt;/script&gt;" in page and "<script>" not in page
    assert "c&lt;1&gt;" in page
    broken = _toy_page(certificate=JsonFile("certificate.json", error="line 1 column 2: Expecting value"))
    assert "certificate.json: present but unreadable" in broken


def test_long_conditions_are_cut_with_a_show_all_element(monkeypatch: pytest.MonkeyPatch) -> None:
    from capver.io import html_report

    assert "<details>" not in _toy_page()  # the toy's conditions are short: shown whole
    monkeypatch.setattr(html_report, "CONDITION_CHARS", 5)
    page = _toy_page()
    assert "<details><summary>show all" in page and '<code class="full">(not (p))</code>' in page


def test_curve_is_inline_svg_and_the_summary_is_the_last_checkpoint() -> None:
    curve = [CurvePoint("mcqs-s", 0, 0, 0, 0.0, 0.0), CurvePoint("mcqs-s", 60, 7, 41, 0.95, 0.4321)]
    page = render(ReportInputs(manifest=MANIFEST, curve=curve))
    assert "<svg" in page and "<img" not in page
    assert "0.432" in page and ">41<" in page
    for forbidden in ("http://", "https://", "<script", "@import", "url("):
        assert forbidden not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_curve_rows_are_checked() -> None:
    rows = [
        {
            "method": "m",
            "seed": "0",
            "steps": "10",
            "queries": "2",
            "transitions": "5",
            "agreement": "0.5",
            "coverage_agreement": "0.25",
            "exact_vd": "",
        }
    ]
    assert curve_points(rows, "c.csv") == [CurvePoint("m", 10, 2, 5, 0.5, 0.25, None)]
    with pytest.raises(Exception, match=r"c.csv: row 2: agreement 'high' is not a number"):
        curve_points([{**rows[0], "agreement": "high"}], "c.csv")


# ------------------------------------------------------------------------------------
# The command
# ------------------------------------------------------------------------------------


def test_a_directory_without_run_json_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("capver report: error: ") and "run.json" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "report.html").exists()


def test_an_existing_out_is_refused_unless_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_file.write(tmp_path, MANIFEST)
    out = tmp_path / "mine.html"
    out.write_text("not capver's")
    assert main(["report", str(tmp_path), "--out", str(out)]) == 2
    assert "--out" in capsys.readouterr().err and out.read_text() == "not capver's"
    assert main(["report", str(tmp_path), "--out", str(out), "--force"]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
    # The default page is capver's own: a second run replaces it (tests/commands/test_surprises.py
    # checks that a foreign report.html is still refused).
    assert main(["report", str(tmp_path)]) == 0
    assert main(["report", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.html", "report.html", "run.json"]


def test_a_run_with_only_its_manifest_renders_with_not_present(tmp_path: Path) -> None:
    run_file.write(tmp_path, MANIFEST)
    assert main(["report", str(tmp_path)]) == 0
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "h_and.capm: not present" in page and "dataset.jsonl: not present" in page


def test_links_are_relative_to_the_page(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "a run"
    run.mkdir(parents=True)
    run_file.write(run, MANIFEST)
    (run / "report.txt").write_text("words\n")
    (tmp_path / "pages").mkdir()
    out = tmp_path / "pages" / "r.html"
    assert main(["report", str(run), "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert 'href="../runs/a%20run/report.txt"' in page


def test_a_broken_curve_or_model_is_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_file.write(tmp_path, MANIFEST)
    (tmp_path / "curve.csv").write_text("method,seed,steps\nm,0,many\n")
    assert main(["report", str(tmp_path)]) == 2
    assert "curve.csv: row 2: steps 'many'" in capsys.readouterr().err
    (tmp_path / "curve.csv").unlink()
    (tmp_path / "h_and.capm").write_text("(define (capability-model x)")
    assert main(["report", str(tmp_path)]) == 2
    assert "h_and.capm:1:" in capsys.readouterr().err
    assert not (tmp_path / "report.html").exists()


# ------------------------------------------------------------------------------------
# A real run, and the page in a real browser
# ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def learned_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "run"
    argv = [
        "learn",
        "--agent",
        "lao",
        "--domain",
        "blocks",
        "--max-steps",
        "60",
        "--eval-sequences",
        "10",
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(argv) == 0
    assert main(["report", str(out)]) == 0
    return out


def _h_and_names(run: Path) -> list[str]:
    names = sorted(dsl.read(run / "h_and.capm").model)
    assert names  # a run that learned nothing would make the checks below vacuous
    return names


def test_the_page_of_a_learned_run_names_every_capability(learned_run: Path) -> None:
    page = (learned_run / "report.html").read_text(encoding="utf-8")
    for name in _h_and_names(learned_run):
        assert html.escape(name) in page
    for name in ("h_and.capm", "h_or.capm", "report.txt", "dataset.jsonl"):
        assert f'href="{name}"' in page


def _need(ok: bool, why: str) -> None:
    # CI installs Chromium (.ci/run): there a missing browser is a failure, not a skip,
    # unless the run hides it on purpose (CAPVER_HIDE_TOOLS, tests/helpers/optional_tools.py).
    if not ok:
        if os.environ.get("CI") and not optional_tools.names_from_environment():
            pytest.fail(f"{why} (CI must install it: see .ci/run)")
        pytest.skip(why)


def _chromium() -> tuple[str, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    _need(
        browser is not None and driver is not None,
        optional_tools.CHROMIUM_HINT,
    )
    assert browser is not None and driver is not None
    return browser, driver


def test_the_page_in_headless_chromium(learned_run: Path, tmp_path: Path) -> None:
    browser, driver_path = _chromium()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
    except ImportError:
        _need(False, "needs selenium (pip install -e '.[test]')")
        raise
    from PIL import Image

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1400",
        "--hide-scrollbars",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path: selenium then has no reason to download one.
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.get((learned_run / "report.html").resolve().as_uri())
        text = driver.find_element(By.TAG_NAME, "body").text
        for name in _h_and_names(learned_run):
            assert name in text, f"capability {name!r} not in the rendered text"
        assert "not present" in text  # no certificate or verdicts in a plain learn run
        # The curve is drawn, the page needs no horizontal scrolling, nothing was fetched.
        svg = driver.find_element(By.CSS_SELECTOR, "svg.curve")
        assert svg.size["width"] > 300 and svg.size["height"] > 150
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
        assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
        # "show all" opens the whole condition.
        summaries = driver.find_elements(By.CSS_SELECTOR, "details summary")
        if summaries:
            full = summaries[0].find_element(By.XPATH, "..").find_element(By.CSS_SELECTOR, "code.full")
            assert not full.is_displayed()
            driver.execute_script("arguments[0].scrollIntoView()", summaries[0])
            summaries[0].click()
            assert full.is_displayed()
            driver.execute_script("window.scrollTo(0, 0)")
        shot = tmp_path / "report.png"
        assert driver.save_screenshot(str(shot))
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == []
    finally:
        driver.quit()
    assert shot.stat().st_size > 20_000
    with Image.open(shot) as img:
        assert img.size[0] >= 1000
        colours = img.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 100, "the screenshot looks blank"
    # No wall-clock bound: it timed Chromium's start-up on a possibly busy machine; a
    # page that never loads fails on selenium's own page-load timeout.
