#!/usr/bin/python3
"""An SVG picture of one bench/run.sh summary: per scenario, each server's req/s and CPU
time per request as bars (the median of the rounds) with a whisker from the slowest to the
fastest round, so a run reads at a glance and a noisy row shows itself.

Standard library only. `plot.py SUMMARY.json OUT.svg`, or render_svg(summary) -> str.
"""

import sys
from xml.sax.saxutils import escape

# Colours safe for the common colour-vision deficiencies (Okabe-Ito).
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"]

WIDTH = 980
LABEL_W = 170
PANEL_W = 360
PANEL_GAP = 30
BAR_H = 12
BAR_GAP = 4
ROW_PAD = 14
HEAD_H = 92

# (key of the median, key of the per-round values, panel title, how to print a value)
METRICS = [
    ("rps_median", "rps_rounds", "requests per second (higher is better)",
     lambda v: f"{v:,.0f}"),
    ("cpu_us_per_req_median", "cpu_us_per_req_rounds",
     "server CPU per request, µs (lower is better)", lambda v: f"{v:.2f}"),
]


def _num(x):
    return x if isinstance(x, (int, float)) and x == x else None  # drops None and NaN


def _median_of(spread):
    """A ratio as the summary keeps it: {"median": ..., "min": ..., ...} or None."""
    return _num(spread.get("median")) if isinstance(spread, dict) else None


def _row_height(n_servers):
    return ROW_PAD * 2 + n_servers * (BAR_H + BAR_GAP)


def _panel(out, x0, y0, servers, row, median_key, rounds_key, fmt):
    """One metric of one scenario: a bar per server, scaled to the row's largest value."""
    values = []
    for s in servers:
        ps = row["per_server"].get(s, {})
        med = _num(ps.get(median_key)) if ps.get("status") in ("ok", "flagged") else None
        rounds = [v for v in (ps.get(rounds_key) or []) if _num(v) is not None]
        values.append((s, ps, med, rounds))
    top = max([m for _, _, m, _ in values if m is not None]
              + [v for _, _, _, r in values for v in r], default=0)
    scale = (PANEL_W - 90) / top if top > 0 else 0
    for i, (s, ps, med, rounds) in enumerate(values):
        y = y0 + ROW_PAD + i * (BAR_H + BAR_GAP)
        colour = PALETTE[i % len(PALETTE)]
        if med is None:
            status = ps.get("status", "missing")
            out.append(f'<text x="{x0 + 4}" y="{y + BAR_H - 2}" class="na">'
                       f'{escape(s)}: {escape(status)}</text>')
            continue
        w = max(1.0, med * scale)
        out.append(f'<rect x="{x0}" y="{y}" width="{w:.1f}" height="{BAR_H}" '
                   f'fill="{colour}"><title>{escape(s)}: {fmt(med)}</title></rect>')
        if len(rounds) > 1:
            lo, hi = min(rounds) * scale, max(rounds) * scale
            mid = y + BAR_H / 2
            out.append(f'<path d="M{x0 + lo:.1f} {mid}H{x0 + hi:.1f}'
                       f'M{x0 + lo:.1f} {y + 2}V{y + BAR_H - 2}'
                       f'M{x0 + hi:.1f} {y + 2}V{y + BAR_H - 2}" class="whisker"/>')
        label_x = x0 + max(w, (max(rounds) * scale) if rounds else 0) + 4
        out.append(f'<text x="{label_x:.1f}" y="{y + BAR_H - 2}">{fmt(med)}</text>')


def render_svg(summary):
    servers = summary.get("servers", [])
    scenarios = summary.get("scenarios", [])
    meta = summary.get("meta", {})
    row_h = _row_height(max(1, len(servers)))
    height = HEAD_H + row_h * len(scenarios) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">',
           "<style>text{fill:#222}.na{fill:#888;font-style:italic}"
           ".whisker{stroke:#222;stroke-width:1;fill:none}.grid{stroke:#ddd}"
           ".title{font-size:14px;font-weight:bold}</style>",
           f'<rect width="{WIDTH}" height="{height}" fill="#fff"/>']
    title = "ScalWS bench: " + " vs ".join(servers)
    out.append(f'<text x="10" y="20" class="title">{escape(title)}</text>')
    sub = (f"{meta.get('date', '')}  commit {str(meta.get('commit', ''))[:12]}"
           f"{' (dirty)' if meta.get('dirty') else ''}  {meta.get('cpu_model', '')}  "
           f"{meta.get('rounds', '?')} rounds × {meta.get('duration', '?')} s, "
           f"workers {meta.get('workers', '?')}; whiskers: slowest to fastest round")
    out.append(f'<text x="10" y="38">{escape(sub)}</text>')
    for i, s in enumerate(servers):
        x = 10 + i * 150
        out.append(f'<rect x="{x}" y="50" width="12" height="12" '
                   f'fill="{PALETTE[i % len(PALETTE)]}"/>')
        out.append(f'<text x="{x + 16}" y="60">{escape(s)}</text>')
    for j, (_, _, panel_title, _) in enumerate(METRICS):
        x0 = LABEL_W + j * (PANEL_W + PANEL_GAP)
        out.append(f'<text x="{x0}" y="84" font-weight="bold">{escape(panel_title)}</text>')
    for k, row in enumerate(scenarios):
        y0 = HEAD_H + k * row_h
        out.append(f'<line x1="10" x2="{WIDTH - 10}" y1="{y0}" y2="{y0}" class="grid"/>')
        name = row.get("name", "?")
        out.append(f'<text x="10" y="{y0 + row_h / 2 + 4:.0f}" font-weight="bold">'
                   f'{escape(name)}</text>')
        rps_ratio = _median_of(row.get("rps_ratio"))
        cpu_ratio = _median_of(row.get("cpu_ratio"))
        if rps_ratio is not None and len(servers) > 1:
            text = f"req/s {rps_ratio:.2f}×"
            if cpu_ratio is not None:
                text += f", CPU {cpu_ratio:.2f}×"
            out.append(f'<text x="10" y="{y0 + row_h / 2 + 18:.0f}">{escape(text)}'
                       f'<title>{escape(servers[0])} / {escape(servers[1])}</title></text>')
        for j, (median_key, rounds_key, _, fmt) in enumerate(METRICS):
            x0 = LABEL_W + j * (PANEL_W + PANEL_GAP)
            _panel(out, x0, y0, servers, row, median_key, rounds_key, fmt)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_svg(summary, path):
    with open(path, "w") as f:
        f.write(render_svg(summary))


def main(argv):
    import json
    if len(argv) != 3:
        sys.stderr.write("usage: plot.py SUMMARY.json OUT.svg\n")
        return 2
    with open(argv[1]) as f:
        write_svg(json.load(f), argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
