// The ScalWS dashboard: reads /api/v1/ and draws the page. Every string from the API is
// put in the page with textContent, never parsed as HTML: instance names, users, event
// messages come from tenants and operators. Times come as UTC epoch ms and are shown in
// the viewer's time zone.
'use strict';

const REFRESH_MS = 5000;
const SERIES_MINUTES = 60;
const cards = new Map();  // instance name -> {root, parts}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

async function api(path) {
  const r = await fetch(path, {cache: 'no-store', credentials: 'same-origin'});
  if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
  return r.json();
}

const fmt = {
  time: ms => new Date(ms).toLocaleString(),
  clock: ms => new Date(ms).toLocaleTimeString([], {hour: '2-digit', minute: '2-digit'}),
  duration(ms) {
    let s = Math.floor(ms / 1000);
    const d = Math.floor(s / 86400); s %= 86400;
    const h = Math.floor(s / 3600); s %= 3600;
    const m = Math.floor(s / 60); s %= 60;
    return (d ? d + 'd ' : '') + (d || h ? h + 'h ' : '') + (d || h || m ? m + 'm ' : '') + s + 's';
  },
  num(v) {
    if (v === null || v === undefined) return '–';
    if (v >= 100) return Math.round(v).toString();
    if (v >= 10) return v.toFixed(1);
    return v.toFixed(2);
  },
  pct: v => (v === null || v === undefined) ? '–' : (v * 100).toFixed(2) + '%',
  us(v) {
    if (!v) return '0';
    if (v >= 1e6) return (v / 1e6).toFixed(2) + ' s';
    if (v >= 1e3) return (v / 1e3).toFixed(1) + ' ms';
    return v + ' µs';
  },
  bytes(v) {
    if (!v) return '0';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return v.toFixed(i ? 1 : 0) + ' ' + units[i];
  },
};

// --- charts --------------------------------------------------------------------------

const CHARTS = [
  {key: 'rps', title: 'requests/s', lines: [['requests_per_s', 'a']], format: fmt.num},
  {key: 'err', title: 'errors 4xx · 5xx', lines: [['error_rate_4xx', 'b'], ['error_rate_5xx', 'bad']], format: fmt.pct},
  {key: 'p99', title: 'p99 latency', lines: [['p99_us', 'a']], format: fmt.us},
  {key: 'cpu', title: 'CPU % of a core', lines: [['cpu_percent', 'a']], format: fmt.num},
  {key: 'rss', title: 'RSS', lines: [['rss_bytes', 'a']], format: fmt.bytes},
];

function cssColor(name) {
  return getComputedStyle(document.documentElement).getPropertyValue('--' + name).trim() || '#888';
}

function drawChart(chart, spec, series) {
  const canvas = chart.canvas;
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(120, canvas.clientWidth), h = Math.max(60, canvas.clientHeight);
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(h * dpr);
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  const t = series.t || [];
  let max = 0;
  for (const [field] of spec.lines) for (const v of series[field] || []) max = Math.max(max, v);
  const from = series.from_ms, to = series.to_ms, top = 4, bottom = h - 2;
  const x = ms => (ms - from) / Math.max(1, to - from) * w;
  const y = v => bottom - (max > 0 ? v / max : 0) * (bottom - top);
  g.strokeStyle = cssColor('line');
  g.lineWidth = 1;
  g.beginPath(); g.moveTo(0, top + .5); g.lineTo(w, top + .5); g.stroke();
  for (const [field, color] of spec.lines) {
    const values = series[field] || [];
    g.strokeStyle = cssColor(color);
    g.lineWidth = 1.5;
    g.beginPath();
    // A missing 10 s bucket (no row) leaves a gap instead of a line across it; a point
    // with no neighbour is drawn as a dot.
    const near = (i, j) => j >= 0 && j < t.length && Math.abs(t[j] - t[i]) <= 1.5 * series.step_ms;
    for (let i = 0; i < t.length; i++) {
      if (near(i, i - 1)) g.lineTo(x(t[i]), y(values[i])); else g.moveTo(x(t[i]), y(values[i]));
    }
    g.stroke();
    g.fillStyle = g.strokeStyle;
    for (let i = 0; i < t.length; i++) {
      if (!near(i, i - 1) && !near(i, i + 1)) g.fillRect(x(t[i]) - 2, y(values[i]) - 2, 4, 4);
    }
  }
  canvas.dataset.points = String(t.length);
  chart.max.textContent = 'max ' + spec.format(max);
  chart.span.textContent = fmt.clock(from) + ' – ' + fmt.clock(to);
}

