"""bench/lib/bench.py writes an SVG picture beside each full run's summary: per scenario,
each server's req/s and CPU per request as bars (the median) with whiskers over the rounds,
scaled within the row; a server without figures reads as its status, not as a zero bar."""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

from test_bench_compare import BENCH_PY, measurement, write_meta

SVG = "{http://www.w3.org/2000/svg}"


def run_summarise(tmp_path, rounds, na=()):
    raw = tmp_path / "raw.jsonl"
    servers = list(rounds) + list(na)
    with open(raw, "w") as f:
        f.write(json.dumps({"type": "setting", "scenario": "respond", "tool": "wrk",
                            "conns": 64, "streams": 1, "source": "table"}) + "\n")
        for server, figures in rounds.items():
            for i, (rps, cpu) in enumerate(figures, start=1):
                f.write(json.dumps(measurement(server, "x", i, rps, cpu, 1000, 3000)) + "\n")
        for server in na:
            f.write(json.dumps({"type": "na", "scenario": "respond", "server": server,
                                "reason": "not supported"}) + "\n")
    meta = write_meta(tmp_path, servers, ["x"] * len(servers))
    svg = tmp_path / "summary.svg"
    subprocess.run([sys.executable, BENCH_PY, "summarise", "--raw", str(raw), "--meta",
                    str(meta), "--out-json", str(tmp_path / "summary.json"), "--out-svg",
                    str(svg)], check=True, stdout=subprocess.PIPE)
    return ET.parse(svg).getroot()


def bars(root):
    """{(server, value text): width} of every bar, from the bars' tooltips."""
    out = {}
    for rect in root.iter(SVG + "rect"):
        title = rect.find(SVG + "title")
        if title is not None:
            server, value = title.text.split(": ")
            out[(server, value)] = float(rect.get("width"))
    return out


def test_bars_are_the_medians_scaled_within_the_row(tmp_path):
    root = run_summarise(tmp_path, {
        "scalws": [(2000, 5.0), (2100, 5.2), (1900, 4.8)],
        "nginx": [(1000, 10.0), (1000, 10.0), (1000, 10.0)]})
    b = bars(root)
    assert set(b) == {("scalws", "2,000"), ("nginx", "1,000"), ("scalws", "5.00"),
                      ("nginx", "10.00")}, b
    # req/s: twice nginx's bar; CPU: half of it.
    assert abs(b[("scalws", "2,000")] / b[("nginx", "1,000")] - 2.0) < 0.01
    assert abs(b[("scalws", "5.00")] / b[("nginx", "10.00")] - 0.5) < 0.01
    text = "".join(root.itertext())
    assert "respond" in text and "req/s 2.00×" in text and "CPU 0.50×" in text


def test_spread_gets_a_whisker_and_a_missing_server_its_status(tmp_path):
    root = run_summarise(tmp_path, {"scalws": [(900, 5.0), (1000, 5.0), (1100, 5.0)]},
                         na=["h2o"])
    whiskers = [p for p in root.iter(SVG + "path") if p.get("class") == "whisker"]
    assert len(whiskers) == 2, "one whisker per metric of the server with rounds"
    assert any("h2o: n/a" in (t.text or "") for t in root.iter(SVG + "text"))
    assert ("h2o", "0") not in bars(root)
