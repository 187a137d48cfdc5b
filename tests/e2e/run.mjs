// End-to-end test of the web page: starts `cloudfit serve` on a free port and drives the page in
// headless Chromium: the form against the parser's field table, every workload kind, the
// loading state, the table at 1,400 px and on a phone, a row's breakdown in view, the keyboard,
// empty and error answers replacing the previous one, the hints of what would fit applied with
// one click, every export and download, and the copied command run for real. Screenshots go to
// the directory given (the build tree's e2e-screenshots). Exits 77 (skipped) when Chromium or
// playwright-core is missing.
import { spawn, execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SKIP = 77;
const binary = process.argv[2];
const outDir = process.argv[3] || 'e2e-screenshots';
const chromium = '/usr/bin/chromium';
const here = dirname(fileURLToPath(import.meta.url));
if (!existsSync(chromium)) {
  console.log('SKIP: /usr/bin/chromium is not installed (apt-get install chromium)');
  process.exit(SKIP);
}
let playwright;
try {
  playwright = await import(join(here, 'node_modules', 'playwright-core', 'index.mjs'));
} catch {
  console.log('SKIP: playwright-core is not installed (npm install --prefix tests/e2e)');
  process.exit(SKIP);
}
mkdirSync(outDir, { recursive: true });

function fail(message) {
  console.error('FAIL: ' + message);
  process.exitCode = 1;
  throw new Error(message);
}
function check(cond, message) { if (!cond) fail(message); console.log('ok - ' + message); }

const server = spawn(binary, ['serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/serving (http:\/\/[\d.]+:\d+\/)/);
    if (m) resolve(m[1]);
  });
  server.on('exit', (code) => reject(new Error('server exited ' + code)));
  setTimeout(() => reject(new Error('server did not start')), 10000);
});

const browser = await playwright.chromium.launch({
  executablePath: chromium,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const pageErrors = [];
const foreign = [];
async function newPage(width, height, extra = {}) {
  const context = await browser.newContext({ viewport: { width, height }, acceptDownloads: true, ...extra });
  const page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  // A 400 the test provokes is logged by Chromium too; a missing file (404) is an error.
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) pageErrors.push(m.text()); });
  page.on('response', (r) => { if (r.status() === 404) pageErrors.push(`404 for ${r.url()}`); });
  // Offline: nothing but the server itself (and the page's own blobs) is ever asked for.
  page.on('request', (r) => { if (!r.url().startsWith(url) && !r.url().startsWith('blob:')) foreign.push(r.url()); });
  return page;
}
const shot = (page, name) => page.screenshot({ path: join(outDir, name), fullPage: true });
const statusText = (page) => page.locator('#status').innerText();
// Submits and waits for the answer (the button comes back); returns the status line.
async function submit(page) {
  await page.click('#submit');
  await page.waitForFunction(() => !document.querySelector('#submit').disabled &&
                                   document.querySelector('#status').className !== 'busy');
  return statusText(page);
}
const feasible = (status) => Number((/^(\d+) feasible/.exec(status) || [])[1] ?? -1);
async function fill(page, fields) {
  for (const [id, value] of Object.entries(fields)) {
    const el = page.locator('#' + id);
    if (await el.evaluate((e) => e.tagName === 'SELECT')) await el.selectOption(value);
    else await el.fill(value);
  }
}
async function clearWorkload(page) {
  await page.evaluate(() => { for (const f of window.cloudfit.fields.values()) f.input.value = ''; });
  for (const id of ['deadline_hours', 'budget', 'max_nodes', 'measured']) await page.fill('#' + id, '');
}
async function downloadOf(page, selector) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return { name: d.suggestedFilename(), text: readFileSync(await d.path(), 'utf8') };
}
function run(command) {
  return new Promise((resolve) => execFile('sh', ['-c', command], { maxBuffer: 1 << 26 },
    (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr })));
}