// --- instances -----------------------------------------------------------------------

function figure(parent, label) {
  const f = el('div', 'figure');
  const value = el('b', null, '–');
  f.append(value, el('span', null, label));
  parent.append(f);
  return value;
}

function makeCard(name) {
  const root = el('article', 'card instance');
  root.dataset.name = name;
  const head = el('div', 'head');
  const title = el('h3', null, name);
  const badge = el('span', 'badge');
  head.append(title, badge);
  const facts = el('div', 'muted');
  const figs = el('div', 'figures');
  const parts = {badge, facts, charts: {}};
  parts.rps = figure(figs, 'req/s now');
  parts.e4 = figure(figs, '4xx');
  parts.e5 = figure(figs, '5xx');
  parts.p50 = figure(figs, 'p50');
  parts.p99 = figure(figs, 'p99');
  parts.workers = figure(figs, 'workers');
  parts.restarts = figure(figs, 'restarts');
  const charts = el('div', 'charts');
  for (const spec of CHARTS) {
    const fig = el('figure', 'chart');
    const cap = el('figcaption');
    const max = el('span');
    cap.append(el('span', null, spec.title), max);
    const canvas = el('canvas');
    canvas.dataset.chart = spec.key;
    canvas.dataset.points = '0';
    const span = el('figcaption');
    fig.append(cap, canvas, span);
    charts.append(fig);
    parts.charts[spec.key] = {canvas, max, span};
  }
  parts.extra = el('div', 'sub');
  root.append(head, facts, figs, charts, parts.extra);
  return {root, parts};
}

function subTable(title, headers, rows) {
  const box = el('div', 'sub');
  box.append(el('h3', null, title));
  const wrap = el('div', 'scroll');
  const table = el('table');
  const tr = el('tr');
  for (const hd of headers) tr.append(el('th', null, hd));
  const thead = el('thead');
  thead.append(tr);
  const tbody = el('tbody');
  for (const row of rows) {
    const r = el('tr');
    for (const cell of row) r.append(el('td', null, cell));
    tbody.append(r);
  }
  table.append(thead, tbody);
  wrap.append(table);
  box.append(wrap);
  return box;
}

function updateCard(card, inst) {
  const p = card.parts;
  p.badge.textContent = inst.status;
  p.badge.className = 'badge ' + String(inst.status).replace(/[^a-z]/g, '');
  p.facts.textContent = inst.mode + ' · ' + inst.cpus + ' CPU' + (inst.cpus === 1 ? '' : 's') +
      (inst.assigned_cpus ? ' (' + inst.assigned_cpus + (inst.shared_cpus ? ', shared' : '') + ')' : '') +
      ' · user ' + inst.user + (inst.reason ? ' · ' + inst.reason : '') +
      (inst.reload_pending ? ' · reload pending' : '');
  const now = inst.now;
  const rps = now ? now.requests_per_s : 0;
  p.rps.textContent = now ? fmt.num(rps) : '–';
  p.rps.dataset.value = String(rps);
  p.e4.textContent = now ? fmt.pct(now.error_rate['4xx']) : '–';
  p.e5.textContent = now ? fmt.pct(now.error_rate['5xx']) : '–';
  p.p50.textContent = now ? fmt.us(now.latency_us.p50) : '–';
  p.p99.textContent = now ? fmt.us(now.latency_us.p99) : '–';
  p.workers.textContent = inst.workers + ' / ' + inst.process_count;
  p.restarts.textContent = String(inst.restarts);
  card.root.dataset.rps = String(rps);
  clear(p.extra);
  if (inst.php_pools && inst.php_pools.length) {
    p.extra.append(subTable('PHP pools', ['as', 'pool', 'address', 'conns'],
        inst.php_pools.map(b => [b.name, b.pool, b.address, b.share + ' of ' + b.max_conns])));
  }
  if (Array.isArray(inst.upstreams) && inst.upstreams.length) {
    const rows = [];
    for (const u of inst.upstreams) {
      for (const s of u.servers || []) {
        const state = s.loops_down ? 'down on ' + s.loops_down + ' of ' + s.loops + ' loops' +
            (s.down_since_ms ? ' since ' + fmt.time(s.down_since_ms) : '') : 'up';
        rows.push([u.name, s.address + (s.backup ? ' (backup)' : ''), state, s.failures,
                   s.active, s.requests, s.responses_5xx]);
      }
    }
    p.extra.append(subTable('Upstreams', ['upstream', 'server', 'state', 'failures', 'active',
                                          'requests', '5xx'], rows));
  }
  if (Array.isArray(inst.caches) && inst.caches.length) {
    p.extra.append(subTable('Caches', ['cache', 'entries', 'memory', 'disk', 'hit rate'],
        inst.caches.map(c => [c.name, c.entries, fmt.bytes(c.memory_bytes),
                              fmt.bytes(c.disk_bytes), fmt.pct(c.hit_rate)])));
  }
  if (Array.isArray(inst.apps) && inst.apps.length) {
    p.extra.append(subTable('Apps', ['app', 'state'], inst.apps.map(a => [a.name, a.state])));
  }
  if (Array.isArray(inst.shared) && inst.shared.length) {
    const rows = [];
    for (const a of inst.shared) {
      const fronts = a.fronts || [];
      const up = fronts.filter(f => f.state === 'ready').length;
      for (const i of a.instances || []) {
        const names = (i.names || []).concat(i.default ? ['(default)'] : []).join(', ');
        rows.push([a.address + (a.tls ? ' (TLS)' : ''), i.name, names,
                   i.running ? 'running, ' + i.workers_up + ' workers' : 'stopped', i.handoffs,
                   up + ' of ' + fronts.length]);
      }
    }
    p.extra.append(subTable('Shared addresses', ['address', 'instance', 'names', 'state',
                                                 'handed off', 'fronts up'], rows));
  }
}

