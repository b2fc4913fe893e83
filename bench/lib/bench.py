#!/usr/bin/python3
"""Numbers for bench/run.sh: parse load-generator output, turn /proc snapshots into one
JSON line per measurement, summarise rounds into medians, ratios and spreads, print the
table, judge --gate against bench/TARGETS.md, and keep --tune's choices.

Standard library only (run with Debian's /usr/bin/python3). Every subcommand reads and
writes plain files so the shell side stays a sequence of steps.
"""

import argparse
import datetime
import json
import os
import re
import statistics
import sys

import plot  # beside this file

CLK_TCK = os.sysconf("SC_CLK_TCK")

# A round is "contended" when other processes used more than this share (%) of the cores
# the measurement runs on (a quiet machine reads 0.0 here; 10 % already moved a req/s
# ratio by half on the reference machine).
CONTENDED_PCT = 3.0
# Before a round, --quiet-wait waits until the cores are less busy than this (%) while
# nothing of ours runs (kernel threads and the like read 0-4 %).
QUIET_PCT = 5.0
# A row is "driver-bound" when doubling the connections raises throughput by more than this.
DRIVER_BOUND_GAIN = 0.10
# bench/TARGETS.md: peak PSS summed over the server's processes no more than
# nginx's.
PSS_MAX_RATIO = 1.00
# The generator's core counts as saturated above this busy percentage.
SATURATED_PCT = 95.0
# cache-hit: the upstream may spend at most this much CPU per request (misses are not hits).
CACHE_MISS_PEER_US = 1.0


# ---------------------------------------------------------------------------------------
# Load generator output.

_UNITS_US = {"us": 1.0, "ms": 1000.0, "s": 1_000_000.0, "m": 60_000_000.0}


def _duration_us(text):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    if not m:
        return None
    return float(m.group(1)) * _UNITS_US[m.group(2)]


def parse_wrk(text):
    out = {"requests": 0, "seconds": 0.0, "p99_us": None, "non2xx": 0, "errors": 0,
           "error_detail": ""}
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m),", text)
    if m:
        out["requests"] = int(m.group(1))
        out["seconds"] = float(m.group(2)) * _UNITS_US[m.group(3)] / 1e6
    m = re.search(r"^\s*99%\s+(\S+)", text, re.M)
    if m:
        out["p99_us"] = _duration_us(m.group(1))
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        out["non2xx"] = int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        out["errors"] = sum(int(x) for x in m.groups())
        out["error_detail"] = m.group(0)
    return out


def _h2load_log_p99(path):
    """p99 of the per-request durations h2load --log-file wrote (µs, third column)."""
    if not os.path.exists(path):
        return None
    durations = []
    with open(path) as f:
        for line in f:
            parts = line.split("\t")
            if len(parts) >= 3:
                durations.append(int(parts[2]))
    os.unlink(path)  # large; the rest of the raw files are kept
    if not durations:
        return None
    durations.sort()
    return float(durations[min(len(durations) - 1, int(0.99 * len(durations)))])


def parse_h2load(text, log_path=None):
    out = {"requests": 0, "seconds": 0.0, "p99_us": None, "non2xx": 0, "errors": 0,
           "error_detail": ""}
    m = re.search(r"finished in ([\d.]+)(us|ms|s|m),", text)
    if m:
        out["seconds"] = float(m.group(1)) * _UNITS_US[m.group(2)] / 1e6
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored, (\d+) timeout", text)
    if m:
        total, started, done, ok, failed, errored, timeout = (int(x) for x in m.groups())
        out["requests"] = done
        out["errors"] = errored + timeout
        if out["errors"]:
            out["error_detail"] = m.group(0)
    m = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", text)
    if m:
        two, three, four, five = (int(x) for x in m.groups())
        out["non2xx"] = three + four + five
        # Requests that completed without any status (reset streams) are failures too.
        out["requests_2xx"] = two
    if log_path:
        out["p99_us"] = _h2load_log_p99(log_path)
    # scalws-h3load prints its own percentiles.
    m = re.search(r"^latency \(us\): .* p99 (\d+) ", text, re.M)
    if m and out["p99_us"] is None:
        out["p99_us"] = float(m.group(1))
    return out


# ---------------------------------------------------------------------------------------
# /proc snapshots.

def _read_ticks(path):
    ticks = {}
    if os.path.exists(path):
        for line in open(path):
            parts = line.split()
            if len(parts) == 3:
                ticks[parts[0]] = int(parts[1]) + int(parts[2])
    return ticks


def _cpu_us(before_path, after_path):
    """CPU time (µs) spent between two snapshots by the processes alive at the end.
    A process that started inside the window counts from zero."""
    before, after = _read_ticks(before_path), _read_ticks(after_path)
    total = 0
    for pid, t in after.items():
        delta = t - before.get(pid, 0)
        if delta >= 0:
            total += delta
    return total * 1_000_000 / CLK_TCK, len(after)


def _read_stat(path):
    cpus = {}
    for line in open(path):
        if re.match(r"cpu\d+ ", line):
            name, *vals = line.split()
            cpus[int(name[3:])] = [int(v) for v in vals]
    return cpus