// A workload of each kind the page offers, small enough to answer quickly, with a field only
// that kind shows.
const EXAMPLES = {
  train: { fields: { model: 'ResNet-50', epochs: '1', dataset_samples: '1.28e6' }, own: 'optimizer' },
  lora: { fields: { model: 'Llama-3.1-8B', tokens: '5e7', seq_len: '2048' }, own: 'lora_rank' },
  qlora: { fields: { model: 'Llama-3.1-8B', tokens: '5e7' }, own: 'lora_targets' },
  inference: { fields: { model: 'Llama-3.1-8B', tokens: '1e8' }, own: 'diffusion_steps' },
  serve: { fields: { model: 'Llama-2-13B', request_rate: '5', ttft_target_ms: '1000' }, own: 'request_rate' },
  render: { fields: { frames: '2400', benchmark_score: '5000', scene_memory_gib: '20' }, own: 'frames' },
  realtime: { fields: { streams: '10' }, own: 'fps' },
  cad: { fields: { streams: '5' }, own: 'codec' },
  preprocess: { fields: { data_gb: '800' }, own: 'data_gb' },
  'classic-ml': { fields: { rows: '1e8', features: '100' }, own: 'rows' },
};

let failed = false;
try {
  const page = await newPage(1400, 900);
  await page.goto(url);
  await page.waitForSelector('#providers input');
  check((await page.locator('#models option').count()) >= 60, 'the model picker lists the zoo');

  // ---- The form is the parser's field table. ----
  const table = await (await fetch(url + 'v1/workload-fields')).json();
  const form = await page.evaluate(() => ({
    inputs: [...document.querySelectorAll('#workload [data-workload]')].map((e) => e.id),
    kinds: [...document.querySelectorAll('#kind option')].map((o) => o.value),
    aliases: window.cloudfit.ALIASES,
    skipped: window.cloudfit.NOT_ON_FORM,
  }));
  const missing = table.fields.map((f) => f.name).filter((n) => !form.inputs.includes(n) && !form.skipped[n]);
  check(missing.length === 0, `every workload field the parser accepts is on the form (${table.fields.length}; missing: ${missing.join(', ') || 'none'})`);
  const kindField = table.fields.find((f) => f.name === 'kind');
  const accepted = /^one of (.*)$/.exec(kindField.accepted)[1].split(', ');
  const unoffered = accepted.filter((k) => !form.kinds.includes(form.aliases[k] || k));
  check(unoffered.length === 0, `every kind the parser accepts is offered (${form.kinds.join(', ')}; missing: ${unoffered.join(', ') || 'none'})`);
  check(form.kinds.every((k) => accepted.includes(k)), 'the page offers no kind the parser refuses');
  const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, select, button')]
    .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim())
    .map((e) => e.id || e.name || e.outerHTML.slice(0, 60)));
  check(unlabelled.length === 0, `every control has a label (${unlabelled.join(', ') || 'all'})`);

  // ---- Every kind, with its own fields, answered by the server. ----
  for (const kind of form.kinds) {
    const ex = EXAMPLES[kind];
    check(ex !== undefined, `the test has an example of kind ${kind}`);
    await clearWorkload(page);
    await page.selectOption('#kind', kind);
    check(await page.locator('#' + ex.own).isVisible(), `${kind} shows its own field ${ex.own}`);
    const others = Object.values(EXAMPLES).map((e) => e.own).filter((f) => f !== ex.own &&
      !(form.kinds.includes(kind) && EXAMPLES[kind].own === f));
    const shown = [];
    for (const f of others) {
      const kinds = await page.evaluate((n) => window.cloudfit.fields.get(n)?.kinds, f);
      if (kinds && !kinds.includes(kind) && await page.locator('#' + f).isVisible()) shown.push(f);
    }
    check(shown.length === 0, `${kind} hides the fields of other kinds (${shown.join(', ') || 'none shown'})`);
    await fill(page, ex.fields);
    const status = await submit(page);
    check(feasible(status) > 0, `${kind}: ${status}`);
    check(await page.locator('#ranked tbody tr.row').count() > 0, `${kind}: the table shows its offers`);
    await shot(page, `kind-${kind}.png`);
  }

  // ---- The main scenario: LoRA, with a deadline. ----
  await clearWorkload(page);
  await page.selectOption('#kind', 'lora');
  await fill(page, { model: 'Llama-3.1-8B', seq_len: '2048', tokens: '5e7', deadline_hours: '24' });
  // The loading state: the answer is held back, so the page is seen waiting.
  let release;
  const held = new Promise((r) => { release = r; });
  await page.route('**/v1/recommend', async (route) => { await held; await route.continue(); });
  await page.click('#submit');
  await page.waitForSelector('#status.busy');
  check(await page.locator('#submit').isDisabled(), 'while loading, the button is disabled');
  check((await page.locator('#workload').getAttribute('aria-busy')) === 'true', 'while loading, the form is aria-busy');
  await page.keyboard.press('Enter');  // a second submit is ignored while one is in flight
  await shot(page, 'loading.png');
  release();
  await page.waitForFunction(() => !document.querySelector('#submit').disabled);
  await page.unroute('**/v1/recommend');
  const rows = await page.locator('#ranked tbody tr.row').count();
  check(rows > 0 && rows <= 20, `the ranked table shows ${rows} rows`);
  const first = await page.locator('#ranked tbody tr.row').first().locator('td .name').innerText();
  check(first.length > 0, `the first instance is ${first}`);
  check(await page.locator('#pareto circle.point').count() >= rows, 'the chart plots every feasible offer');
  check(await page.locator('#pareto #chosen').count() === 1, 'the chart marks the chosen instance');
  check(await page.locator('#pareto polyline').count() === 1, 'the chart draws the Pareto front');
  await page.hover('#pareto circle.point >> nth=0');
  check(await page.locator('#tooltip').isVisible(), 'hovering a point shows its details');

  // The table fits 1,400 px without sideways scrolling, also with a breakdown open.
  const fits = () => page.evaluate(() => {
    const wrap = document.querySelector('.table-wrap');
    return wrap.scrollWidth <= wrap.clientWidth + 1 && document.documentElement.scrollWidth <= window.innerWidth + 1;
  });
  check(await fits(), 'the table fits 1,400 px without horizontal scrolling');
  await shot(page, 'results-1400.png');

  // Sorting by total cost, with the header's button.
  await page.click('#ranked th button:has-text("total")');
  check(await page.locator('#ranked th[aria-sort="ascending"]').count() === 1, 'clicking a header sorts');
  const totals = await page.locator('#ranked tbody tr.row td:nth-child(9)').allInnerTexts();
  const numbers = totals.map((t) => Number(t.replace(/,/g, '')));
  check(numbers.every((x, i) => i === 0 || numbers[i - 1] <= x), `sorted by total: ${numbers.slice(0, 5).join(', ')}...`);
  await page.click('#ranked th button:has-text("#")');

  // A row's breakdown opens beneath it, in view.
  const last = page.locator('#ranked tbody tr.row').last();
  await last.click();
  await page.waitForSelector('#breakdown');
  const inView = () => page.evaluate(() => {
    const r = document.querySelector('#breakdown').getBoundingClientRect();
    return r.top >= 0 && r.top < window.innerHeight && r.bottom > 0;
  });
  check(await inView(), 'the breakdown of the last row is in view');
  check(await last.getAttribute('aria-expanded') === 'true', 'the selected row says it is expanded');
  check(await page.locator('#memory-bar span').count() === 7, 'the breakdown shows memory by component');
  check((await page.locator('#breakdown').innerText()).includes('Time per step'), 'the breakdown shows time by component');
  const modes = await page.locator('#cost-modes li').allInnerTexts();
  check(modes.length >= 1 && modes.every((m) => /^(ondemand|spot|reserved\S*) in \S+: .* h, .*USD$/.test(m)),
        `the breakdown shows cost by pricing mode (${modes.join('; ')})`);
  check(await fits(), 'with a breakdown open, the table still fits 1,400 px');
  await shot(page, 'breakdown.png');

  // ---- Keyboard: tab order, Enter and Space on rows, visible focus. ----
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.focus('#kind');
  const order = [];
  for (let i = 0; i < 250; i++) {
    await page.keyboard.press('Tab');
    const f = await page.evaluate(() => {
      const e = document.activeElement;
      const r = e.getBoundingClientRect();
      return { id: e.id || e.className || e.tagName, visible: r.width > 0 && r.height > 0, row: e.matches('tr.row') };
    });
    order.push(f);
    if (f.row) break;
  }
  const at = (id) => order.findIndex((f) => f.id === id);
  check(order.every((f) => f.visible), 'Tab reaches only visible controls (hidden fields are skipped)');
  check(at('model') >= 0 && at('model') < at('deadline_hours') && at('deadline_hours') < at('submit') &&
        at('submit') < order.length - 1 && order[order.length - 1].row,
        `Tab goes through the workload, the constraints, the button, then the rows (${order.length} stops)`);
  const row = page.locator('#ranked tbody tr.row').nth(1);
  await row.focus();
  const outline = await row.evaluate((e) => getComputedStyle(e).outlineStyle);
  await page.keyboard.press('Enter');
  check(await page.locator('#ranked tbody tr.row').nth(1).getAttribute('aria-expanded') === 'true', 'Enter on a row opens its breakdown');
  check(await inView(), 'the breakdown opened by keyboard is in view');
  check(await page.evaluate(() => document.activeElement.matches('tr.row[data-index="1"]')), 'focus stays on the row');
  check(outline !== 'none', `a focused row shows its focus (outline ${outline})`);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press(' ');
  check(await page.locator('#ranked tbody tr.row[data-index="1"]').getAttribute('aria-expanded') === 'false', 'Space on the open row closes it');
  await page.locator('#ranked tbody tr.row').nth(1).focus();
  await page.keyboard.press(' ');
  check(await page.locator('#ranked tbody tr.row').nth(1).getAttribute('aria-expanded') === 'true', 'Space on a row opens it');
  await shot(page, 'keyboard.png');

  // ---- Exports of the selected offer (rank 2) and of the whole result. ----
  const second = await page.locator('#ranked tbody tr.row').nth(1).locator('td .name').innerText();
  check((await page.locator('#export-for').innerText()).includes(second), 'the toolbar names the offer it exports');
  const sky = await downloadOf(page, '[data-export="skypilot"]');
  check(sky.name.endsWith('.sky.yaml') && sky.text.includes('resources:') && sky.text.includes(`instance_type: ${second}`),
        `SkyPilot YAML of the selected offer (${sky.name})`);
  const tf = await downloadOf(page, '[data-export="terraform"]');
  check(tf.name.endsWith('.tf') && /resource "\w+" "/.test(tf.text) && tf.text.includes(second), `Terraform of the selected offer (${tf.name})`);
  const k8s = await downloadOf(page, '[data-export="kubernetes"]');
  check(k8s.name.endsWith('.k8s.yaml') && /kind: Job/.test(k8s.text) && /nvidia.com\/gpu/.test(k8s.text),
        `a Kubernetes Job requesting GPUs (${k8s.name})`);
  const csv = await downloadOf(page, '#download-csv');
  const lines = csv.text.trim().split('\n');
  const header = lines[0].split(',');
  check(header[0] === 'rank' && header.includes('total_cost_USD') && lines.length === rows + 1,
        `CSV: a header and ${lines.length - 1} rows`);
  const hoursAt = header.indexOf('hours');
  check(lines.slice(1).every((l) => Number.isFinite(Number(l.split(',')[hoursAt]))), 'CSV numbers carry no units');
  const json = JSON.parse((await downloadOf(page, '#download-json')).text);
  check(json.schema === 'cloudfit.recommend/v2' && json.ranked[0].instance_type === first, 'JSON: the recommendation as the API gave it');

  // ---- Copy as command: the same answer from the command line. ----
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
  await page.click('#copy-command');
  await page.waitForFunction(() => document.querySelector('#status').textContent.includes('copied'));
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  check(copied.startsWith('cloudfit recommend ') && copied === (await page.locator('#command').innerText()),
        `the copied command is the one shown: ${copied}`);
  const cli = await run(copied.replace(/^cloudfit /, `'${binary}' `) + ' --json');
  check(cli.code === 0, `the copied command runs (${cli.stderr.trim().slice(0, 200)})`);
  const cliFirst = JSON.parse(cli.stdout).ranked[0];
  check(cliFirst.instance_type === first && Math.abs(cliFirst.total_cost - json.ranked[0].total_cost) < 1e-6 * json.ranked[0].total_cost,
        `the command line ranks ${cliFirst.instance_type} first at the same cost`);

  // ---- The URL holds the form: a fresh page on it reproduces the result. ----
  const shared = page.url();
  check(shared.includes('model=Llama-3.1-8B') && shared.includes('kind=lora'), 'the state is in the URL');
  const again = await newPage(1280, 900);
  await again.goto(shared);
  await again.waitForSelector('#ranked tbody tr.row');
  check(await again.locator('#ranked tbody tr.row').first().locator('td .name').innerText() === first, 'the shared URL reproduces the result');

  // ---- A phone: rank, instance, time and total cost, and nothing wider than the screen. ----
  const phone = await newPage(390, 844, { isMobile: true, hasTouch: true });
  await phone.goto(shared);
  await phone.waitForSelector('#ranked tbody tr.row');
  const heads = (await phone.locator('#ranked thead th').evaluateAll((ths) => ths.filter((t) => t.offsetParent !== null).map((t) => t.innerText.trim())));
  check(heads.length === 4 && heads[0] === '#' && heads[1] === 'instance' && heads[2] === 'hours' && heads[3].startsWith('total'),
        `a phone shows ${heads.join(' | ')}`);
  check(await phone.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1 &&
        [...document.querySelectorAll('.table-wrap')].every((w) => w.scrollWidth <= w.clientWidth + 1)),
        'the page and the table fit a 390 px screen');
  await phone.locator('#ranked tbody tr.row').first().tap();
  await phone.waitForSelector('#breakdown');
  check(await phone.evaluate(() => { const r = document.querySelector('#breakdown').getBoundingClientRect(); return r.top < window.innerHeight && r.bottom > 0; }),
        'a tapped row shows its breakdown in view on a phone');
  await shot(phone, 'phone.png');

  // ---- Nothing feasible: the old rows go, the chart copes, the hint applies in one click. ----
  await clearWorkload(page);
  await page.selectOption('#kind', 'train');
  await fill(page, { model: 'ResNet-50', epochs: '90', dataset_samples: '1.28e6', deadline_hours: '0.01' });
  let status = await submit(page);
  check(status.startsWith('0 feasible'), `an impossible deadline: ${status}`);
  check(await page.locator('#ranked tbody tr.row').count() === 0 && await page.locator('#ranked tbody tr.empty').count() === 1,
        'no rows of the previous answer stay under "0 feasible offers"');
  check(await page.locator('#pareto').count() === 0 && (await page.locator('#chart').innerText()).includes('No feasible offers'),
        'the chart says there is nothing to plot');
  check(await page.locator('[data-export]:not([disabled])').count() === 0, 'nothing to export, so the export buttons are disabled');
  const hint = page.locator('#hints .hint').first();
  check((await hint.innerText()).includes('deadline'), `the hint says what would fit: ${(await hint.innerText()).split('\n')[0]}`);
  await shot(page, 'nothing-feasible.png');
  await hint.locator('button.apply-hint').click();
  await page.waitForFunction(() => /^[1-9]\d* feasible/.test(document.querySelector('#status').textContent));
  const relaxed = Number(await page.inputValue('#deadline_hours'));
  check(relaxed > 0.01 && await page.locator('#ranked tbody tr.row').count() > 0, `one click on the hint sets the deadline to ${relaxed} h and finds offers`);
  await shot(page, 'hint-applied.png');

  // A model too large to train as asked: the hint changes the workload itself.
  await clearWorkload(page);
  await page.selectOption('#kind', 'train');
  await fill(page, { model: 'Llama-3.1-405B', tokens: '1e8' });
  status = await submit(page);
  check(status.startsWith('0 feasible'), `full training of a 405B model on one node: ${status}`);
  const memoryHint = page.locator('#hints .hint button.apply-hint').first();
  check(await memoryHint.count() === 1, `a hint of what would fit: ${(await page.locator('#hints').innerText()).split('\n')[0]}`);
  await memoryHint.click();
  await page.waitForFunction(() => /^[1-9]\d* feasible/.test(document.querySelector('#status').textContent));
  check(['lora', 'qlora', 'train'].includes(await page.inputValue('#kind')) && (await page.inputValue('#recompute')) === 'full',
        `one click applies it (kind ${await page.inputValue('#kind')}, recompute full) and finds offers`);

  // ---- Serving, calibration, and an error replacing the result. ----
  await clearWorkload(page);
  await page.selectOption('#kind', 'serve');
  await fill(page, { model: 'Llama-2-13B', request_rate: '30', ttft_target_ms: '1000' });
  await submit(page);
  check(page.url().includes('request_rate=30') && page.url().includes('ttft_target_ms=1000'), 'serving targets are in the URL');
  check((await page.locator('#ranked tbody tr.row').first().innerText()).includes('1M tokens'), 'serving is priced per 1M tokens');
  const serveK8s = await downloadOf(page, '[data-export="kubernetes"]');
  check(/kind: Deployment/.test(serveK8s.text) && /HorizontalPodAutoscaler/.test(serveK8s.text), 'a serving plan exports a Deployment with an autoscaler');
  await page.fill('#measured', '400 tokens/s on 1x A100-80GB');
  await submit(page);
  check(page.url().includes('measured=400'), 'the measurement is in the URL');
  check((await page.locator('#notes').innerText()).includes('calibrated from 400 tokens/s'), 'a calibrated result says what it was calibrated on');
  check((await page.locator('#command').innerText()).includes("--measured '400 tokens/s on 1x A100-80GB'"), 'the command carries the measurement');
  await page.selectOption('#kind', 'lora');
  await page.fill('#tokens', 'lots');
  status = await submit(page);
  check(status.includes('tokens') && await page.locator('#status.error').count() === 1, `an invalid field is named: ${status}`);
  check(await page.locator('#results').isHidden() && await page.locator('#ranked tbody tr').count() === 0,
        'an error replaces the previous result');
  await shot(page, 'error.png');

  check(pageErrors.length === 0, `no script errors (${pageErrors.join('; ') || 'none'})`);
  check(foreign.length === 0, `the page asks nothing of other hosts (${foreign.join(', ') || 'none'})`);
} catch (e) {
  failed = true;
  console.error(e);
} finally {
  await browser.close();
  server.kill('SIGTERM');
  const code = await new Promise((resolve) => server.on('exit', (c) => resolve(c)));
  if (code !== 0) { console.error('FAIL: server exited ' + code + ' on SIGTERM'); failed = true; }
  else console.log('ok - the server stops cleanly on SIGTERM');
}
process.exit(failed || process.exitCode ? 1 : 0);
