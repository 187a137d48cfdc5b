// cloudfit's page: a workload form whose state lives in the URL, the ranked table (sortable),
// the time-versus-cost chart with the Pareto front, and a breakdown per candidate.
'use strict';

const WORKLOAD = ['model', 'kind', 'precision', 'batch', 'seq_len', 'tokens', 'epochs',
                  'dataset_samples', 'request_rate', 'ttft_target_ms', 'tpot_target_ms',
                  'latency_percentile', 'engine'];
const FIELDS = [...WORKLOAD, 'deadline_hours', 'budget', 'measured'];
const $ = (id) => document.getElementById(id);
let result = null;
let sort = { key: null, dir: 1 };

// Catalog names and messages reach innerHTML; an imported catalog must not be able to inject markup.
function esc(text) {
  return String(text).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function fmt(x, digits = 2) {
  if (x === null || x === undefined) return '-';
  if (typeof x !== 'number') return esc(x);
  if (Math.abs(x) >= 1000) return x.toLocaleString('en-US', { maximumFractionDigits: 0 });
  return Number(x.toFixed(digits)).toString();
}

async function load() {
  const [models, catalog] = await Promise.all([
    fetch('/v1/models').then((r) => r.json()),
    fetch('/v1/catalog').then((r) => r.json()),
  ]);
  const list = $('models');
  for (const m of models.models) {
    const o = document.createElement('option');
    o.value = m.name;
    o.label = `${m.family}, ${fmt(m.params / 1e9)} B`;
    list.appendChild(o);
  }
  const box = $('providers');
  for (const p of catalog.providers) {
    const label = document.createElement('label');
    label.className = 'inline';
    label.innerHTML = `<input type="checkbox" name="provider" value="${esc(p.provider)}" checked> ${esc(p.provider)}`;
    box.appendChild(label);
  }
  fromUrl();
}

// The URL holds the form, so a result can be shared and reproduced.
function fromUrl() {
  const q = new URLSearchParams(location.search);
  for (const f of FIELDS) if (q.has(f)) $(f).value = q.get(f);
  if (q.has('spot')) $('spot').checked = q.get('spot') === '1';
  if (q.has('providers')) {
    const wanted = q.get('providers').split(',');
    for (const c of document.querySelectorAll('input[name=provider]')) c.checked = wanted.includes(c.value);
  }
  if (q.has('model')) submit();
}

function toUrl() {
  const q = new URLSearchParams();
  for (const f of FIELDS) if ($(f).value) q.set(f, $(f).value);
  q.set('spot', $('spot').checked ? '1' : '0');
  q.set('providers', checkedProviders().join(','));
  history.replaceState(null, '', '?' + q.toString());
}

function checkedProviders() {
  return [...document.querySelectorAll('input[name=provider]:checked')].map((c) => c.value);
}

async function submit() {
  toUrl();
  const workload = {};
  for (const f of WORKLOAD) if ($(f).value) workload[f] = $(f).value;
  const options = { top: 20, providers: checkedProviders() };
  if (!$('spot').checked) options.spot = false;
  if ($('deadline_hours').value) options.deadline_hours = Number($('deadline_hours').value);
  if ($('budget').value) options.budget = Number($('budget').value);
  const request = { workload, options };
  if ($('measured').value.trim()) request.calibration = { measured: [$('measured').value.trim()] };
  $('status').textContent = 'estimating every instance...';
  $('status').className = '';
  const res = await fetch('/v1/recommend', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(request),
  });
  const body = await res.json();
  if (!res.ok) {
    $('status').textContent = body.error;
    $('status').className = 'error';
    $('results').hidden = true;
    return;
  }
  result = body;
  $('status').textContent = `${body.feasible} feasible offers of ${body.candidates_considered} hardware choices`;
  $('results').hidden = false;
  renderTable();
  renderChart();
  renderNotes();
  $('breakdown').hidden = true;
}

const COLUMNS = [
  ['#', (c, i) => i + 1],
  ['instance', (c) => c.instance_type],
  ['provider', (c) => c.provider],
  ['region', (c) => c.region],
  ['pricing', (c) => c.pricing],
  ['gpus', (c) => (c.gpu ? `${fmt(c.gpus)}x ${c.gpu}` : 'cpu')],
  ['hours', (c) => c.hours],
  ['throughput', (c) => c.throughput],
  ['memory GiB', (c) => c.memory_used_gib],
  ['per hour', (c) => c.price_per_hour],
  ['total', (c) => c.total_cost],
  ['per unit', (c) => c.cost_per_unit],
  ['bottleneck', (c) => c.bottleneck],
  ['warnings', (c) => c.warnings.length],
];