def expand_cpus(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


def _busy(stat0, stat1, cpus):
    """Busy and steal percentage of the CPU set over the window, and the CPU time (µs)
    spent there in user and system mode (what processes are charged for)."""
    total = busy = steal = task = 0
    for c in cpus:
        if c not in stat0 or c not in stat1:
            continue
        d = [b - a for a, b in zip(stat0[c], stat1[c])]
        # user nice system idle iowait irq softirq steal ...
        t = sum(d[:8])
        total += t
        busy += t - d[3] - d[4] - d[7]
        steal += d[7]
        task += d[0] + d[1] + d[2]
    if total <= 0:
        return None, None, 0, 0
    return (round(100.0 * busy / total, 1), round(100.0 * steal / total, 1),
            task * 1_000_000 / CLK_TCK, total * 1_000_000 / CLK_TCK)


def _read_mem(path):
    """Peak over the samples of (sum VmHWM, sum PSS) in KiB; samples are split by '--'."""
    hwm = pss = 0
    cur_h = cur_p = 0
    for line in list(open(path)) + ["--"]:
        if line.strip() == "--":
            hwm, pss = max(hwm, cur_h), max(pss, cur_p)
            cur_h = cur_p = 0
            continue
        parts = line.split()
        if len(parts) == 3:
            cur_h += int(parts[1])
            cur_p += int(parts[2])
    return hwm, pss


# ---------------------------------------------------------------------------------------
# Subcommand: run the load generator and keep its CPU time.

def cmd_rusage(a):
    """Runs CMD, writes "user_us system_us" of it and its children to OUT, exits with its
    status. Kills it when it outlives --timeout (a hung generator must not hang the run)."""
    import signal
    import subprocess
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    proc = subprocess.Popen(cmd)
    signal.signal(signal.SIGALRM, lambda *_: proc.kill())
    signal.alarm(max(1, int(a.timeout)))
    _, status, ru = os.wait4(proc.pid, 0)  # retried after the alarm handler (PEP 475)
    signal.alarm(0)
    with open(a.out, "w") as f:
        f.write(f"{round(ru.ru_utime * 1e6)} {round(ru.ru_stime * 1e6)}\n")
    return os.waitstatus_to_exitcode(status) if status else 0


# ---------------------------------------------------------------------------------------
# Subcommand: wait until the cores a measurement uses are idle.

def cmd_quiet(a):
    """Samples /proc/stat every 0.3 s until the CPUs are below QUIET_PCT busy
    (nothing of ours runs between measurements) or --max-wait passes. Prints what it saw."""
    import time
    cpus = expand_cpus(a.cpus)
    start = time.monotonic()
    waited = False
    while True:
        s0 = _read_stat("/proc/stat")
        time.sleep(0.3)
        busy, _, _, _ = _busy(s0, _read_stat("/proc/stat"), cpus)
        if busy is None or busy < QUIET_PCT:
            if waited:
                print(f"    (CPUs {a.cpus} quiet after {time.monotonic() - start:.0f}s)",
                      file=sys.stderr)
            return 0
        if time.monotonic() - start > a.max_wait:
            print(f"    (CPUs {a.cpus} still {busy:.0f}% busy with other work after "
                  f"{a.max_wait:.0f}s; measuring anyway, rounds will be flagged contended)",
                  file=sys.stderr)
            return 0
        if not waited:
            print(f"    (CPUs {a.cpus} {busy:.0f}% busy with other work; waiting up to "
                  f"{a.max_wait:.0f}s)", file=sys.stderr)
            waited = True


# ---------------------------------------------------------------------------------------
# Subcommand: record one measurement.

def cmd_record(a):
    text = open(a.base + ".load", errors="replace").read()
    parsed = parse_wrk(text) if a.tool == "wrk" else parse_h2load(text, a.base + ".h2log")
    cpu_us, nprocs = _cpu_us(a.base + ".ticks0", a.base + ".ticks1")
    peer_us, _ = _cpu_us(a.base + ".peer0", a.base + ".peer1")
    stat0, stat1 = _read_stat(a.base + ".stat0"), _read_stat(a.base + ".stat1")
    srv_busy, srv_steal, _, _ = _busy(stat0, stat1, expand_cpus(a.server_cpus))
    gen_busy, gen_steal, _, _ = _busy(stat0, stat1, expand_cpus(a.client_cpus))
    gen_us = 0
    if os.path.exists(a.base + ".rusage"):
        gen_us = sum(int(x) for x in open(a.base + ".rusage").read().split())
    # Other load on the cores this measurement uses: what the kernel charged to tasks there
    # minus what the server, the peers and the generator account for. On a shared machine
    # (a build on the "idle" core) this is what makes a round meaningless.
    used = sorted(set(expand_cpus(a.server_cpus)) | set(expand_cpus(a.client_cpus))
                  | set(expand_cpus(a.peer_cpus)))
    _, _, task_us, capacity_us = _busy(stat0, stat1, used)
    foreign = None
    if capacity_us:
        foreign = round(max(0.0, 100.0 * (task_us - cpu_us - peer_us - gen_us) / capacity_us), 1)
    hwm, pss = _read_mem(a.base + ".mem")
    req = parsed["requests"]
    rec = {
        "type": "measurement", "scenario": a.scenario, "server": a.server, "kind": a.kind,
        "phase": a.phase, "round": a.round, "attempt": a.attempt, "tool": a.tool, "conns": a.conns,
        "streams": a.streams, "duration": a.duration, "rc": a.rc, "alive": bool(a.alive),
        "requests": req, "seconds": parsed["seconds"],
        "rps": round(req / parsed["seconds"], 1) if parsed["seconds"] > 0 else 0.0,
        "p99_us": parsed["p99_us"], "non2xx": parsed["non2xx"], "errors": parsed["errors"],
        "error_detail": parsed["error_detail"],
        "server_cpu_us": round(cpu_us), "server_procs": nprocs,
        "cpu_us_per_req": round(cpu_us / req, 3) if req else None,
        "peer_cpu_us_per_req": round(peer_us / req, 3) if req else None,
        "server_core_busy": srv_busy, "gen_core_busy": gen_busy,
        "gen_cpu_us_per_req": round(gen_us / req, 3) if req else None,
        "foreign_pct": foreign,
        "steal": max(x for x in (srv_steal, gen_steal, 0.0) if x is not None),
        "hwm_kib": hwm, "pss_kib": pss, "files": a.base,
    }
    problems = []
    if a.rc != 0:
        problems.append(f"generator exit {a.rc}")
    if not a.alive:
        problems.append("server died")
    if req == 0:
        problems.append("no requests")
    if parsed["non2xx"]:
        problems.append(f"{parsed['non2xx']} non-2xx")
    if parsed["errors"]:
        problems.append(parsed["error_detail"])
    rec["ok"] = not problems
    rec["problems"] = problems
    with open(a.raw, "a") as f:
        f.write(json.dumps(rec) + "\n")
    p99 = f"{rec['p99_us'] / 1000:.2f} ms" if rec["p99_us"] is not None else "n/a"
    per = f"{rec['cpu_us_per_req']:.2f}" if rec["cpu_us_per_req"] is not None else "n/a"
    print(f"    {a.server:<18} {a.phase:<7} r{a.round}  c={a.conns:<4} {rec['rps']:>11,.0f} req/s"
          f"  p99 {p99:>9}  {per:>7} µs/req  server core {srv_busy}%  generator core "
          f"{gen_busy}%  others {foreign}%"
          + ("" if rec["ok"] else "  !! " + "; ".join(problems)),
          file=sys.stderr)


def cmd_event(a):
    """A scenario-level fact: n/a, failed start or check, the connection count used."""
    rec = {"type": a.type, "scenario": a.scenario}
    for kv in a.field:
        k, _, v = kv.partition("=")
        rec[k] = int(v) if re.fullmatch(r"-?\d+", v) else v
    with open(a.raw, "a") as f:
        f.write(json.dumps(rec) + "\n")


def cmd_contended(a):
    """Exit 0 when a measurement of this round and attempt was contended."""
    for r in _load_raw(a.raw):
        if (r["type"] == "measurement" and r["scenario"] == a.scenario
                and r["phase"] == "measure" and r["round"] == a.round
                and r.get("attempt", 1) == a.attempt
                and (r.get("foreign_pct") or 0) > CONTENDED_PCT):
            return 0
    return 1


# ---------------------------------------------------------------------------------------
# Subcommand: summarise a run.

def _median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _spread(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"median": round(statistics.median(xs), 4), "min": round(min(xs), 4),
            "max": round(max(xs), 4), "rounds": [round(x, 4) for x in xs]}


def _load_raw(path):
    recs = []
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line:
                recs.append(json.loads(line))
    return recs


def _last_attempts(recs):
    """Drops measurements that a later attempt of the same round replaced."""
    last = {}
    for r in recs:
        if r["type"] == "measurement":
            key = (r["scenario"], r["server"], r["phase"], r["round"])
            last[key] = max(last.get(key, 1), r.get("attempt", 1))
    return [r for r in recs if r["type"] != "measurement"
            or r.get("attempt", 1) == last[(r["scenario"], r["server"], r["phase"], r["round"])]]


def summarise(raw, servers, scenarios, quick):
    out = []
    retried = {}
    for r in raw:
        if r["type"] == "measurement" and r["phase"] == "measure" and r.get("attempt", 1) > 1:
            retried.setdefault(r["scenario"], set()).add(r["round"])
    raw = _last_attempts(raw)
    for sc in scenarios:
        rows = [r for r in raw if r["scenario"] == sc]
        setting = next((r for r in rows if r["type"] == "setting"), {})
        row = {"name": sc, "tool": setting.get("tool"), "conns": setting.get("conns"),
               "streams": setting.get("streams"), "conns_source": setting.get("source"),
               "per_server": {}, "flags": [],
               "rounds_remeasured": sorted(retried.get(sc, ()))}
        for s in servers:
            ps = {"status": "ok", "reason": ""}
            na = [r for r in rows if r["type"] == "na" and r["server"] == s]
            failed = [r for r in rows if r["type"] == "failed" and r["server"] == s]
            phase = "quick" if quick else "measure"
            meas = [r for r in rows if r["type"] == "measurement" and r["server"] == s
                    and r["phase"] == phase]
            if na:
                ps.update(status="n/a", reason=na[0].get("reason", ""))
            elif failed:
                ps.update(status="failed", reason=failed[0].get("reason", ""))
            elif not meas:
                ps.update(status="failed", reason="no measurement")
            good = [r for r in meas if r["ok"]]
            bad = [r for r in meas if not r["ok"]]
            if bad and ps["status"] == "ok":
                ps["status"] = "flagged"
                ps["reason"] = "; ".join(sorted({p for r in bad for p in r["problems"]}))
            ps["non2xx"] = sum(r["non2xx"] for r in meas)
            ps["errors"] = sum(r["errors"] for r in meas)
            ps["died"] = any(not r["alive"] for r in meas)
            ps["rounds_ok"] = len(good)
            ps["rounds_total"] = len(meas)
            ps["rps_median"] = _median([r["rps"] for r in good])
            ps["rps_rounds"] = [r["rps"] for r in good]
            ps["cpu_us_per_req_median"] = _median([r["cpu_us_per_req"] for r in good])
            ps["cpu_us_per_req_rounds"] = [r["cpu_us_per_req"] for r in good]
            ps["p99_us_median"] = _median([r["p99_us"] for r in good])
            ps["pss_kib_peak"] = max((r["pss_kib"] for r in good), default=None)
            ps["hwm_kib_peak"] = max((r["hwm_kib"] for r in good), default=None)
            ps["server_core_busy_median"] = _median([r["server_core_busy"] for r in good])
            ps["gen_core_busy_median"] = _median([r["gen_core_busy"] for r in good])
            ps["peer_cpu_us_per_req_median"] = _median([r["peer_cpu_us_per_req"] for r in good])
            ps["gen_cpu_us_per_req_median"] = _median([r.get("gen_cpu_us_per_req")
                                                       for r in good])
            ps["steal_max"] = max((r["steal"] for r in meas), default=None)
            ps["foreign_pct_median"] = _median([r.get("foreign_pct") for r in good])
            ps["foreign_pct_max"] = max((r.get("foreign_pct") or 0 for r in good), default=None)
            ps["contended_rounds"] = sum(1 for r in good
                                         if (r.get("foreign_pct") or 0) > CONTENDED_PCT)
            # Driver-bound check: each round's doubled-load run against that round.
            gains = []
            for r in good:
                d = next((x for x in rows if x["type"] == "measurement" and x["server"] == s
                          and x["phase"] == "double" and x["round"] == r["round"]
                          and x["ok"]), None)
                if d and r["rps"]:
                    gains.append(d["rps"] / r["rps"] - 1.0)
            ps["double_gain_median"] = round(_median(gains), 4) if gains else None
            ps["driver_bound"] = bool(gains) and _median(gains) > DRIVER_BOUND_GAIN
            if (sc == "cache-hit" and ps["peer_cpu_us_per_req_median"] is not None
                    and ps["peer_cpu_us_per_req_median"] > CACHE_MISS_PEER_US):
                ps["not_cached"] = True
            row["per_server"][s] = ps
        # The first server against each of the others; the comparison with the second is
        # also the row's own (rps_ratio, cpu_ratio, ...), which --gate judges.
        row["vs"] = {}
        for b in servers[1:]:
            if quick:
                break
            comp = _compare(rows, row["per_server"], servers[0], b)
            if comp is not None:
                row["vs"][b] = comp
        if len(servers) > 1 and servers[1] in row["vs"]:
            row.update(row["vs"][servers[1]])
        if row["rounds_remeasured"]:
            row["flags"].append("round(s) " + ", ".join(map(str, row["rounds_remeasured"]))
                                + " measured again: other processes used the measured cores")
        for s in servers:
            ps = row["per_server"][s]
            if ps["status"] in ("n/a", "failed", "flagged"):
                row["flags"].append(f"{s}: {ps['status']}" + (f" ({ps['reason']})"
                                                               if ps["reason"] else ""))
            if ps.get("driver_bound"):
                row["flags"].append(f"{s}: driver-bound (+{ps['double_gain_median']:.0%} "
                                    "at 2x connections)")
            gen_busy = ps.get("gen_core_busy_median")
            if gen_busy is not None and gen_busy >= SATURATED_PCT:
                peers = ps.get("peer_cpu_us_per_req_median") or 0
                row["flags"].append(
                    f"{s}: generator core saturated ({gen_busy:.0f}% busy; generator "
                    f"{ps['gen_cpu_us_per_req_median'] or 0:.1f} µs/req"
                    + (f", peers {peers:.1f} µs/req" if peers > 0.05 else "")
                    + "): req/s is capped by that core, compare CPU/request")
            if ps.get("contended_rounds"):
                row["flags"].append(f"{s}: contended in {ps['contended_rounds']} of "
                                    f"{ps['rounds_ok']} rounds (other processes used up to "
                                    f"{ps['foreign_pct_max']:.0f}% of the measured cores)")
            if ps.get("not_cached"):
                row["flags"].append(f"{s}: not-cached (upstream "
                                    f"{ps['peer_cpu_us_per_req_median']:.1f} µs/req)")
        out.append(row)
    return out


def _compare(rows, per_server, a, b):
    """Ratios of server A to server B, per round then the median, or None when either has
    no usable rounds."""
    pa, pb = per_server[a], per_server[b]
    if pa["status"] not in ("ok", "flagged") or pb["status"] not in ("ok", "flagged"):
        return None
    ra, rb = _rounds_by_index(rows, a), _rounds_by_index(rows, b)
    common = sorted(set(ra) & set(rb))
    out = {
        "rps_ratio": _spread([ra[i]["rps"] / rb[i]["rps"] for i in common if rb[i]["rps"]]),
        "cpu_ratio": _spread([ra[i]["cpu_us_per_req"] / rb[i]["cpu_us_per_req"]
                              for i in common if ra[i]["cpu_us_per_req"]
                              and rb[i]["cpu_us_per_req"]]),
        # The VM's speed drifts between rounds, and the generator's own CPU per request
        # (fixed work) drifts with it: dividing each server's figure by the generator's
        # in the same measurement takes most of the drift out (README, "Traps").
        "cpu_gen_ratio": _spread([
            (ra[i]["cpu_us_per_req"] / ra[i]["gen_cpu_us_per_req"])
            / (rb[i]["cpu_us_per_req"] / rb[i]["gen_cpu_us_per_req"])
            for i in common
            if ra[i]["cpu_us_per_req"] and rb[i]["cpu_us_per_req"]
            and ra[i].get("gen_cpu_us_per_req") and rb[i].get("gen_cpu_us_per_req")]),
    }
    if pa["pss_kib_peak"] and pb["pss_kib_peak"]:
        out["pss_ratio"] = round(pa["pss_kib_peak"] / pb["pss_kib_peak"], 3)
    if pa["p99_us_median"] and pb["p99_us_median"]:
        out["p99_ratio"] = round(pa["p99_us_median"] / pb["p99_us_median"], 3)
    return out


def _rounds_by_index(rows, server):
    return {r["round"]: r for r in rows if r["type"] == "measurement" and r["server"] == server
            and r["phase"] == "measure" and r["ok"]}


def _fmt(x, spec, unit=""):
    return "n/a" if x is None else format(x, spec) + unit


def _fmt_ratio(sp):
    if not sp:
        return "n/a"
    return f"{sp['median']:.3f} ({sp['min']:.2f}..{sp['max']:.2f})"


def render_table(summary):
    servers = summary["servers"]
    a, b = servers[0], servers[1]
    m = summary["meta"]
    lines = [
        f"ScalWS side-by-side benchmark — {m['date']}",
        f"tree {m['commit'][:12]}{' (dirty)' if m['dirty'] else ''} on {m['branch']}; "
        f"{m['cpu_model']} x{m['nproc']}; kernel {m['kernel']}; governor {m['governor']}",
        f"pinning: servers CPU {m['server_cpus']}, generator CPU {m['client_cpus']}, "
        f"peers CPU {m['peer_cpus']}, php-fpm CPU {m.get('php_cpus', m['peer_cpus'])}; "
        f"workers {m['workers']}; {m['rounds']} rounds x "
        f"{m['duration']}s after {m['warmup']}s warm-up; driver-bound check "
        f"{m['double_duration']}s at 2x",
        "versions: " + "; ".join(f"{k} {v}" for k, v in m["versions"].items()),
        f"ratio = {a} / {b} (median of per-round ratios, min..max across rounds)"
        + "".join(f"; the line 'vs {c}' under a row: {a} / {c}" for c in servers[2:]),
        "",
    ]
    head = (f"{'scenario':<20} {'conns':>6} {a + ' req/s':>14} {b + ' req/s':>14} "
            f"{'req/s ratio':>20} {'p99 ms ' + a[:6] + '/' + b[:6]:>20} "
            f"{'µs/req ' + a[:6] + '/' + b[:6]:>20} {'cpu ratio':>20} "
            f"{'PSS MiB':>13} {'HWM MiB':>13} {'non-2xx':>8}")
    lines += [head, "-" * len(head)]
    for row in summary["scenarios"]:
        pa, pb = row["per_server"][a], row["per_server"][b]

        def val(ps, key, spec, scale=1.0):
            if ps["status"] in ("n/a", "failed") or ps.get(key) is None:
                return "n/a"
            return format(ps[key] * scale, spec)

        conns = str(row["conns"]) + (f"x{row['streams']}" if row["tool"] in ("h2load", "h3load")
                                     else "")
        lines.append(
            f"{row['name']:<20} {conns:>6} {val(pa, 'rps_median', ',.0f'):>14} "
            f"{val(pb, 'rps_median', ',.0f'):>14} {_fmt_ratio(row.get('rps_ratio')):>20} "
            f"{val(pa, 'p99_us_median', '.2f', 1e-3) + ' / ' + val(pb, 'p99_us_median', '.2f', 1e-3):>20} "
            f"{val(pa, 'cpu_us_per_req_median', '.2f') + ' / ' + val(pb, 'cpu_us_per_req_median', '.2f'):>20} "
            f"{_fmt_ratio(row.get('cpu_ratio')):>20} "
            f"{val(pa, 'pss_kib_peak', '.1f', 1 / 1024) + '/' + val(pb, 'pss_kib_peak', '.1f', 1 / 1024):>13} "
            f"{val(pa, 'hwm_kib_peak', '.1f', 1 / 1024) + '/' + val(pb, 'hwm_kib_peak', '.1f', 1 / 1024):>13} "
            f"{pa.get('non2xx', 0) + pb.get('non2xx', 0):>8}")
        for c in servers[2:]:
            pc, comp = row["per_server"][c], row.get("vs", {}).get(c, {})
            lines.append(
                f"{'':<20} {'vs ' + c:>6} {'':>14} {val(pc, 'rps_median', ',.0f'):>14} "
                f"{_fmt_ratio(comp.get('rps_ratio')):>20} "
                f"{val(pa, 'p99_us_median', '.2f', 1e-3) + ' / ' + val(pc, 'p99_us_median', '.2f', 1e-3):>20} "
                f"{val(pa, 'cpu_us_per_req_median', '.2f') + ' / ' + val(pc, 'cpu_us_per_req_median', '.2f'):>20} "
                f"{_fmt_ratio(comp.get('cpu_ratio')):>20} "
                f"{val(pa, 'pss_kib_peak', '.1f', 1 / 1024) + '/' + val(pc, 'pss_kib_peak', '.1f', 1 / 1024):>13} "
                f"{val(pa, 'hwm_kib_peak', '.1f', 1 / 1024) + '/' + val(pc, 'hwm_kib_peak', '.1f', 1 / 1024):>13} "
                f"{pc.get('non2xx', 0):>8}")
        for flag in row["flags"]:
            lines.append(f"{'':<20}   ! {flag}")
        busy = []
        for s in servers:
            ps = row["per_server"][s]
            if ps.get("gen_core_busy_median") is None:
                continue
            busy.append(f"{s} server {ps['server_core_busy_median']:.0f}% generator "
                        f"{ps['gen_core_busy_median']:.0f}% others "
                        f"{ps['foreign_pct_median']:.0f}%")
        if busy:
            lines.append(f"{'':<20}     cores busy: {'; '.join(busy)}")
        for c, comp in row.get("vs", {}).items():
            if comp.get("cpu_gen_ratio"):
                lines.append(f"{'':<20}     cpu ratio against the generator's CPU per request"
                             f"{' (vs ' + c + ')' if len(servers) > 2 else ''}: "
                             f"{_fmt_ratio(comp['cpu_gen_ratio'])}")
    lines += _shared_lines(summary["scenarios"], a)
    return "\n".join(lines) + "\n"


def _shared_lines(scenarios, server):
    """A "-shared" scenario against its base in the same run, for `server` (ScalWS): what
    the hand-off through a shared address's front costs (bench/TARGETS.md)."""
    by_name = {row["name"]: row for row in scenarios}
    out = []
    for row in scenarios:
        if not row["name"].endswith("-shared"):
            continue
        base = by_name.get(row["name"][:-len("-shared")])
        if base is None:
            continue
        ps, pb = row["per_server"].get(server, {}), base["per_server"].get(server, {})
        usable = all(p.get("status") not in (None, "n/a", "failed") and p.get("rps_median")
                     and p.get("cpu_us_per_req_median") for p in (ps, pb))
        if not usable:
            out.append(f"{row['name']:<20} n/a against {base['name']}")
            continue
        out.append(f"{row['name']:<20} req/s {ps['rps_median'] / pb['rps_median']:.3f}, "
                   f"µs/req {ps['cpu_us_per_req_median'] / pb['cpu_us_per_req_median']:.3f} "
                   f"(medians of {server}, against {base['name']} in this run)")
    if out:
        out = ["", "shared address / direct listener:"] + out
    return out


def render_quick(summary):
    lines = [f"bench --quick ({', '.join(summary['servers'])}): answers only, no timing", ""]
    for row in summary["scenarios"]:
        for s, ps in row["per_server"].items():
            st = ps["status"]
            word = {"ok": "ok", "n/a": "n/a", "failed": "FAIL", "flagged": "FAIL"}[st]
            detail = "" if st == "ok" else f"  ({ps['reason']})"
            if st == "ok":
                detail = f"  ({ps['rps_median']:,.0f} req/s)" if ps["rps_median"] else ""
            lines.append(f"  {row['name']:<20} {s:<18} {word}{detail}")
    return "\n".join(lines) + "\n"


def cmd_summarise(a):
    raw = _load_raw(a.raw)
    meta = json.load(open(a.meta))
    servers = meta["servers"]
    summary = {"meta": meta, "servers": servers,
               "scenarios": summarise(raw, servers, meta["scenarios"], a.quick)}
    text = render_quick(summary) if a.quick else render_table(summary)
    if a.out_json:
        with open(a.out_json, "w") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")
    if a.out_txt:
        with open(a.out_txt, "w") as f:
            f.write(text)
    if a.out_svg and not a.quick:
        plot.write_svg(summary, a.out_svg)
    sys.stdout.write(text)
    if a.quick:
        bad = [r["name"] for r in summary["scenarios"] for ps in r["per_server"].values()
               if ps["status"] in ("failed", "flagged")]
        return 1 if bad else 0
    return 0


# ---------------------------------------------------------------------------------------
# Subcommand: --gate against the "Performance targets" table of bench/TARGETS.md.

def parse_targets(design_path):
    text = open(design_path).read()
    m = re.search(r"^## Performance targets.*?$(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not m:
        raise SystemExit(f"gate: no '## Performance targets' section in {design_path}")
    targets = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not re.search(r"[≥>]", cells[1]):
            continue
        name = cells[0].split()[0]
        if name.startswith("sandbox"):
            name = "sandbox"
        lo = re.search(r"[≥>]=?\s*([\d.]+)", cells[1])
        hi = re.search(r"[≤<]=?\s*([\d.]+)", cells[2])
        targets[name] = {"rps_min": float(lo.group(1)) if lo else None,
                         "cpu_max": float(hi.group(1)) if hi else None, "text": line.strip()}
    if not targets:
        raise SystemExit(f"gate: no target rows found in {design_path}")
    return targets


# Counting may cost at most 1 % of throughput in every scenario (the targets table has no
# row for it).
METRICS_TARGET = {"rps_min": 0.99, "cpu_max": None, "text": "metrics on/off: req/s >= 0.99"}


# Two builds of ScalWS side by side (--servers scalws@NEW,scalws@OLD): NEW must not be
# worse. Per scenario: the median of the per-round req/s ratios >= 1.00, or 1.00 within
# the rounds' spread (min..max: not distinguishable from equal on this machine); the same
# for CPU per request (<= 1.00 or within the spread); p99 and peak PSS no more than 15 %
# above OLD's; and on BUILDS_GAIN_SCENARIOS a gain (bench/TARGETS.md, "Builds").
BUILDS_P99_MAX = 1.15
BUILDS_PSS_MAX = 1.15
# Where the packaged (profile-guided) build must gain, not only hold: req/s median >= 1.05,
# or, where the generator's core is the limit, CPU per request median <= 0.95.
BUILDS_GAIN_SCENARIOS = ("respond", "static-small", "tls-h2-static-small")
BUILDS_GAIN_RPS = 1.05
BUILDS_GAIN_CPU = 0.95


def gate_builds(row):
    """(problems, figures) of one row of a build-against-build run."""
    rr, cr = row.get("rps_ratio"), row.get("cpu_ratio")
    p99, pss = row.get("p99_ratio"), row.get("pss_ratio")
    figs = (f"req/s ratio {_fmt_ratio(rr)}, CPU/request ratio {_fmt_ratio(cr)}, "
            f"p99 ratio {p99 if p99 is not None else 'n/a'}, PSS ratio "
            f"{pss if pss is not None else 'n/a'}")
    bad = []
    if not rr or (rr["median"] < 1.0 and rr["max"] < 1.0):
        bad.append("req/s (median < 1.00 outside the rounds' spread)")
    if not cr or (cr["median"] > 1.0 and cr["min"] > 1.0):
        bad.append("CPU/request (median > 1.00 outside the rounds' spread)")
    if row["name"] in BUILDS_GAIN_SCENARIOS and not (
            (rr and rr["median"] >= BUILDS_GAIN_RPS) or (cr and cr["median"] <= BUILDS_GAIN_CPU)):
        bad.append(f"no gain (req/s median < {BUILDS_GAIN_RPS:.2f} and CPU/request median > "
                   f"{BUILDS_GAIN_CPU:.2f})")
    if p99 is None or p99 > BUILDS_P99_MAX:
        bad.append(f"p99 (more than {BUILDS_P99_MAX:.2f}x)")
    if pss is None or pss > BUILDS_PSS_MAX:
        bad.append(f"peak PSS (more than {BUILDS_PSS_MAX:.2f}x)")
    return bad, figs


# With h2o as a third server beside nginx (--servers scalws,nginx,h2o), every row judged
# against nginx must also be ahead of h2o: req/s ratio >= 1.00 or, where the generator's
# core is the limit, CPU per request ratio <= 1.00; on tls-h2-static-small, where h2o is
# the one to beat, the CPU per request ratio itself (bench/TARGETS.md, "Builds").
H2O_CPU_SCENARIOS = ("tls-h2-static-small",)


def ahead_of_h2o(row, h2o):
    """The problem with `row` against h2o, or None."""
    comp = row.get("vs", {}).get(h2o, {})
    rr, cr = comp.get("rps_ratio"), comp.get("cpu_ratio")
    figs = f"vs {h2o}: req/s ratio {_fmt_ratio(rr)}, CPU/request ratio {_fmt_ratio(cr)}"
    if row["per_server"][h2o]["status"] != "ok":
        return None
    if row["name"] in H2O_CPU_SCENARIOS:
        return None if cr and cr["median"] <= 1.0 else f"CPU/request behind {h2o}: {figs}"
    if (rr and rr["median"] >= 1.0) or (cr and cr["median"] <= 1.0):
        return None
    return f"behind {h2o} in req/s and CPU/request: {figs}"


def cmd_gate(a):
    summary = json.load(open(a.summary))
    targets = parse_targets(a.design)
    servers = summary["servers"][:2]
    kinds = summary["meta"]["kinds"][:2]
    h2o = None
    for extra, kind in zip(summary["servers"][2:], summary["meta"]["kinds"][2:]):
        if kind == "h2o" and kinds == ["scalws", "nginx"] and h2o is None:
            h2o = extra
        else:
            print(f"gate: not judged: {extra} (the gate compares {servers[0]} with {servers[1]})")
    failures, judged, skipped = [], [], []
    for row in summary["scenarios"]:
        if (kinds[0] == kinds[1] and kinds[0].startswith("scalws")
                and any("@" in s for s in servers)):
            key = "builds"
        elif kinds == ["scalws", "scalws-nosandbox"]:
            key = "sandbox"
        elif kinds == ["scalws", "scalws-nometrics"]:
            key = "metrics"
        elif kinds == ["scalws", "nginx"]:
            key = row["name"]
        else:
            raise SystemExit(f"gate: targets compare scalws with nginx (or scalws with "
                             f"scalws-nosandbox or scalws-nometrics, or two builds of "
                             f"scalws@BUILD); this run compared {' and '.join(servers)}")
        t = targets.get(key, METRICS_TARGET if key == "metrics" else None)
        if key == "builds":
            t = {}
        states = [row["per_server"][s]["status"] for s in servers]
        if t is None:
            skipped.append(f"{row['name']}: no target in the targets table")
            continue
        if "n/a" in states:
            skipped.append(f"{row['name']}: n/a")
            continue
        if any(st != "ok" for st in states):
            failures.append(f"{row['name']}: {'; '.join(row['flags'])}")
            continue
        if key == "builds":
            bad, figs = gate_builds(row)
            if bad:
                failures.append(f"{row['name']}: {', '.join(bad)}: {figs}")
            else:
                judged.append(f"{row['name']}: not worse: {figs}")
            continue
        rr, cr, pr = row.get("rps_ratio"), row.get("cpu_ratio"), row.get("pss_ratio")
        figs = (f"req/s ratio {_fmt_ratio(rr)} (target ≥ {t['rps_min']}), "
                f"CPU/request ratio {_fmt_ratio(cr)} (target ≤ {t['cpu_max']})")
        bad = []
        if t["rps_min"] is not None and (not rr or rr["median"] < t["rps_min"]):
            bad.append("req/s")
        if t["cpu_max"] is not None and (not cr or cr["median"] > t["cpu_max"]):
            bad.append("CPU/request")
        # The targets: PSS summed over the server's processes no more than nginx's.
        if key not in ("sandbox", "metrics"):
            figs += f", PSS ratio {pr if pr is not None else 'n/a'} (target ≤ {PSS_MAX_RATIO})"
            if pr is None or pr > PSS_MAX_RATIO:
                bad.append("PSS")
        if bad:
            failures.append(f"{row['name']}: {' and '.join(bad)} misses target: {figs}")
        else:
            judged.append(f"{row['name']}: meets target: {figs}")
        if h2o is not None:
            problem = ahead_of_h2o(row, h2o)
            if problem:
                failures.append(f"{row['name']}: {problem}")
            else:
                judged.append(f"{row['name']}: ahead of {h2o}")
    for line in judged:
        print(f"gate: {line}")
    for line in skipped:
        print(f"gate: not judged: {line}")
    for line in failures:
        print(f"gate: FAIL {line}")
    return 1 if failures else 0


# ---------------------------------------------------------------------------------------
# Subcommands: --tune's file.

def cmd_tune_pick(a):
    """Choose the connection count with the best geometric mean of req/s over the servers
    measured (each point's median over the up and down passes), preferring the smaller
    count within 2 % of the best; store it."""
    raw = [r for r in _load_raw(a.raw) if r["type"] == "measurement" and r["phase"] == "tune"
           and r["scenario"] == a.scenario and r["ok"]]
    samples = {}
    for r in raw:
        samples.setdefault(r["conns"], {}).setdefault(r["server"], []).append(r["rps"])
    by_conns = {c: {s: round(statistics.median(v), 1) for s, v in per.items()}
                for c, per in samples.items()}
    servers = sorted({r["server"] for r in raw})
    scores = {}
    for c, per in by_conns.items():
        if len(per) == len(servers):
            prod = 1.0
            for v in per.values():
                prod *= max(v, 1e-9)
            scores[c] = prod ** (1.0 / len(per))
    if not scores:
        print(f"tune: {a.scenario}: no complete sweep point; nothing stored", file=sys.stderr)
        return 1
    best = max(scores.values())
    pick = min(c for c, s in scores.items() if s >= 0.98 * best)
    data = json.load(open(a.file)) if os.path.exists(a.file) else {"scenarios": {}}
    data["scenarios"][a.scenario] = {
        "conns": pick, "servers": servers,
        "sweep": {str(c): by_conns[c] for c in sorted(by_conns)},
        "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu_model": a.cpu_model, "pinning": a.pinning,
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.file)), exist_ok=True)
    with open(a.file, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    for c in sorted(by_conns):
        mark = "  <- kept" if c == pick else ""
        figs = ", ".join(f"{s} {v:,.0f}" for s, v in sorted(by_conns[c].items()))
        print(f"tune: {a.scenario} c={c}: {figs} req/s{mark}", file=sys.stderr)
    return 0


def cmd_tune_get(a):
    if os.path.exists(a.file):
        entry = json.load(open(a.file)).get("scenarios", {}).get(a.scenario)
        if entry:
            print(entry["conns"])
    return 0


# ---------------------------------------------------------------------------------------
# Subcommand: the run's metadata.

def cmd_meta(a):
    meta = {}
    for kv in a.field:
        k, _, v = kv.partition("=")
        meta[k] = v
    meta["servers"] = a.servers.split(",")
    meta["kinds"] = a.kinds.split(",")
    meta["scenarios"] = a.scenarios.split(",")
    meta["dirty"] = meta.get("dirty") == "1"
    meta["versions"] = {}
    for kv in a.version:
        k, _, v = kv.partition("=")
        meta["versions"][k] = v
    meta["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    with open(a.out, "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("record")
    for name in ("raw", "base", "scenario", "server", "kind", "phase", "tool", "server-cpus",
                 "client-cpus", "peer-cpus"):
        r.add_argument("--" + name, required=True)
    for name in ("round", "attempt", "conns", "streams", "duration", "rc", "alive"):
        r.add_argument("--" + name, type=int, required=True)
    r.set_defaults(fn=cmd_record)

    q = sub.add_parser("quiet")
    q.add_argument("--cpus", required=True)
    q.add_argument("--max-wait", type=float, required=True)
    q.set_defaults(fn=cmd_quiet)

    ru = sub.add_parser("rusage")
    ru.add_argument("--out", required=True)
    ru.add_argument("--timeout", type=float, required=True)
    ru.add_argument("cmd", nargs=argparse.REMAINDER)
    ru.set_defaults(fn=cmd_rusage)

    c = sub.add_parser("contended")
    c.add_argument("--raw", required=True)
    c.add_argument("--scenario", required=True)
    c.add_argument("--round", type=int, required=True)
    c.add_argument("--attempt", type=int, required=True)
    c.set_defaults(fn=cmd_contended)

    e = sub.add_parser("event")
    e.add_argument("--raw", required=True)
    e.add_argument("--type", required=True)
    e.add_argument("--scenario", required=True)
    e.add_argument("field", nargs="*")
    e.set_defaults(fn=cmd_event)

    s = sub.add_parser("summarise")
    s.add_argument("--raw", required=True)
    s.add_argument("--meta", required=True)
    s.add_argument("--out-json")
    s.add_argument("--out-txt")
    s.add_argument("--out-svg")
    s.add_argument("--quick", action="store_true")
    s.set_defaults(fn=cmd_summarise)

    g = sub.add_parser("gate")
    g.add_argument("--summary", required=True)
    g.add_argument("--design", required=True)
    g.set_defaults(fn=cmd_gate)

    t = sub.add_parser("tune-pick")
    for name in ("raw", "file", "scenario", "cpu-model", "pinning"):
        t.add_argument("--" + name, required=True)
    t.set_defaults(fn=cmd_tune_pick)

    tg = sub.add_parser("tune-get")
    tg.add_argument("--file", required=True)
    tg.add_argument("--scenario", required=True)
    tg.set_defaults(fn=cmd_tune_get)

    m = sub.add_parser("meta")
    m.add_argument("--out", required=True)
    m.add_argument("--servers", required=True)
    m.add_argument("--kinds", required=True)
    m.add_argument("--scenarios", required=True)
    m.add_argument("--field", action="append", default=[])
    m.add_argument("--version", action="append", default=[])
    m.set_defaults(fn=cmd_meta)

    a = p.parse_args()
    return a.fn(a) or 0


if __name__ == "__main__":
    sys.exit(main())
