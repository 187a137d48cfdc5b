// End-to-end test of the web page: starts `cloudfit serve` on a free port, fills in the form in
// headless Chromium, submits, checks the table, the chart and a breakdown, reloads the shared
// URL and checks it reproduces the result, looks at phone width, saves screenshots, and stops
// the server with SIGTERM. Exits 77 (skipped) when Chromium or playwright-core is missing.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
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
let failed = false;
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(url);
  await page.waitForSelector('#providers input');
  check((await page.locator('#models option').count()) >= 60, 'the model picker lists the zoo');
  await page.fill('#model', 'Llama-3.1-8B');
  await page.selectOption('#kind', 'lora');
  await page.fill('#seq_len', '2048');
  await page.fill('#tokens', '5e7');
  await page.fill('#deadline_hours', '24');
  await page.click('#submit');
  await page.waitForSelector('#ranked tbody tr');
  const rows = await page.locator('#ranked tbody tr').count();
  check(rows > 0 && rows <= 20, `the ranked table shows ${rows} rows`);
  const first = await page.locator('#ranked tbody tr').first().locator('td').nth(1).innerText();
  check(first.length > 0, `the first instance is ${first}`);
  check(await page.locator('#pareto circle.point').count() >= rows, 'the chart plots every feasible offer');
  check(await page.locator('#pareto #chosen').count() === 1, 'the chart marks the chosen instance');
  check(await page.locator('#pareto polyline').count() === 1, 'the chart draws the Pareto front');
  await page.hover('#pareto circle.point >> nth=0');
  check(await page.locator('#tooltip').isVisible(), 'hovering a point shows its details');
  // Sorting by total cost, then back.
  await page.click('#ranked th:has-text("total")');
  check(await page.locator('#ranked th.sorted-asc').count() === 1, 'clicking a header sorts');
  await page.screenshot({ path: join(outDir, 'results.png'), fullPage: true });
  await page.locator('#ranked tbody tr').first().click();
  await page.waitForSelector('#breakdown:not([hidden])');
  check(await page.locator('#memory-bar span').count() === 7, 'the breakdown shows memory by component');
  check((await page.locator('#breakdown').innerText()).includes('Time per step'), 'the breakdown shows time by component');
  const modes = await page.locator('#cost-modes li').allInnerTexts();
  check(modes.length >= 1 && modes.every((m) => /^(ondemand|spot|reserved\S*) in \S+: .* h, .*USD$/.test(m)),
        `the breakdown shows cost by pricing mode (${modes.join('; ')})`);
  await page.screenshot({ path: join(outDir, 'breakdown.png'), fullPage: true });
  // The URL holds the form: a fresh page on it reproduces the result.
  const shared = page.url();
  check(shared.includes('model=Llama-3.1-8B') && shared.includes('kind=lora'), 'the state is in the URL');
  const again = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await again.goto(shared);
  await again.waitForSelector('#ranked tbody tr');
  const firstAgain = await again.locator('#ranked tbody tr').first().locator('td').nth(1).innerText();
  check(firstAgain === first, 'the shared URL reproduces the result');
  // Phone width: the form stacks and the table scrolls inside its box.
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await phone.goto(shared);
  await phone.waitForSelector('#ranked tbody tr');
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1);
  check(overflow, 'the page fits a phone-width screen');
  await phone.screenshot({ path: join(outDir, 'phone.png'), fullPage: true });
  // Online serving: a request rate and a first-token target reach the engine and the URL.
  await page.selectOption('#kind', 'serve');
  await page.fill('#model', 'Llama-2-13B');
  await page.fill('#tokens', '');
  await page.fill('#request_rate', '30');
  await page.fill('#ttft_target_ms', '1000');
  await page.click('#submit');
  await page.waitForFunction(() => document.querySelector('#status').textContent.includes('feasible'));
  check(page.url().includes('request_rate=30') && page.url().includes('ttft_target_ms=1000'),
        'serving targets are in the URL');
  const perUnit = await page.locator('#ranked tbody tr').first().innerText();
  check(perUnit.includes('1M tokens'), 'serving is priced per 1M tokens');
  // A measured throughput calibrates the estimates, and the page says so.
  await page.fill('#measured', '400 tokens/s on 1x A100-80GB');
  await page.click('#submit');
  await page.waitForFunction(() => document.querySelector('#notes').textContent.includes('calibrated from'));
  check(page.url().includes('measured=400'), 'the measurement is in the URL');
  check((await page.locator('#notes').innerText()).includes('calibrated from 400 tokens/s'),
        'a calibrated result says what it was calibrated on');
  // An invalid field is reported by the server, named, not crashed on.
  await page.fill('#tokens', 'lots');
  await page.click('#submit');
  await page.waitForSelector('#status.error');
  check((await page.locator('#status').innerText()).includes('tokens'), 'an invalid field is named');
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