function renderTable() {
  const rows = result.ranked.map((c, i) => ({ c, i }));
  if (sort.key !== null) {
    const get = COLUMNS[sort.key][1];
    rows.sort((a, b) => {
      const x = get(a.c, a.i), y = get(b.c, b.i);
      return (x > y ? 1 : x < y ? -1 : 0) * sort.dir;
    });
  }
  const head = $('ranked').querySelector('thead');
  head.innerHTML = '<tr>' + COLUMNS.map(([name], k) => {
    const cls = sort.key === k ? (sort.dir > 0 ? 'sorted-asc' : 'sorted-desc') : '';
    return `<th data-col="${k}" class="${cls}">${name}</th>`;
  }).join('') + '</tr>';
  for (const th of head.querySelectorAll('th')) {
    th.onclick = () => {
      const k = Number(th.dataset.col);
      sort = { key: k, dir: sort.key === k ? -sort.dir : 1 };
      renderTable();
    };
  }
  const body = $('ranked').querySelector('tbody');
  body.innerHTML = '';
  for (const { c, i } of rows) {
    const tr = document.createElement('tr');
    tr.className = 'row';
    tr.dataset.index = i;
    tr.innerHTML = COLUMNS.map(([name, get], k) => {
      let v = get(c, i);
      if (name === 'throughput') v = `${fmt(c.throughput, 1)} ${esc(c.throughput_unit)}`;
      else if (name === 'memory GiB') v = `${fmt(c.memory_used_gib, 1)}/${fmt(c.memory_capacity_gib, 1)}`;
      else if (name === 'per unit') v = c.cost_per_unit === null ? '-' : `${fmt(c.cost_per_unit, 4)}/${esc(c.unit)}`;
      else if (name === 'warnings') v = c.warnings.length ? `<span class="warn">${c.warnings.length}</span>` : '';
      else if (name === '#') v = `${i + 1}${c.pareto ? '*' : ''}`;
      else v = fmt(v, 3);
      return `<td class="${k >= 6 && k <= 11 ? 'num' : ''}">${v}</td>`;
    }).join('');
    tr.onclick = () => showBreakdown(i);
    body.appendChild(tr);
  }
}

function renderChart() {
  const pts = result.points;
  const W = 720, H = 420, L = 70, R = 20, T = 20, B = 50;
  const lx = (v) => Math.log10(Math.max(v, 1e-9));
  let x0 = Math.min(...pts.map((p) => lx(p.hours))), x1 = Math.max(...pts.map((p) => lx(p.hours)));
  let y0 = Math.min(...pts.map((p) => lx(p.total_cost))), y1 = Math.max(...pts.map((p) => lx(p.total_cost)));
  if (x1 - x0 < 0.3) { x0 -= 0.15; x1 += 0.15; }
  if (y1 - y0 < 0.3) { y0 -= 0.15; y1 += 0.15; }
  const X = (h) => L + (lx(h) - x0) / (x1 - x0) * (W - L - R);
  const Y = (c) => H - B - (lx(c) - y0) / (y1 - y0) * (H - T - B);
  const front = pts.filter((p) => p.pareto).sort((a, b) => a.hours - b.hours);
  const best = result.ranked[0];
  let svg = `<svg id="pareto" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" xmlns="http://www.w3.org/2000/svg">`;
  svg += `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#333"/>`;
  svg += `<line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#333"/>`;
  for (let k = Math.ceil(x0); k <= Math.floor(x1); k++) {
    svg += `<text x="${X(10 ** k)}" y="${H - B + 16}" text-anchor="middle" font-size="11">${fmt(10 ** k, 3)} h</text>`;
  }
  for (let k = Math.ceil(y0); k <= Math.floor(y1); k++) {
    svg += `<text x="${L - 6}" y="${Y(10 ** k) + 4}" text-anchor="end" font-size="11">${fmt(10 ** k)}</text>`;
  }
  svg += `<text x="${(L + W) / 2}" y="${H - 10}" text-anchor="middle" font-size="12">time, hours (log)</text>`;
  svg += `<text x="14" y="${H / 2}" transform="rotate(-90 14 ${H / 2})" text-anchor="middle" font-size="12">total cost, ${result.currency} (log)</text>`;
  // Lines and labels under the points, and deaf to the pointer, so every point can be hovered.
  svg += `<polyline pointer-events="none" points="${front.map((p) => `${X(p.hours).toFixed(1)},${Y(p.total_cost).toFixed(1)}`).join(' ')}" fill="none" stroke="#d95f02" stroke-width="1.5"/>`;
  svg += `<circle id="chosen" pointer-events="none" cx="${X(best.hours).toFixed(1)}" cy="${Y(best.total_cost).toFixed(1)}" r="8" fill="none" stroke="#1b9e77" stroke-width="3"/>`;
  svg += `<text pointer-events="none" x="${X(best.hours) + 10}" y="${Y(best.total_cost) - 10}" fill="#1b9e77" font-size="12">chosen: ${best.instance_type}</text>`;
  pts.forEach((p, i) => {
    svg += `<circle class="point${p.pareto ? ' front' : ''}" data-i="${i}" cx="${X(p.hours).toFixed(1)}" cy="${Y(p.total_cost).toFixed(1)}" r="${p.pareto ? 5 : 4}" fill="${p.pareto ? '#d95f02' : '#7570b3'}" opacity="0.7"/>`;
  });
  svg += '</svg>';
  $('chart').innerHTML = svg;
  let tip = $('tooltip');
  if (!tip) { tip = document.createElement('div'); tip.id = 'tooltip'; tip.hidden = true; document.body.appendChild(tip); }
  for (const c of document.querySelectorAll('#pareto circle.point')) {
    const p = pts[Number(c.dataset.i)];
    c.onmouseenter = (e) => {
      tip.hidden = false;
      tip.textContent = `${p.instance_type} ${p.region} ${p.pricing}: ${fmt(p.hours)} h, ${fmt(p.total_cost)} ${result.currency}`;
      tip.style.left = `${e.clientX + 12}px`;
      tip.style.top = `${e.clientY + 12}px`;
    };
    c.onmouseleave = () => { tip.hidden = true; };
  }
}

