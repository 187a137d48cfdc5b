// cloudfit's page: submits the form (form.js), and shows the answer: the ranked table (sortable,
// each row opening its breakdown beneath it), the time-versus-cost chart with the Pareto front,
// the hints of what would make a job fit, and exports of the chosen offer and of the result.
// Every answer, empty or an error, replaces the previous one.
'use strict';

(function () {
const cf = window.cloudfit;
const { esc } = cf;
const $ = (id) => document.getElementById(id);
let result = null;     // the last answer, or null after an error
let lastRequest = null;
let selected = -1;     // index into result.ranked of the row whose breakdown is open
let sort = { key: null, dir: 1 };
let generation = 0;    // answers to an older submit are dropped

function fmt(x, digits = 2) {
  if (x === null || x === undefined || Number.isNaN(x)) return '-';
  if (typeof x !== 'number') return esc(x);
  if (Math.abs(x) >= 1000) return x.toLocaleString('en-US', { maximumFractionDigits: 0 });
  return Number(x.toFixed(digits)).toString();
}

async function load() {
  try {
    const [fields, models, catalog] = await Promise.all(
      ['/v1/workload-fields', '/v1/models', '/v1/catalog'].map((u) => fetch(u).then((r) => r.json())));
    cf.buildForm(fields.fields);
    for (const m of models.models) {
      const o = document.createElement('option');
      o.value = m.name;
      o.label = `${m.family}, ${fmt(m.params / 1e9)} B`;
      $('models').appendChild(o);
    }
    for (const p of catalog.providers) {
      const label = document.createElement('label');
      label.className = 'inline';
      label.innerHTML = `<input type="checkbox" name="provider" value="${esc(p.provider)}" checked> ${esc(p.provider)}`;
      $('providers').appendChild(label);
    }
  } catch (e) {
    setStatus(`cannot reach the server: ${e.message}`, 'error');
    return;
  }
  if (cf.fromUrl()) submit();
}

function setStatus(text, cls = '') {
  $('status').textContent = text;
  $('status').className = cls;
}

function setBusy(busy) {
  $('submit').disabled = busy;
  $('submit').textContent = busy ? 'Estimating…' : 'Recommend';
  $('workload').setAttribute('aria-busy', String(busy));
  $('results').classList.toggle('stale', busy);
}

async function submit() {
  const mine = ++generation;
  cf.toUrl();
  const request = cf.request();
  setBusy(true);
  setStatus('estimating every instance…', 'busy');
  let res, body;
  try {
    res = await fetch('/v1/recommend', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(request),
    });
    body = await res.json();
  } catch (e) {
    body = { error: `no answer from the server (${e.message})` };
    res = { ok: false };
  }
  if (mine !== generation) return;
  setBusy(false);
  if (!res.ok) {
    showError(body.error || 'request failed');
    return;
  }
  lastRequest = request;
  showResult(body);
}

function showError(message) {
  result = null;
  selected = -1;
  setStatus(message, 'error');
  $('results').hidden = true;
  $('ranked').querySelector('tbody').innerHTML = '';
  $('chart').innerHTML = '';
  $('notes').innerHTML = '';
  $('hints').innerHTML = '';
}

function showResult(body) {
  result = body;
  selected = -1;
  sort = { key: null, dir: 1 };
  const n = body.feasible;
  setStatus(`${n} feasible offer${n === 1 ? '' : 's'} of ${body.candidates_considered} hardware choices`,
            n ? '' : 'empty');
  $('results').hidden = false;
  $('command').querySelector('code').textContent = cf.command(lastRequest);
  for (const b of document.querySelectorAll('[data-export]')) b.disabled = n === 0;
  $('download-csv').disabled = n === 0;
  renderHints();
  renderTable();
  renderChart();
  renderNotes();
  updateExportFor();
}

// ---- hints -------------------------------------------------------------------------------

function renderHints() {
  const hints = result.hints || [];
  const box = $('hints');
  box.innerHTML = '';
  hints.forEach((h, i) => {
    const changes = [...Object.entries(h.workload || {}), ...Object.entries(h.options || {})]
      .map(([k, v]) => `${k} = ${v}`).join(', ');
    const div = document.createElement('div');
    div.className = 'hint';
    div.innerHTML = `<p>${esc(h.note)}</p>`;
    if (changes) {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'apply-hint';
      b.dataset.hint = i;
      b.textContent = `Apply and search again (${changes})`;
      b.onclick = () => { cf.applyHint(h); submit(); };
      div.appendChild(b);
    }
    box.appendChild(div);
  });
}

// ---- the table ---------------------------------------------------------------------------

// [header, value for sorting, cell html, class]: "opt" columns are dropped on a phone.
const COLUMNS = [
  ['#', (c, i) => i, (c, i) => `${i + 1}${c.pareto ? '*' : ''}`, 'rank'],
  ['instance', (c) => c.instance_type, (c) =>
    `<span class="name">${esc(c.instance_type)}</span><span class="sub">${esc(c.provider)} · ${esc(c.region)}</span>`, 'inst'],
  ['gpus', (c) => c.gpus || 0, (c) => (c.gpu ? `${fmt(c.gpus)}× ${esc(c.gpu)}` : 'CPU') +
    (c.nodes > 1 ? ` <span class="sub">${c.nodes} nodes</span>` : '') +
    (c.replicas > 1 ? ` <span class="sub">${c.replicas} replicas</span>` : ''), 'opt'],
  ['pricing', (c) => c.pricing, (c) => esc(c.pricing), 'opt'],
  ['hours', (c) => c.hours, (c) => fmt(c.hours, 3), 'num'],
  ['throughput', (c) => c.throughput, (c) => `${fmt(c.throughput, 1)} <span class="sub">${esc(c.throughput_unit || '')}</span>`, 'num opt'],
  ['memory, GiB', (c) => c.memory_used_gib, (c) => `${fmt(c.memory_used_gib, 1)} / ${fmt(c.memory_capacity_gib, 1)}`, 'num opt'],
  ['per hour', (c) => c.price_per_hour, (c) => fmt(c.price_per_hour, 3), 'num opt'],
  ['total', (c) => c.total_cost, (c) => fmt(c.total_cost, 2), 'num'],
  ['per unit', (c) => c.cost_per_unit ?? Infinity, (c) => (c.cost_per_unit === null || c.cost_per_unit === undefined
    ? '-' : `${fmt(c.cost_per_unit, 4)} <span class="sub">per ${esc(c.unit)}</span>`), 'num opt'],
  ['bottleneck', (c) => c.bottleneck, (c) => esc(c.bottleneck || '') +
    (c.warnings.length ? ` <span class="warn" title="${esc(c.warnings.join('; '))}">⚠ ${c.warnings.length}</span>` : ''), 'opt'],
];

function renderTable() {
  const table = $('ranked');
  const head = table.querySelector('thead');
  head.innerHTML = '<tr>' + COLUMNS.map(([name, , , cls], k) => {
    const aria = sort.key === k ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none';
    const label = name === 'total' ? `total, ${esc(result.currency)}` : name === 'per hour' ? `per hour, ${esc(result.currency)}` : name;
    return `<th scope="col" class="${cls}" aria-sort="${aria}"><button type="button" data-col="${k}">${label}</button></th>`;
  }).join('') + '</tr>';
  for (const b of head.querySelectorAll('button')) {
    b.onclick = () => {
      const k = Number(b.dataset.col);
      sort = { key: k, dir: sort.key === k ? -sort.dir : 1 };
      renderTable();
      head.querySelector(`button[data-col="${k}"]`).focus();
    };
  }
  const body = table.querySelector('tbody');
  body.innerHTML = '';
  if (result.ranked.length === 0) {
    body.innerHTML = `<tr class="empty"><td colspan="${COLUMNS.length}">Nothing is feasible as asked${
      result.hints && result.hints.length ? ': see above for what would fit' : ''}.</td></tr>`;
    return;
  }
  const rows = result.ranked.map((c, i) => ({ c, i }));
  if (sort.key !== null) {
    const get = COLUMNS[sort.key][1];
    rows.sort((a, b) => {
      const x = get(a.c, a.i), y = get(b.c, b.i);
      return (x > y ? 1 : x < y ? -1 : a.i - b.i) * sort.dir;
    });
  }
  for (const { c, i } of rows) {
    const tr = document.createElement('tr');
    tr.className = 'row';
    tr.dataset.index = i;
    tr.tabIndex = 0;
    tr.setAttribute('aria-expanded', String(i === selected));
    tr.setAttribute('aria-label', `Rank ${i + 1}: ${c.instance_type} in ${c.region}, ${c.pricing}, ` +
      `${fmt(c.hours, 3)} hours, ${fmt(c.total_cost)} ${result.currency}. Show its breakdown`);
    tr.innerHTML = COLUMNS.map(([, , cell, cls]) => `<td class="${cls}">${cell(c, i)}</td>`).join('');
    tr.onclick = () => select(i);
    tr.onkeydown = (e) => {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); select(i); }
    };
    body.appendChild(tr);
    if (i === selected) body.appendChild(breakdownRow(c));
  }
}

