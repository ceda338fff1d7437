// Starts a real `boxoffice serve` (SQLite in a temporary directory) and its fake payment
// gateway on free loopback ports, and Debian's Chromium through playwright-core.

import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const BINARY = process.env.BOXOFFICE_BINARY || resolve(here, '../../build/boxoffice');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const JWT_SECRET = 'browser-test-secret-0123456789abcdef';
const GATEWAY_SECRET = 'browser-test-gateway-secret-0001';
const START_TIMEOUT_MS = 30000;

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => ok(port)); });
  });
}

async function waitFor(url) {
  const until = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    try { const r = await fetch(url); if (r.ok) return; } catch { /* not yet */ }
    if (Date.now() > until) throw new Error(`${url} did not answer within ${START_TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// flags: extra `serve` flags, e.g. ['--hold-ttl', '8s'].
export async function startService(flags = []) {
  const dir = mkdtempSync(join(tmpdir(), 'boxoffice-browser-'));
  const [port, gatewayPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${port}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const logs = [];
  const keep = (child, name) => {
    child.stderr.on('data', (d) => { logs.push(`${name}: ${d}`); if (logs.length > 400) logs.shift(); });
    child.stdout.on('data', () => {});
  };
  const gateway = spawn(BINARY, ['fake-gateway', '--listen', `127.0.0.1:${gatewayPort}`, '--secret', GATEWAY_SECRET]);
  keep(gateway, 'gateway');
  const startServe = () => {
    const child = spawn(BINARY, ['serve', '--listen', `127.0.0.1:${port}`, '--db', `sqlite:${join(dir, 'boxoffice.db')}`,
      '--jwt-secret', JWT_SECRET, '--gateway-url', gatewayUrl, '--gateway-secret', GATEWAY_SECRET,
      '--events-file', join(dir, 'events.jsonl'), '--io-threads', '1', '--workers', '2', ...flags]);
    keep(child, 'serve');
    return child;
  };
  let serve = startServe();
  // Ends a process: SIGTERM, then SIGKILL after 10 s.
  const end = (c) => new Promise((done) => {
    if (c.exitCode !== null || c.signalCode !== null) { done(); return; }
    const kill = setTimeout(() => c.kill('SIGKILL'), 10000);
    c.once('exit', () => { clearTimeout(kill); done(); });
    c.kill('SIGTERM');
  });
  // Stops both processes and removes the database.
  const stop = async () => {
    await Promise.all([end(serve), end(gateway)]);
    rmSync(dir, { recursive: true, force: true });
  };
  // Stops `serve` (its streams end) and starts it again on the same port and database.
  const restart = async () => {
    await end(serve);
    serve = startServe();
    await waitFor(`${url}/readyz`);
  };
  try {
    await Promise.all([waitFor(`${url}/readyz`), waitFor(`${gatewayUrl}/healthz`)]);
  } catch (e) {
    await stop();
    throw new Error(`${e.message}\n${logs.join('')}`);
  }
  // A customer's token (with `admin` or `door` scope when asked).
  const token = (customer, admin = false, door = false) => execFileSync(BINARY,
    ['token', '--jwt-secret', JWT_SECRET, '--customer', String(customer), '--ttl', '1h',
      ...(admin ? ['--admin'] : []), ...(door ? ['--door'] : [])],
    { encoding: 'utf8' }).trim();
  const adminToken = token(1, true);
  const admin = async (method, path, body) => {
    const r = await fetch(`${url}${path}`, {
      method, headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  // A showtime of `rows` (API.md Admin layout); returns its id.
  const createShowtime = async (rows, prices = { standard: { amount: 1250, currency: 'EUR' } }, extra = {}) => {
    const start = new Date(Date.now() + 86400000).toISOString().replace(/\.\d+Z$/, '.000Z');
    const r = await admin('POST', '/admin/showtimes', {
      title: 'The Browser Test', cinema: 'Test Cinema', hall: 'Screen 1', startsAt: start, rows, prices, ...extra,
    });
    return r.showtimeId;
  };
  // Holds seats through the API for `customer` (another customer than the page's).
  const holdAs = async (customer, showtimeId, seats) => {
    const r = await fetch(`${url}/showtimes/${showtimeId}/holds`, {
      method: 'POST', headers: { Authorization: `Bearer ${token(customer)}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ seats }),
    });
    if (r.status !== 201) throw new Error(`hold ${seats}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  return { url, gatewayUrl, token, admin, createShowtime, holdAs, stop, restart, logs };
}

export async function launch() {
  const args = process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [];
  return chromium.launch({ executablePath: CHROMIUM, args });
}

// A page of a fresh context (its own session storage: another customer), signed in.
export async function customerPage(browser, svc, customer, path = '/', options = {}) {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  watch(page);
  const hash = path.startsWith('/') ? path : `/${path}`;
  await page.goto(`${svc.url}/#${hash}${hash.includes('?') ? '&' : '?'}token=${svc.token(customer)}`);
  return page;
}

// Records the page's uncaught errors; done() fails the test on any.
export function watch(page) {
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  return page;
}

// Closes the pages' contexts, asserting that none threw.
export async function done(...pages) {
  const errors = pages.flatMap((p) => p.errors || []);
  for (const p of pages) await p.context().close();
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
}

export const axeSource = () => readFileSync(resolve(here, 'node_modules/axe-core/axe.min.js'), 'utf8');

// axe-core's serious and critical findings on the page as it is now (WCAG 2.1 A and AA, and
// best practice), one line each.
export async function seriousViolations(page) {
  await page.evaluate(axeSource());
  const result = await page.evaluate(() => window.axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }));
  if (result.passes.length <= 10) throw new Error('axe checked almost nothing on the page');
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')})`);
}

// Checkout as a customer does it: "Checkout" on the held seats, then the order's summary
// (the e-mail for the tickets, typed when the token carries none) and "Pay €…". With tap,
// by touch.
export async function checkout(page, { tap = false, email = 'ana@example.com' } = {}) {
  const press = (locator) => (tap ? locator.tap() : locator.click());
  await press(page.getByRole('button', { name: 'Checkout' }));
  const field = page.getByLabel('E-mail for your tickets');
  await field.waitFor({ timeout: 15000 });
  if (!(await field.inputValue())) await field.fill(email);
  await press(page.locator('.order button[type="submit"]'));
}