function renderNotes() {
  const notes = [...result.notes];
  for (const [reason, n] of Object.entries(result.rejected)) notes.push(`rejected ${n}: ${reason}`);
  $('notes').innerHTML = notes.map((n) => `<p class="note">${esc(n)}</p>`).join('');
}

function showBreakdown(i) {
  const c = result.ranked[i];
  for (const tr of document.querySelectorAll('#ranked tr.row')) tr.classList.toggle('selected', Number(tr.dataset.index) === i);
  const e = c;  // each candidate carries its memory and time breakdowns
  const parts = [
    ['weights', e.memory.weights_gib, '#1f77b4'], ['gradients', e.memory.gradients_gib, '#ff7f0e'],
    ['optimizer', e.memory.optimizer_gib, '#2ca02c'], ['activations', e.memory.activations_gib, '#d62728'],
    ['KV cache', e.memory.kv_cache_gib, '#9467bd'], ['comm', e.memory.comm_buffers_gib, '#8c564b'],
    ['runtime', e.memory.runtime_gib, '#7f7f7f']];
  const cap = c.memory_capacity_gib || 1;
  let html = `<h3>${esc(c.instance_type)} in ${esc(c.region)}, ${esc(c.pricing)}</h3>`;
  html += `<h4>Memory per device: ${fmt(c.memory_used_gib, 1)} of ${fmt(cap, 1)} GiB</h4><div class="bar" id="memory-bar">`;
  for (const [name, gib, color] of parts) html += `<span title="${name} ${fmt(gib, 2)} GiB" style="width:${Math.min(100, 100 * gib / cap)}%;background:${color}"></span>`;
  html += '</div><div class="legend">' + parts.map(([n, g, col]) => `<span><i style="background:${col}"></i>${n} ${fmt(g, 2)}</span>`).join('') + '</div>';
  {
    const t = e.time;
    html += `<h4>Time per step: ${fmt(t.step_s, 4)} s</h4><ul>` +
      [['compute', t.compute_s], ['memory traffic', t.memory_s], ['communication', t.communication_s],
       ['pipeline bubble', t.bubble_s], ['optimizer', t.optimizer_s]].map(([n, v]) => `<li>${n}: ${fmt(v, 4)} s</li>`).join('') + '</ul>';
  }
  // Every pricing mode of the same machine, from all feasible points (not only the ranked top);
  // the engine keeps the best region of each mode, so the region is shown with it.
  const modes = result.points.filter((p) => p.instance_type === c.instance_type && p.nodes === c.nodes);
  html += `<h4>Cost by pricing mode</h4><ul id="cost-modes">` + modes.map((p) =>
    `<li${p.pricing === c.pricing ? ' class="selected"' : ''}>${esc(p.pricing)} in ${esc(p.region)}: ${fmt(p.hours)} h, ` +
    `${fmt(p.total_cost)} ${esc(result.currency)}</li>`).join('');
  html += '</ul><h4>Why</h4><ul>' + c.reasons.map((r) => `<li>${esc(r)}</li>`).join('') + '</ul>';
  if (c.warnings.length) html += '<h4>Warnings</h4><ul>' + c.warnings.map((w) => `<li class="warn">${esc(w)}</li>`).join('') + '</ul>';
  $('breakdown').innerHTML = html;
  $('breakdown').hidden = false;
}

$('workload').addEventListener('submit', (e) => { e.preventDefault(); submit(); });
load();