// Opens (or closes) a row's breakdown right beneath it, and brings it into view.
function select(i) {
  selected = selected === i ? -1 : i;
  renderTable();
  updateExportFor();
  const row = $('ranked').querySelector(`tr.row[data-index="${i}"]`);
  row.focus({ preventScroll: true });
  if (selected >= 0) {
    const panel = $('breakdown');
    panel.scrollIntoView({ block: 'nearest' });
    row.scrollIntoView({ block: 'nearest' });
  }
}

function breakdownRow(c) {
  const tr = document.createElement('tr');
  tr.className = 'detail';
  const td = document.createElement('td');
  td.colSpan = COLUMNS.length;
  td.innerHTML = `<div id="breakdown" role="region" aria-label="Breakdown of ${esc(c.instance_type)}">${breakdown(c)}</div>`;
  tr.appendChild(td);
  return tr;
}

function breakdown(c) {
  const m = c.memory || {};
  const parts = [
    ['weights', m.weights_gib, '#1f77b4'], ['gradients', m.gradients_gib, '#ff7f0e'],
    ['optimizer', m.optimizer_gib, '#2ca02c'], ['activations', m.activations_gib, '#d62728'],
    ['KV cache', m.kv_cache_gib, '#9467bd'], ['comm', m.comm_buffers_gib, '#8c564b'],
    ['runtime', m.runtime_gib, '#7f7f7f']];
  const cap = c.memory_capacity_gib || 1;
  let html = `<h3>${esc(c.instance_type)} in ${esc(c.region)}, ${esc(c.pricing)}</h3><div class="cols"><div>`;
  html += `<h4>Memory per device: ${fmt(c.memory_used_gib, 1)} of ${fmt(cap, 1)} GiB</h4>`;
  html += `<div class="bar" id="memory-bar" role="img" aria-label="${parts.map(([n, g]) => `${n} ${fmt(g || 0, 2)} GiB`).join(', ')}">`;
  for (const [name, gib, color] of parts) {
    html += `<span title="${name} ${fmt(gib || 0, 2)} GiB" style="width:${Math.min(100, 100 * (gib || 0) / cap)}%;background:${color}"></span>`;
  }
  html += '</div><div class="legend">' + parts.map(([n, g, col]) => `<span><i style="background:${col}"></i>${n} ${fmt(g || 0, 2)}</span>`).join('') + '</div>';
  const t = c.time || {};
  html += `<h4>Time per step: ${fmt(t.step_s, 4)} s</h4><ul>` +
    [['compute', t.compute_s], ['memory traffic', t.memory_s], ['kernel launches', t.launch_s], ['communication', t.communication_s],
     ['pipeline bubble', t.bubble_s], ['optimizer', t.optimizer_s]].map(([n, v]) => `<li>${n}: ${fmt(v, 4)} s</li>`).join('') + '</ul>';
  // Every pricing mode of the same machine, from all feasible points (not only the ranked top);
  // the engine keeps the best region of each mode, so the region is shown with it.
  const modes = (result.points || []).filter((p) => p.instance_type === c.instance_type && p.nodes === c.nodes);
  html += '</div><div><h4>Cost by pricing mode</h4><ul id="cost-modes">' + modes.map((p) =>
    `<li${p.pricing === c.pricing ? ' class="selected"' : ''}>${esc(p.pricing)} in ${esc(p.region)}: ${fmt(p.hours)} h, ` +
    `${fmt(p.total_cost)} ${esc(result.currency)}</li>`).join('') + '</ul>';
  html += '<h4>Why</h4><ul>' + c.reasons.map((r) => `<li>${esc(r)}</li>`).join('') + '</ul>';
  if (c.warnings.length) html += '<h4>Warnings</h4><ul>' + c.warnings.map((w) => `<li class="warn">${esc(w)}</li>`).join('') + '</ul>';
  return html + '</div></div>';
}