async function refreshSeries(name, card) {
  const series = await api('/api/v1/instances/' + encodeURIComponent(name) +
                           '/series?minutes=' + SERIES_MINUTES);
  for (const spec of CHARTS) drawChart(card.parts.charts[spec.key], spec, series);
}

function renderInstances(list) {
  const box = document.getElementById('instances');
  const seen = new Set();
  if (list.length && !cards.size) clear(box);
  for (const inst of list) {
    seen.add(inst.name);
    let card = cards.get(inst.name);
    if (!card) {
      card = makeCard(inst.name);
      cards.set(inst.name, card);
      box.append(card.root);
    }
    updateCard(card, inst);
  }
  for (const [name, card] of cards) {
    if (!seen.has(name)) { card.root.remove(); cards.delete(name); }
  }
  return Promise.allSettled(list.map(i => refreshSeries(i.name, cards.get(i.name))));
}

// --- host, pools, events -------------------------------------------------------------

function renderHost(o) {
  const dl = document.getElementById('host-facts');
  clear(dl);
  const facts = [
    ['version', o.controller.version],
    ['controller pid', o.controller.pid],
    ['up since', fmt.time(o.controller.started_ms) + ' (' + fmt.duration(o.controller.uptime_ms) + ')'],
    ['host CPUs', o.host.host_cpus || '–'],
    ['reserved CPUs', o.host.reserved_cpus || 'none'],
  ];
  for (const [k, v] of facts) dl.append(el('dt', null, k), el('dd', null, v));
  const cpus = document.getElementById('cpus');
  clear(cpus);
  for (const c of o.host.cpus) {
    const holders = c.exclusive ? [c.exclusive] : c.shared;
    const box = el('span', 'cpu' + (holders.length ? ' held' : ''),
                   'CPU ' + c.cpu + ': ' + (holders.length ? holders.join(', ') +
                   (c.exclusive ? '' : ' (shared)') : 'free') + (c.in_host ? '' : ' (not in host)'));
    cpus.append(box);
  }
}

function renderTable(id, rows) {
  const tbody = document.querySelector('#' + id + ' tbody');
  clear(tbody);
  for (const row of rows) {
    const tr = el('tr');
    for (const cell of row) tr.append(el('td', null, cell));
    tbody.append(tr);
  }
}

function renderPools(pools) {
  renderTable('pools', pools.map(p => [
    p.name, p.kind, p.state, p.instance ? p.instance + (p.as && p.as !== p.name ? ' as ' + p.as : '') : '–',
    p.address, p.max_conns || '–', p.process ? p.process.restarts : '–']));
}

function renderEvents(events) {
  renderTable('events', events.map(e => [fmt.time(e.time_ms), e.instance || 'host', e.kind, e.message]));
}

async function refresh() {
  const updated = document.getElementById('updated');
  try {
    const o = await api('/api/v1/overview');
    renderHost(o);
    renderPools(o.pools);
    renderEvents(o.events);
    await renderInstances(o.instances);
    updated.textContent = 'updated ' + fmt.time(o.now_ms);
    document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
  } catch (err) {
    updated.textContent = 'cannot reach the controller: ' + err.message;
  }
  setTimeout(refresh, REFRESH_MS);
}

refresh();