// ---- the chart ---------------------------------------------------------------------------

function renderChart() {
  const pts = (result.points || []).filter((p) => p.hours > 0 && p.total_cost > 0);
  if (pts.length === 0) {
    $('chart').innerHTML = '<p class="empty-chart">No feasible offers to plot.</p>';
    return;
  }
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
  let svg = `<svg id="pareto" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="Time versus total cost of ${pts.length} feasible offers, log scales">`;
  svg += `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#333"/>`;
  svg += `<line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#333"/>`;
  for (let k = Math.ceil(x0); k <= Math.floor(x1); k++) {
    svg += `<text x="${X(10 ** k)}" y="${H - B + 16}" text-anchor="middle" font-size="11">${fmt(10 ** k, 3)} h</text>`;
  }
  for (let k = Math.ceil(y0); k <= Math.floor(y1); k++) {
    svg += `<text x="${L - 6}" y="${Y(10 ** k) + 4}" text-anchor="end" font-size="11">${fmt(10 ** k)}</text>`;
  }
  svg += `<text x="${(L + W) / 2}" y="${H - 10}" text-anchor="middle" font-size="12">time, hours (log)</text>`;
  svg += `<text x="14" y="${H / 2}" transform="rotate(-90 14 ${H / 2})" text-anchor="middle" font-size="12">total cost, ${esc(result.currency)} (log)</text>`;
  // Lines and labels under the points, and deaf to the pointer, so every point can be hovered.
  svg += `<polyline pointer-events="none" points="${front.map((p) => `${X(p.hours).toFixed(1)},${Y(p.total_cost).toFixed(1)}`).join(' ')}" fill="none" stroke="#d95f02" stroke-width="1.5"/>`;
  if (best && best.hours > 0 && best.total_cost > 0) {
    svg += `<circle id="chosen" pointer-events="none" cx="${X(best.hours).toFixed(1)}" cy="${Y(best.total_cost).toFixed(1)}" r="8" fill="none" stroke="#1b9e77" stroke-width="3"/>`;
    svg += `<text pointer-events="none" x="${X(best.hours) + 10}" y="${Y(best.total_cost) - 10}" fill="#1b9e77" font-size="12">chosen: ${esc(best.instance_type)}</text>`;
  }
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
  const hinted = new Set((result.hints || []).map((h) => h.note));
  const notes = result.notes.filter((n) => !hinted.has(n));
  for (const [reason, n] of Object.entries(result.rejected || {})) notes.push(`rejected ${n}: ${reason}`);
  $('notes').innerHTML = notes.map((n) => `<p class="note">${esc(n)}</p>`).join('');
}

// ---- exports -----------------------------------------------------------------------------

function chosenRank() { return (selected >= 0 ? selected : 0) + 1; }

function updateExportFor() {
  const c = result && result.ranked[chosenRank() - 1];
  $('export-for').textContent = c ? `Export rank ${chosenRank()} (${c.instance_type}):` : 'Nothing to export.';
}

function download(name, type, text) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type }));
  a.download = name;
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

async function exportOffer(format, button) {
  const body = { ...lastRequest, format, rank: chosenRank() };
  button.disabled = true;
  try {
    const res = await fetch('/v1/export', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const out = await res.json();
    if (!res.ok) { setStatus(`export: ${out.error}`, 'error'); return; }
    download(out.filename, 'text/plain', out.text);
    setStatus(`wrote ${out.filename}`);
  } catch (e) {
    setStatus(`export: no answer from the server (${e.message})`, 'error');
  } finally {
    button.disabled = false;
  }
}

// CSV as the command line writes it: a header and rows, numbers without units (units in the header).
function csv() {
  const cur = result.currency;
  const cols = [['rank', (c, i) => i + 1], ['instance_type', (c) => c.instance_type], ['provider', (c) => c.provider],
    ['region', (c) => c.region], ['pricing', (c) => c.pricing], ['nodes', (c) => c.nodes], ['replicas', (c) => c.replicas],
    ['gpu', (c) => c.gpu], ['gpus', (c) => c.gpus], ['hours', (c) => c.hours], ['throughput', (c) => c.throughput],
    ['throughput_unit', (c) => c.throughput_unit], ['memory_used_gib', (c) => c.memory_used_gib],
    ['memory_capacity_gib', (c) => c.memory_capacity_gib], [`price_per_hour_${cur}`, (c) => c.price_per_hour],
    [`total_cost_${cur}`, (c) => c.total_cost], [`cost_per_unit_${cur}`, (c) => c.cost_per_unit], ['unit', (c) => c.unit],
    ['bottleneck', (c) => c.bottleneck], ['pareto', (c) => c.pareto], ['warnings', (c) => c.warnings.join('; ')]];
  const cell = (v) => {
    if (v === null || v === undefined) return '';
    const s = String(v);
    return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [cols.map(([h]) => h).join(','), ...result.ranked.map((c, i) => cols.map(([, get]) => cell(get(c, i))).join(','))].join('\n') + '\n';
}

async function copyCommand() {
  const text = $('command').textContent;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard API (an insecure origin): select the text, so Ctrl+C copies it.
    const range = document.createRange();
    range.selectNodeContents($('command'));
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    document.execCommand('copy');
  }
  setStatus('copied the command line');
}

for (const b of document.querySelectorAll('[data-export]')) b.onclick = () => exportOffer(b.dataset.export, b);
$('download-csv').onclick = () => download('cloudfit-recommend.csv', 'text/csv', csv());
$('download-json').onclick = () => download('cloudfit-recommend.json', 'application/json', JSON.stringify(result, null, 2) + '\n');
$('copy-command').onclick = copyCommand;
$('workload').addEventListener('submit', (e) => { e.preventDefault(); if (!$('submit').disabled) submit(); });
load();
})();
